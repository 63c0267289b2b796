// Pages: runs list, episode list of a run, compare two runs, playbook, certificate.
"use strict";

(function () {
  const {el, api, fmt, pct, href, badge, kv} = WG;

  function ci(summary) {
    const [lo, hi] = summary.ci95 || [null, null];
    return `${fmt(summary.mean_reward)}  [${fmt(lo)}, ${fmt(hi)}]`;
  }

  function flagCell(summary, reviews) {
    const total = Object.values(summary.flags || {}).reduce((a, b) => a + b, 0);
    if (!total) return el("span", {class: "muted"}, "none");
    const names = Object.entries(summary.flags).map(([k, v]) => `${k} ${v}`).join(", ");
    const parts = [el("span", {class: "flagtext"}, names)];
    if (summary.flagged_successes) {
      parts.push(" ", badge(`${summary.flagged_successes} flagged success`, "warn"));
    }
    if (reviews && (reviews.accepted || reviews.exploit)) {
      parts.push(" ", el("span", {class: "muted"}, `reviewed: ${reviews.accepted} ok, ${reviews.exploit} exploit`));
    }
    return el("span", {}, parts);
  }

  // ---- home: everything under PATH ---------------------------------------------------------
  WG.pages.home = async function (main) {
    WG.crumbs();
    const tree = await api("/api/tree");
    document.getElementById("root").textContent = tree.root;
    const picked = new Set();
    const compareBtn = el("button", {type: "button", disabled: true, id: "compare-btn"}, "Compare 2 selected runs");
    compareBtn.addEventListener("click", () => {
      const [a, b] = [...picked];
      window.location.hash = href("compare", {a, b});
    });
    const rows = tree.runs.map((r) => {
      const s = r.summary || {};
      const box = el("input", {type: "checkbox", "aria-label": "select " + r.path});
      box.addEventListener("change", () => {
        box.checked ? picked.add(r.path) : picked.delete(r.path);
        compareBtn.disabled = picked.size !== 2;
      });
      if (r.error) {
        return el("tr", {}, el("td", {}, box), el("td", {}, r.path),
          el("td", {colspan: 8, class: "bad"}, r.error));
      }
      return el("tr", {class: "run-row"},
        el("td", {}, box),
        el("td", {}, el("a", {href: href("run", {run: r.path})}, r.path || "."),
          el("div", {class: "muted small"}, `${r.env_id} · ${r.split} · ${r.created_at || ""}`)),
        el("td", {}, r.model),
        el("td", {class: "num"}, `${fmt(s.n_episodes)}`, el("div", {class: "muted small"}, `${fmt(s.n_tasks)} tasks × ${r.epochs}`)),
        el("td", {class: "num"}, ci(s)),
        el("td", {class: "num"}, pct(s.success_rate),
          s.pass_hat_k !== null && s.pass_hat_k !== undefined ? el("div", {class: "muted small"}, `pass^${r.epochs} ${fmt(s.pass_hat_k)}`) : null),
        el("td", {class: "num"}, fmt(s.tokens_per_task, 0)),
        el("td", {class: "num" + (s.errors ? " bad" : "")}, fmt(s.errors)),
        el("td", {}, flagCell(s, r.reviews)));
    });
    const runsTable = el("table", {class: "grid", id: "runs"},
      el("thead", {}, el("tr", {}, ["", "run", "model", "episodes", "reward [95% CI]", "success", "tokens/ep", "errors", "audit flags"].map((h) => el("th", {}, h)))),
      el("tbody", {}, rows));
    const list = (items, page, label) => items.length
      ? el("ul", {}, items.map((p) => el("li", {}, el("a", {href: href(page, {path: p})}, p || "."))))
      : el("p", {class: "muted"}, `no ${label} under this folder`);
    WG.fill(main,
      el("h1", {}, "Runs"),
      tree.runs.length ? el("div", {}, runsTable, el("div", {class: "actions"}, compareBtn))
        : el("p", {class: "muted"}, "No run directories (run.json) under this folder. Make one with: workgym eval ENV --model ... --out runs/NAME"),
      el("h2", {}, "Environments"),
      tree.environments.length ? el("table", {class: "grid"},
        el("thead", {}, el("tr", {}, ["path", "id", "version", "tasks", "hash"].map((h) => el("th", {}, h)))),
        el("tbody", {}, tree.environments.map((e) => el("tr", {}, el("td", {}, e.path), el("td", {}, e.id || e.error),
          el("td", {}, e.version), el("td", {class: "num"}, fmt(e.tasks)), el("td", {class: "mono"}, (e.content_hash || "").slice(0, 12))))))
        : el("p", {class: "muted"}, "no environment directories under this folder"),
      el("h2", {}, "Playbooks"), list(tree.playbooks, "playbook", "playbooks"),
      el("h2", {}, "Certificates"), list(tree.certificates, "certificate", "certificates"));
  };

  // ---- one run: summary, filters, paged episode table -------------------------------------
  const FILTERS = ["split", "family", "status", "outcome", "flag", "success"];
  const COLUMNS = [
    ["line", "#"], ["task_id", "task"], ["epoch", "ep"], ["family", "family"], ["split", "split"],
    ["status", "verdict"], ["reward", "reward"], [null, "answer"], ["turns", "turns"],
    ["tokens", "tokens"], ["n_tool_errors", "tool errors"], ["n_flags", "flags"], ["outcome", "outcome"],
  ];

  WG.pages.run = async function (main, params) {
    const run = params.get("run");
    WG.crumbs([run || ".", null]);
    const info = await api("/api/run", {run});
    const state = Object.fromEntries(params.entries());
    state.sort = state.sort || "line";
    state.order = state.order || "asc";
    state.offset = Number(state.offset || 0);
    const limit = 50;
    const data = await api("/api/episodes", {...state, limit});
    const s = info.summary || {};
    const go = (changes) => { window.location.hash = href("run", {...state, ...changes}); };

    const cards = el("div", {class: "cards"},
      card("reward (95% CI)", ci(s), `${fmt(s.n_tasks)} tasks, task is the unit`),
      card("success", pct(s.success_rate), s.pass_hat_k != null ? `pass^${info.epochs} ${fmt(s.pass_hat_k)} · pass@${info.epochs} ${fmt(s.pass_at_k)}` : ""),
      card("tokens / episode", fmt(s.tokens_per_task, 0), Object.entries(s.tokens_by_role || {}).map(([k, v]) => `${k} ${v.toFixed(0)}`).join(" · ")),
      card("errors", fmt(s.errors), Object.entries(s.statuses || {}).map(([k, v]) => `${k} ${v}`).join(" · "), s.errors ? "bad" : ""),
      card("audit flags", fmt(Object.values(s.flags || {}).reduce((a, b) => a + b, 0)),
        `${s.flagged_successes || 0} flagged successes · reviewed ${info.reviews ? info.reviews.accepted + info.reviews.exploit : 0}`,
        s.flagged_successes ? "warn" : ""));

    const bar = el("form", {class: "filters", id: "filters"});
    for (const name of FILTERS) {
      const select = el("select", {name, id: "filter-" + name, "aria-label": name},
        el("option", {value: ""}, `${name}: all`),
        name === "flag" ? el("option", {value: "*"}, "flag: any flag") : null,
        (info.facets[name] || []).map((f) => el("option", {value: String(f.value)}, `${name}: ${fmt(f.value)} (${f.count})`)));
      select.value = state[name] || "";
      select.addEventListener("change", () => go({[name]: select.value, offset: 0}));
      bar.appendChild(select);
    }
    const search = el("input", {type: "search", name: "q", placeholder: "task id or family…", value: state.q || ""});
    bar.addEventListener("submit", (e) => { e.preventDefault(); go({q: search.value, offset: 0}); });
    bar.append(search, el("a", {href: href("run", {run}), class: "reset"}, "reset"));

    const head = el("tr", {}, COLUMNS.map(([key, label]) => {
      if (!key) return el("th", {}, label);
      const active = state.sort === key;
      const next = active && state.order === "asc" ? "desc" : "asc";
      return el("th", {class: "sortable" + (active ? " active" : "")},
        el("a", {href: href("run", {...state, sort: key, order: next, offset: 0})}, label + (active ? (state.order === "asc" ? " ▲" : " ▼") : "")));
    }));
    const keys = data.rows.map((r) => [r.task_id, r.epoch]);
    sessionStorage.setItem("wg-list", JSON.stringify({run, keys, back: window.location.hash}));
    const body = el("tbody", {}, data.rows.map((r) => {
      const link = href("episode", {run, task: r.task_id, epoch: r.epoch});
      const tr = el("tr", {class: "ep " + (r.success ? "pass" : "fail"), dataset: {task: r.task_id, epoch: r.epoch}},
        el("td", {class: "num muted"}, r.line),
        el("td", {class: "mono"}, el("a", {href: link}, r.task_id)),
        el("td", {class: "num"}, r.epoch),
        el("td", {}, r.family), el("td", {}, r.split),
        el("td", {}, badge(r.success ? "pass" : r.status === "ok" ? "fail" : r.status, r.success ? "good" : "bad")),
        el("td", {class: "num"}, fmt(r.reward, 2)),
        el("td", {class: "mono clip"}, r.answer_preview === null ? el("span", {class: "muted"}, "—") : r.answer_preview),
        el("td", {class: "num"}, r.turns), el("td", {class: "num"}, fmt(r.tokens)),
        el("td", {class: "num" + (r.n_tool_errors ? " bad" : "")}, r.n_tool_errors ? `${r.n_tool_errors}/${r.n_tool_calls}` : `0/${r.n_tool_calls}`),
        el("td", {}, r.flags.map((f) => badge(f, "flag"))),
        el("td", {}, r.outcome + (r.truncation ? ` (${r.truncation})` : "")));
      tr.addEventListener("click", (e) => { if (e.target.tagName !== "A") window.location.hash = link; });
      return tr;
    }));
    const from = data.total ? data.offset + 1 : 0;
    const to = data.offset + data.rows.length;
    const pager = el("div", {class: "pager"},
      el("button", {type: "button", disabled: data.offset === 0, onclick: () => go({offset: Math.max(0, data.offset - limit)})}, "← prev"),
      el("span", {id: "count"}, `${from}–${to} of ${fmt(data.total)} episodes`),
      el("button", {type: "button", disabled: to >= data.total, onclick: () => go({offset: data.offset + limit})}, "next →"));
    WG.fill(main,
      el("h1", {}, run, " ", el("span", {class: "muted"}, `${info.model} on ${info.env_id} (${info.split})`)),
      cards,
      info.unreadable ? el("div", {class: "banner warn"}, `${info.unreadable} line(s) of episodes.jsonl could not be read and are not listed`) : null,
      bar, pager, el("table", {class: "grid episodes", id: "episodes"}, el("thead", {}, head), body));
  };

  function card(label, value, sub, kind) {
    return el("div", {class: "card " + (kind || "")}, el("div", {class: "label"}, label),
      el("div", {class: "value"}, value), el("div", {class: "sub"}, sub || ""));
  }
  WG.card = card;

  // ---- compare two runs -------------------------------------------------------------------
  WG.pages.compare = async function (main, params) {
    const a = params.get("a"), b = params.get("b");
    const all = params.get("all") === "1";
    const offset = Number(params.get("offset") || 0);
    WG.crumbs([`compare ${a} ↔ ${b}`, null]);
    const d = await api("/api/compare", {a, b, all: all ? "true" : "false", offset, limit: 100});
    const t = d.test;
    const go = (changes) => { window.location.hash = href("compare", {a, b, all: all ? 1 : 0, offset, ...changes}); };
    WG.fill(main,
      el("h1", {}, "B − A on the same tasks"),
      kv([["A", `${a} (${d.a.model}, ${d.a.split})`], ["B", `${b} (${d.b.model}, ${d.b.split})`]]),
      d.warnings.map((w) => el("div", {class: "banner warn"}, w)),
      el("div", {class: "cards"},
        card("mean reward difference B − A", t ? `${t.diff >= 0 ? "+" : ""}${fmt(t.diff)}` : "–",
          t ? `95% CI [${fmt(t.ci95[0])}, ${fmt(t.ci95[1])}] · p ${fmt(t.p_value, 4)} · ${t.method}` : "needs 2 paired tasks"),
        card("paired tasks", fmt(d.n_common), `${d.only_a} only in A · ${d.only_b} only in B`),
        card("B better / A better / tie", `${d.b_better} / ${d.a_better} / ${d.ties}`, "per-task mean reward over epochs"),
        card("success flips", `${d.flips.fail_to_pass} ↑  ${d.flips.pass_to_fail} ↓`, "fail→pass · pass→fail (majority of epochs)")),
      el("div", {class: "filters"},
        el("label", {}, el("input", {type: "checkbox", checked: all, onchange: (e) => go({all: e.target.checked ? 1 : 0, offset: 0})}), " show tasks where the runs agree too"),
        el("span", {class: "muted"}, ` ${d.total} task(s) listed, largest difference first`)),
      el("table", {class: "grid", id: "compare"},
        el("thead", {}, el("tr", {}, ["task", "family", "reward A", "reward B", "B − A", "success A", "success B", "tokens A", "tokens B"].map((h) => el("th", {}, h)))),
        el("tbody", {}, d.rows.map((r) => el("tr", {class: r.diff > 0 ? "up" : r.diff < 0 ? "down" : ""},
          el("td", {class: "mono"}, r.task_id),
          el("td", {}, r.family),
          el("td", {class: "num"}, el("a", {href: href("episode", {run: a, task: r.task_id, epoch: r.epoch_a})}, fmt(r.reward_a, 2)),
            r.status_a !== "ok" ? el("div", {class: "small bad"}, r.status_a) : null),
          el("td", {class: "num"}, el("a", {href: href("episode", {run: b, task: r.task_id, epoch: r.epoch_b})}, fmt(r.reward_b, 2)),
            r.status_b !== "ok" ? el("div", {class: "small bad"}, r.status_b) : null),
          el("td", {class: "num strong"}, (r.diff > 0 ? "+" : "") + fmt(r.diff, 2)),
          el("td", {class: "num"}, pct(r.success_a)), el("td", {class: "num"}, pct(r.success_b)),
          el("td", {class: "num"}, fmt(r.tokens_a, 0)), el("td", {class: "num"}, fmt(r.tokens_b, 0)))))),
      el("div", {class: "pager"},
        el("button", {type: "button", disabled: offset === 0, onclick: () => go({offset: Math.max(0, offset - 100)})}, "← prev"),
        el("span", {}, `${d.total ? offset + 1 : 0}–${offset + d.rows.length} of ${d.total}`),
        el("button", {type: "button", disabled: offset + d.rows.length >= d.total, onclick: () => go({offset: offset + 100})}, "next →")));
  };
})();
