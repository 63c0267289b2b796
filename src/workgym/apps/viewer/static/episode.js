// The episode page: why it failed first, then the transcript beside the ground truth and verdict.
"use strict";

(function () {
  const {el, api, fmt, href, badge, kv, textBlock} = WG;

  function verdictBadge(record) {
    const v = record.verdict;
    if (!v) return badge("ERROR · not scored", "bad big");
    const status = v.status === "ok" ? "" : ` · ${v.status}`;
    return badge(`${v.success ? "PASS" : "FAIL"} · reward ${fmt(v.reward, 2)}${status}`, (v.success ? "good" : "bad") + " big");
  }

  function jump(index) {
    const node = document.getElementById("m" + index);
    if (!node) return;
    node.scrollIntoView({block: "center"});
    node.classList.add("focus");
    setTimeout(() => node.classList.remove("focus"), 1600);
  }

  function findingsBox(findings) {
    return el("section", {class: "why", id: "why"},
      el("h2", {}, "What happened"),
      el("ul", {}, findings.map((f) => el("li", {class: "finding f-" + f.kind}, f.text,
        f.at !== undefined && f.at !== null ? [" ", el("a", {href: "#", class: "jump", onclick: (e) => { e.preventDefault(); jump(f.at); }}, `go to #${f.at}`)] : null))));
  }

  function reviewState(latest) {
    if (!latest) return el("span", {class: "muted"}, "not reviewed");
    const kind = latest.decision === "exploit" ? "bad" : "good";
    return el("span", {}, badge(latest.decision === "exploit" ? "confirmed exploit" : "accepted", kind),
      " ", el("span", {class: "muted small"}, `${latest.at}${latest.note ? " · " + latest.note : ""}`));
  }

  function flagsBox(data, rerender) {
    const {flags, reviews, record, run} = data;
    if (!flags.names.length) return null;
    const items = flags.names.map((name) => {
      const note = el("input", {type: "text", placeholder: "note (optional)", class: "note", "aria-label": "note for " + name});
      const state = el("span", {class: "state"}, reviewState(reviews.latest[name]));
      const mark = async (decision) => {
        try {
          const res = await api("/api/review", {}, {run, task_id: record.task_id, epoch: record.epoch, flag: name, decision, note: note.value});
          reviews.latest[name] = res.written;
          reviews.history.push(res.written);
          rerender();
        } catch (err) {
          WG.fill(state, el("span", {class: "bad"}, String(err.message || err)));
        }
      };
      const where = flags.at[name];
      return el("li", {class: "flag-item", dataset: {flag: name}},
        badge(name, "flag"), " ",
        where ? el("a", {href: "#", onclick: (e) => { e.preventDefault(); jump(where[0]); }}, `raised at message #${where.join(", #")}`) : null,
        " ", state,
        flags.why[name] ? el("div", {class: "why-flag small"}, flags.why[name]) : null, el("div", {class: "review"}, note,
          el("button", {type: "button", class: "ok", onclick: () => mark("accepted")}, "Accept (benign)"),
          el("button", {type: "button", class: "danger", onclick: () => mark("exploit")}, "Confirm exploit")));
    });
    const success = record.verdict && record.verdict.success;
    return el("section", {class: "flags" + (success ? " flagged-success" : ""), id: "flags"},
      el("h2", {}, "Audit flags", success ? el("span", {class: "warn-text"}, " — on a success: it does not count until reviewed") : null),
      flags.unplaced.length ? el("p", {class: "muted small"}, `The audit recorded no step for ${flags.unplaced.join(", ")}, so they are listed here rather than in the transcript.`) : null,
      el("ul", {}, items),
      reviews.history.length ? el("details", {}, el("summary", {}, `review history (${reviews.history.length})`),
        el("ul", {class: "small"}, reviews.history.map((r) => el("li", {}, `${r.at} ${r.flag}: ${r.decision}${r.note ? " — " + r.note : ""}`)))) : null);
  }

  // One call: name(args) on one line when the arguments are short, the result right under it.
  function callBlock(call) {
    const r = call.result;
    const status = r ? r.status : "no result";
    const bad = !r || status !== "ok";
    let compact = null;
    try {
      const parsed = JSON.parse(call.arguments);
      const flat = JSON.stringify(parsed);
      if (flat.length <= 90 && parsed && typeof parsed === "object" && !Array.isArray(parsed)) {
        compact = Object.entries(parsed).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(", ");
      }
    } catch (err) {
      compact = null; // malformed arguments are shown verbatim below
    }
    return el("div", {class: "call" + (bad ? " call-bad" : "")},
      el("div", {class: "call-head"},
        el("span", {class: "fn"}, call.name, compact !== null ? el("span", {class: "args-inline"}, `(${compact})`) : "(…)"),
        bad ? badge(status, "bad") : null, r && r.truncated ? badge("output truncated", "warn") : null,
        el("span", {class: "muted small call-id"}, call.id)),
      el("div", {class: "call-body"},
        compact === null ? [el("div", {class: "sub-label"}, "arguments"), textBlock(call.arguments, {lines: 12, class: "args"})] : null,
        r ? textBlock(r.content, {lines: 10, class: bad ? "result err" : "result"}) : el("p", {class: "muted"}, "no result recorded")));
  }

  function stepBlock(step, flagsAt) {
    const raised = Object.entries(flagsAt).filter(([, where]) => where.includes(step.index)).map(([n]) => n);
    const label = step.role === "assistant" ? `step ${step.step} · assistant` : step.role + (step.name ? ` · ${step.name}` : "");
    const body = [];
    if (step.content) body.push(textBlock(step.content, {lines: step.role === "system" ? 3 : 16}));
    else if (step.role === "assistant" && !step.calls.length) body.push(el("p", {class: "muted"}, "(empty reply: the episode ends here)"));
    body.push(step.calls.map(callBlock));
    return el("article", {class: `msg ${step.role}` + (raised.length ? " raised" : ""), id: "m" + step.index},
      el("div", {class: "msg-head"}, el("span", {class: "role"}, label), el("span", {class: "muted small"}, `#${step.index}`),
        raised.map((f) => badge("flag: " + f, "flag"))),
      body);
  }

  function truthBox(truth, record) {
    if (!truth.available) return el("section", {class: "truth"}, el("h2", {}, "Ground truth"), el("div", {class: "banner warn"}, truth.note));
    const answered = record.submitted ? record.answer : undefined;
    const same = record.submitted && JSON.stringify(answered) === JSON.stringify(truth.answer);
    return el("section", {class: "truth", id: "truth"},
      el("h2", {}, "Ground truth ", el("span", {class: "muted small"}, "(hidden from the agent)")),
      truth.note ? el("div", {class: "banner warn"}, truth.note) : null,
      el("div", {class: "answers"},
        el("div", {class: "answer expected"}, el("div", {class: "label"}, "expected"), textBlock(WG.json(truth.answer), {lines: 8})),
        el("div", {class: "answer " + (same ? "same" : "differs")}, el("div", {class: "label"}, "submitted"),
          record.submitted ? textBlock(WG.json(answered), {lines: 8}) : el("p", {class: "muted"}, "nothing submitted"))),
      el("div", {class: "sub-label"}, "prompt"), textBlock(WG.json(truth.prompt), {lines: 8}),
      Object.keys(truth.meta || {}).length ? kv(Object.entries(truth.meta).map(([k, v]) => [k, WG.json(v)])) : null);
  }

  function verdictBox(record) {
    const v = record.verdict;
    if (!v) return el("section", {class: "verdict"}, el("h2", {}, "Verdict"), el("p", {class: "bad"}, "not scored: the episode errored"));
    const subs = Object.entries(v.subscores || {});
    const evidence = Object.keys(v.evidence || {}).length ? textBlock(WG.json(v.evidence), {lines: 16}) : el("p", {class: "muted small"}, "no evidence recorded by the verifier");
    return el("section", {class: "verdict", id: "verdict"},
      el("h2", {}, "Verdict"),
      kv([["reward", fmt(v.reward)], ["success", fmt(v.success)], ["status", v.status],
        (v.flags || []).length ? ["verifier flags", v.flags.join(", ")] : null]),
      subs.length ? el("table", {class: "grid subscores"}, el("thead", {}, el("tr", {}, el("th", {}, "subscore"), el("th", {}, "value"))),
        el("tbody", {}, subs.map(([k, x]) => el("tr", {class: x >= 1 ? "pass" : "fail"}, el("td", {}, k), el("td", {class: "num"}, fmt(x)))))) : null,
      el("div", {class: "sub-label"}, "evidence"), evidence);
  }

  function factsBox(record) {
    const u = record.usage || {};
    return el("section", {class: "facts"}, el("h2", {}, "Episode"),
      kv([["task", record.task_id], ["family", record.family], ["split", record.split], ["epoch", record.epoch],
        ["seed", String(record.seed)], ["model", record.model], ["outcome", record.outcome + (record.truncation ? ` (${record.truncation})` : "")],
        record.error ? ["error", record.error] : null,
        ["turns", record.turns], ["tokens", `${fmt((u.prompt_tokens || 0) + (u.completion_tokens || 0))} (prompt ${fmt(u.prompt_tokens)}, completion ${fmt(u.completion_tokens)})`],
        ["wall time", `${fmt(record.wall_time_s, 2)} s`], ["started", record.started_at], ["policy", (record.policy_hash || "").slice(0, 12)]]));
  }

  function neighbours(run, task, epoch) {
    try {
      const list = JSON.parse(sessionStorage.getItem("wg-list") || "null");
      if (!list || list.run !== run) return {};
      const i = list.keys.findIndex(([t, e]) => t === task && String(e) === String(epoch));
      if (i < 0) return {back: list.back};
      return {back: list.back, prev: list.keys[i - 1], next: list.keys[i + 1], pos: `${i + 1}/${list.keys.length} on this page`};
    } catch (err) {
      return {};
    }
  }

  WG.pages.episode = async function (main, params) {
    const run = params.get("run"), task = params.get("task"), epoch = params.get("epoch");
    const data = await api("/api/episode", {run, task_id: task, epoch});
    const {record, truth} = data;
    const nav = neighbours(run, task, epoch);
    WG.crumbs([run, nav.back || href("run", {run})], [`${task} · epoch ${epoch}`, null]);
    const link = (k) => k ? href("episode", {run, task: k[0], epoch: k[1]}) : null;
    const draw = () => {
      WG.fill(main,
        el("div", {class: "ep-head"},
          verdictBadge(record),
          el("h1", {}, record.family, " ", el("span", {class: "mono muted"}, `${record.task_id} · epoch ${record.epoch} · ${record.split}`)),
          el("div", {class: "nav"},
            nav.prev ? el("a", {href: link(nav.prev)}, "← prev") : null,
            nav.pos ? el("span", {class: "muted small"}, nav.pos) : null,
            nav.next ? el("a", {href: link(nav.next), id: "next-episode"}, "next →") : null)),
        findingsBox(data.findings),
        flagsBox(data, draw),
        el("div", {class: "columns"},
          el("section", {class: "transcript", id: "transcript"}, el("h2", {}, `Transcript (${data.steps.length} messages)`),
            data.steps.map((s) => stepBlock(s, data.flags.at))),
          el("aside", {class: "side"}, truthBox(truth, record), verdictBox(record), factsBox(record))));
    };
    draw();
  };
})();
