// Playbook and certificate pages: show the files the trainer and the certifier wrote.
"use strict";

(function () {
  const {el, api, fmt, href, kv, badge, textBlock} = WG;

  // Markdown shown as structured text: headings and list items get their own lines and styles,
  // but nothing in the file is ever interpreted as HTML.
  function markdownText(text) {
    return el("div", {class: "md", id: "playbook-text"}, text.split("\n").map((line) => {
      const h = /^(#{1,4})\s+(.*)$/.exec(line);
      if (h) return el("div", {class: "md-h" + h[1].length}, h[2]);
      const li = /^\s*[-*]\s+(.*)$/.exec(line);
      if (li) return el("div", {class: "md-li"}, "• " + li[1]);
      return line.trim() ? el("div", {class: "md-p"}, line) : el("div", {class: "md-gap"});
    }));
  }

  function table(id, headers, rows) {
    return el("div", {class: "scroll"}, el("table", {class: "grid", id},
      el("thead", {}, el("tr", {}, headers.map((h) => el("th", {}, h)))), el("tbody", {}, rows)));
  }

  function decisionBadge(decision) {
    const kind = decision === "accepted" ? "good" : decision === "pending" ? "" : "bad";
    return badge(decision || "?", kind);
  }

  WG.pages.playbook = async function (main, params) {
    const path = params.get("path");
    WG.crumbs([`playbook ${path}`, null]);
    const p = await api("/api/playbook", {path});
    const choices = [...p.versions.map((v) => [v.key, `it ${v.iteration} · ${String(v.hash || "").slice(0, 10)} · ${v.reason || ""}`]),
      ...p.files.map((f) => [f, "file " + f])];
    const pick = (id, value) => {
      const s = el("select", {id}, choices.map(([k, label]) => el("option", {value: k}, label)));
      s.value = value;
      return s;
    };
    const diffOut = el("div", {id: "diff"});
    const first = choices.length ? choices[0][0] : "";
    const last = p.versions.length ? p.versions[p.versions.length - 1].key : first;
    const a = pick("diff-a", first), b = pick("diff-b", last);
    const showDiff = async () => {
      const d = await api("/api/playbook/diff", {path, a: a.value, b: b.value});
      WG.fill(diffOut, d.diff.length ? el("pre", {class: "diff"}, d.diff.map((line) =>
        el("span", {class: line.startsWith("+") ? "add" : line.startsWith("-") ? "del" : line.startsWith("@@") ? "hunk" : ""}, line + "\n")))
        : el("p", {class: "muted"}, "no differences"));
    };
    const r = p.report && typeof p.report === "object" ? p.report : null;
    const stop = p.stop ? `${p.stop.reason} (after iteration ${p.stop.iteration})` : "not recorded";
    const accepted = p.deltas.filter((d) => d.decision === "accepted").length;
    WG.fill(main,
      el("h1", {}, "Playbook ", el("span", {class: "muted"}, path)),
      el("div", {class: "cards"},
        WG.card("entries (current version)", fmt(p.entries.filter((e) => e.status !== "retired").length), `${p.entries.length} incl. retired`),
        WG.card("versions", fmt(p.versions.length), `${p.files.length} version file(s) on disk`),
        WG.card("deltas accepted / proposed", `${accepted} / ${p.deltas.length}`, "gate decisions from log.jsonl"),
        WG.card("best dev reward", r && r.best ? fmt(r.best.reward) : "–", r && r.best ? `iteration ${r.best.iteration} · ${fmt(r.best.tokens_per_task, 0)} tokens/task` : "no report.json"),
        WG.card("stopped", stop, "")),
      p.unreadable.history || p.unreadable.log ? el("div", {class: "banner warn"}, `unreadable lines: ${p.unreadable.history} in the history, ${p.unreadable.log} in log.jsonl`) : null,
      el("div", {class: "columns"},
        el("section", {}, el("h2", {}, "playbook.md (what the agent sees)"), markdownText(p.text || "(empty playbook)")),
        el("aside", {class: "side"},
          el("section", {}, el("h2", {}, "Diff between versions"),
            choices.length > 1 ? el("div", {class: "filters"}, a, " → ", b, el("button", {type: "button", onclick: showDiff}, "diff")) :
              el("p", {class: "muted"}, "fewer than two versions on disk: nothing to diff"),
            diffOut),
          p.plot ? el("section", {}, el("h2", {}, "Learning curve"), el("img", {src: "/files/" + p.plot, alt: "learning curve", class: "plot"})) : null)),
      el("h2", {}, "Deltas and gate decisions"),
      p.deltas.length ? table("deltas", ["iter", "delta", "op", "targets", "text", "decision", "reason", "rationale"],
        p.deltas.map((d) => el("tr", {class: d.decision === "accepted" ? "pass" : d.decision === "pending" ? "" : "fail"},
          el("td", {class: "num"}, fmt(d.iteration)), el("td", {class: "mono"}, d.id), el("td", {}, d.op || ""),
          el("td", {class: "mono"}, d.targets || ""), el("td", {}, d.text || ""), el("td", {}, decisionBadge(d.decision)),
          el("td", {class: "small"}, d.reason || ""), el("td", {class: "small muted"}, d.rationale || ""))))
        : el("p", {class: "muted"}, "no deltas in log.jsonl (or no log next to this playbook)"),
      el("h2", {}, "Entries"),
      p.entries.length ? table("entries", ["id", "section", "status", "text", "helpful / harmful / cited", "gates"],
        p.entries.map((e) => {
          const c = e.counters || {};
          const prov = e.provenance || {};
          return el("tr", {class: e.status === "retired" ? "retired" : ""},
            el("td", {class: "mono"}, e.id), el("td", {}, e.section), el("td", {}, e.status || ""),
            el("td", {}, e.text), el("td", {class: "num"}, `${fmt(c.helpful)} / ${fmt(c.harmful)} / ${fmt(c.cited)}`),
            el("td", {class: "small"}, (prov.gates || []).join("; ")));
        }))
        : el("p", {class: "muted"}, "no entry records (playbook.history.jsonl) beside this playbook"),
      p.checkpoints.length ? [el("h2", {}, "Checkpoints (dev)"), table("checkpoints", ["iteration", "hash", "reward", "se", "tokens/task"],
        p.checkpoints.map((c) => el("tr", {}, el("td", {class: "num"}, fmt(c.iteration)), el("td", {class: "mono"}, String(c.hash || "").slice(0, 12)),
          el("td", {class: "num"}, fmt(c.reward)), el("td", {class: "num"}, fmt(c.se)), el("td", {class: "num"}, fmt(c.tokens_per_task, 0)))))] : null);
    if (choices.length > 1) await showDiff();
  };

  WG.pages.certificate = async function (main, params) {
    const path = params.get("path");
    WG.crumbs([`certificate ${path}`, null]);
    const c = await api("/api/certificate", {path});
    if (c.error) throw new Error(c.error);
    const s = c.summary;
    const g = s.gain;
    const pass = c.verdict === "PASS";
    const runs = s.runs || {};
    const compareLink = runs.baseline && runs.candidate && runs.baseline.link !== null && runs.candidate.link !== null
      ? el("a", {href: href("compare", {a: runs.baseline.link, b: runs.candidate.link})}, "compare the two runs task by task") : null;
    WG.fill(main,
      el("h1", {}, "Certificate ", el("span", {class: "muted"}, `${path} · ${s.env || ""}`)),
      el("div", {class: "banner " + (pass ? "good" : "bad"), id: "cert-verdict"},
        el("strong", {}, `${c.verdict || "?"}`), c.failed.length ? ` — failed: ${c.failed.join(", ")}` : ""),
      el("ul", {class: "conditions"}, s.conditions.map((x) => el("li", {}, badge(x.passed ? "pass" : "fail", x.passed ? "good" : "bad"), " ", el("strong", {}, x.name), ": ", x.detail))),
      s.warnings.map((w) => el("div", {class: "banner warn"}, w)),
      el("div", {class: "cards"},
        WG.card("gain (candidate − baseline)", g.diff === null || g.diff === undefined ? "–" : `${g.diff >= 0 ? "+" : ""}${fmt(g.diff)}`,
          `lower bound ${fmt(g.lower)} · p ${fmt(g.p_value, 4)} · ${fmt(g.n_items)} items, ${fmt(g.n_clusters)} families`),
        WG.card("baseline → candidate", `${fmt(g.baseline_mean)} → ${fmt(g.candidate_mean)}`, `${g.method || ""}${g.underpowered ? " · underpowered" : ""}`),
        WG.card("tokens / task", `${fmt((s.cost.baseline || {}).tokens_per_task, 0)} → ${fmt((s.cost.candidate || {}).tokens_per_task, 0)}`, "baseline → candidate"),
        WG.card("minimum detectable effect", fmt(g.mde), g.underpowered ? "larger than the gain: underpowered" : "")),
      el("p", {}, "Runs: ", Object.entries(runs).map(([arm, r]) => [el("span", {class: "muted"}, arm + " "),
        r.link !== null ? el("a", {href: href("run", {run: r.link})}, r.path) : el("span", {class: "mono"}, `${r.path} (outside this folder)`), " "]), compareLink),
      s.suites.length ? [el("h2", {}, "Non-regression suites"), table("suites", ["suite", "diff", "lower bound", "margin", "items", "result"],
        s.suites.map((x) => el("tr", {class: x.passed ? "pass" : "fail"}, el("td", {}, x.suite), el("td", {class: "num"}, fmt(x.diff)), el("td", {class: "num"}, fmt(x.lower)),
          el("td", {class: "num"}, fmt(x.margin)), el("td", {class: "num"}, fmt(x.n_items)), el("td", {}, badge(x.passed ? "non-inferior" : "not shown", x.passed ? "good" : "bad")))))] : null,
      c.html ? el("section", {}, el("h2", {}, "certificate.html ", el("a", {href: "/files/" + c.html, target: "_blank", rel: "noopener", class: "small"}, "open alone")),
        el("iframe", {src: "/files/" + c.html, sandbox: "", class: "report", title: "certificate report", id: "cert-frame"}))
        : el("p", {class: "muted"}, "no certificate.html next to certificate.json"),
      el("details", {}, el("summary", {}, "all fields of certificate.json"), kv(c.fields.map(([k, v]) => [k, fmt(v)]))));
  };
})();
