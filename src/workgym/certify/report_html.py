"""certificate.html: one self-contained page, verdict first, for a person deciding on a release.

Order follows the questions a reader asks: did it pass (and if not, which condition failed), by
how much did the task improve and how sure are we, did any general ability regress, what does it
cost, where does the gain come from, and how can I check all this (hashes, runs, looks).
"""

from __future__ import annotations

from html import escape

from workgym.certify import plots
from workgym.certify.schema import Certificate, Comparison, PolicyRecord

CSS = """
body{font:15px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;color:#1d2330;
 margin:0;background:#f5f6f8}
main{max-width:1080px;margin:0 auto;padding:24px 28px 60px}
h1{font-size:22px;margin:0 0 4px} h2{font-size:18px;margin:30px 0 10px;
 border-bottom:1px solid #dde1e7;padding-bottom:4px}
.banner{border-radius:10px;padding:18px 24px;color:#fff;margin-bottom:14px}
.pass{background:#1f8a4c}.fail{background:#c0392b}
.banner .v{font-size:40px;font-weight:800;letter-spacing:2px;margin-right:16px}
.banner .s{font-size:16px;opacity:.95}
.card{background:#fff;border:1px solid #dde1e7;border-radius:8px;padding:14px 18px;margin:10px 0}
table{border-collapse:collapse;width:100%;background:#fff;font-size:14px}
th,td{border-bottom:1px solid #e6e9ee;padding:6px 8px;text-align:left;vertical-align:top}
th{background:#eef1f5;font-weight:600} td.n{text-align:right;font-variant-numeric:tabular-nums}
.ok{color:#1f8a4c;font-weight:700}.bad{color:#c0392b;font-weight:700}
.warn{background:#fff7e0;border:1px solid #f0d58a;border-radius:8px;padding:10px 16px}
.big{font-size:28px;font-weight:700}.muted{color:#667085;font-size:13px}
.kpi{display:flex;gap:28px;flex-wrap:wrap}.kpi div{min-width:150px}
code{font-size:12px;background:#eef1f5;padding:1px 4px;border-radius:4px;word-break:break-all}
img{max-width:100%;border:1px solid #dde1e7;border-radius:6px;background:#fff}
.plots{display:grid;grid-template-columns:1fr 1fr;gap:14px}
table.narrow{width:auto;min-width:560px}
"""
NO_CURVE = (
    "<p class='muted'>No learning curve: pass <code>--curve</code> with the training's output "
    "folder to draw it here.</p>"
)


def _f(x: float | None, fmt: str = ".3f") -> str:
    return "—" if x is None else format(x, fmt)


def _pm(x: float | None) -> str:
    return "—" if x is None else f"{x:+.3f}"


def _mark(ok: bool) -> str:
    return '<span class="ok">✓ pass</span>' if ok else '<span class="bad">✗ FAIL</span>'


def _policy(p: PolicyRecord) -> str:
    extra = f" + playbook <code>{p.playbook_sha256[:12]}</code>" if p.playbook_sha256 else ""
    return f"<code>{escape(p.model)}</code>{extra}"


def _banner(c: Certificate) -> str:
    fr = c.frozen
    cls = "pass" if c.verdict == "PASS" else "fail"
    names = {"gain": "task gain", "non_regression": "non-regression", "admission": "admission"}
    sub = (
        "gain is significant, every suite is non-inferior, and the environment passed admission"
        if c.verdict == "PASS"
        else "failed: " + ", ".join(names[n] for n in c.failed)
    )
    return (
        f'<div class="banner {cls}"><span class="v">{c.verdict}</span>'
        f'<span class="s">{escape(sub)}</span></div>'
        f"<h1>Certificate for {escape(c.task.env.id)}</h1>"
        f'<div class="muted">baseline {_policy(fr.baseline)} &nbsp;vs&nbsp; candidate '
        f"{_policy(fr.candidate)} · {fr.epochs} epoch(s) · alpha {fr.alpha:g} · "
        f"attempt {fr.looks.attempt} on this test split · {escape(fr.created_at)}</div>"
    )


def _conditions(c: Certificate) -> str:
    rows = "".join(
        f"<tr><td>{_mark(k.passed)}</td><td><b>{escape(k.name)}</b></td>"
        f"<td>{escape(k.detail)}</td></tr>"
        for k in c.conditions
    )
    warn = ""
    if c.warnings:
        items = "".join(f"<li>{escape(w)}</li>" for w in c.warnings)
        warn = f'<div class="warn"><b>Warnings</b><ul>{items}</ul></div>'
    return f"<h2>Conditions</h2><table>{rows}</table>{warn}"


def _gain(c: Certificate) -> str:
    g = c.task.gain
    lo, hi = g.ci95
    tests = "".join(
        f"<tr><td>{escape(t.name)}</td><td class='n'>{_f(t.p_value, '.3g')}</td>"
        f"<td class='n'>{_pm(t.lower)}</td><td>{'gate' if t.gate else 'info'}</td>"
        f"<td>{_mark(t.rejects)}</td><td>{escape(t.detail)}</td></tr>"
        for t in g.tests
    )
    passk = ""
    if g.pass_hat_k:
        k = c.frozen.epochs
        passk = (
            f"<div><div class='muted'>pass^{k} (all {k} epochs)</div><div class='big'>"
            f"{g.pass_hat_k['baseline']:.2f} → {g.pass_hat_k['candidate']:.2f}</div></div>"
        )
    r = "—" if g.correlation is None else f"{g.correlation:.2f}"
    return f"""<h2>Gain on held-out work</h2><div class="card"><div class="kpi">
<div><div class="muted">mean reward, baseline → candidate</div>
<div class="big">{g.baseline_mean:.3f} → {g.candidate_mean:.3f}</div></div>
<div><div class="muted">gain (95% CI)</div><div class="big">{g.diff:+.3f}</div>
<div>[{_pm(lo)}, {_pm(hi)}]</div></div>
<div><div class="muted">one-sided {1 - c.frozen.alpha:.0%} lower bound</div>
<div class="big">{_pm(g.lower)}</div><div>p = {_f(g.p_value, ".3g")}</div></div>{passk}</div>
<p><b>Estimand: {escape(g.estimand)}</b> — {escape(g.estimand_reason)}; smallest attainable
 p {_f(g.smallest_p, ".3g")}{"" if g.passable else " (this gate cannot pass)"}</p>
<p class="muted">{g.n_items} items in {g.n_clusters or 1} families · correlation of the arms {r}
 · method {escape(g.method)} · minimum detectable effect (80% power, simulated)
 {_f(g.mde) if g.mde is not None else "none reachable"}</p>
<table><tr><th>test</th><th>p</th><th>lower bound</th><th>role</th><th>rejects H0</th>
<th>note</th></tr>{tests}</table></div>"""


def _suites(c: Certificate) -> str:
    if not c.suites:
        return "<h2>Non-regression</h2><p class='bad'>No regression suites were run.</p>"
    rows = ""
    for s in c.suites:
        ni = s.non_inferiority
        clusters = f" ({ni.n_clusters} fam.)" if ni.n_clusters else ""
        rows += (
            f"<tr><td><b>{escape(s.env.id)}</b></td><td class='n'>{ni.n_items}{clusters}</td>"
            f"<td class='n'>{ni.baseline_mean:.3f}</td><td class='n'>{ni.candidate_mean:.3f}</td>"
            f"<td class='n'>{ni.diff:+.3f}</td><td class='n'>{_pm(ni.lower)}</td>"
            f"<td class='n'>-{ni.margin:g}</td><td>{_mark(ni.passed)} {escape(ni.status)}"
            f"<div class='muted'>{escape(ni.reason)}</div></td></tr>"
        )
    return (
        "<h2>Non-regression (non-inferiority per suite)</h2><table><tr><th>suite</th>"
        "<th>items</th><th>baseline</th><th>candidate</th><th>difference</th>"
        f"<th>lower bound</th><th>-margin</th><th>result</th></tr>{rows}</table>"
        "<p class='muted'>A suite passes when the lower bound of the one-sided "
        f"{1 - c.frozen.alpha:.0%} interval of the difference (exact for binary rewards, "
        "bounded score for graded ones) is above -margin. "
        "'Not significantly different' is not enough, and identical arms are not a pass: a suite "
        "at the floor or saturated in both arms cannot show regression.</p>"
    )


def _cost(c: Certificate) -> str:
    comps: list[tuple[str, Comparison]] = [("task", c.task)] + [(s.env.id, s) for s in c.suites]
    rows = ""
    for name, comp in comps:
        b, k = comp.cost.baseline, comp.cost.candidate
        ratio = "—" if comp.cost.ratio is None else f"{comp.cost.ratio:.0%}"
        rows += (
            f"<tr><td>{escape(name)}</td><td class='n'>{b.tokens_per_task:,.0f}</td>"
            f"<td class='n'>{k.tokens_per_task:,.0f}</td><td class='n'>{ratio}</td>"
            f"<td class='n'>{b.by_role_per_task.get('system', 0):,.0f} / "
            f"{k.by_role_per_task.get('system', 0):,.0f}</td>"
            f"<td class='n'>{b.by_role_per_task.get('tool', 0):,.0f} / "
            f"{k.by_role_per_task.get('tool', 0):,.0f}</td>"
            f"<td class='n'>{b.errors + b.truncated} / {k.errors + k.truncated}</td></tr>"
        )
    matched = (
        f"<p class='ok'>{escape(c.task.matched)}</p>"
        if c.task.matched
        else "<p class='muted'>No 'matched at fewer tokens' statement: it needs the candidate "
        "to be non-inferior on the task while using fewer tokens.</p>"
    )
    return (
        "<h2>Cost</h2>" + matched + "<table><tr><th>environment</th><th>baseline tokens/task"
        "</th><th>candidate tokens/task</th><th>candidate/baseline</th>"
        "<th>system incl. playbook (est.)</th><th>tool output (est.)</th>"
        f"<th>errors+limit hits</th></tr>{rows}</table>"
        "<p class='muted'>Totals are the servers' counts; the split by role is estimated at "
        "four characters a token.</p>"
    )


def _families(c: Certificate) -> str:
    rows = "".join(
        f"<tr><td>{escape(f.family)}</td><td class='n'>{f.n}</td>"
        f"<td class='n'>{f.baseline:.3f}</td><td class='n'>{f.candidate:.3f}</td>"
        f"<td class='n'>{f.diff:+.3f}</td></tr>"
        for f in c.task.gain.families
    )
    return (
        "<h2>Per-family breakdown (task)</h2><table class='narrow'><tr><th>family</th>"
        "<th>items</th>"
        f"<th>baseline</th><th>candidate</th><th>difference</th></tr>{rows}</table>"
    )


def _plots(c: Certificate) -> str:
    g = c.task.gain
    hist = plots.difference_histogram([i.d for i in c.task.items], g.diff, g.lower)
    front = plots.frontier(c)
    return (
        "<h2>Plots</h2><div class='plots'>"
        f"<figure><img alt='per-item differences' src='data:image/png;base64,{hist}'>"
        "<figcaption class='muted'>Per-item difference, candidate - baseline (task).</figcaption>"
        f"</figure><figure><img alt='reward vs tokens' src='data:image/png;base64,{front}'>"
        "<figcaption class='muted'>Reward against tokens per task; up and left is better."
        f"</figcaption></figure>{_curve(c)}</div>{'' if c.frozen.curve else NO_CURVE}"
    )


def _curve(c: Certificate) -> str:
    """The learning curve (`--curve`) when the certificate carries one."""
    curve = c.frozen.curve
    if curve is None:
        return ""
    png = plots.learning_curve(curve)
    band = f"; bars: {escape(curve.band)}" if curve.band else ""
    dropped = f"; {curve.dropped} batches without a reward left out" if curve.dropped else ""
    return (
        f"<figure><img alt='learning curve' src='data:image/png;base64,{png}'>"
        f"<figcaption class='muted'>Learning curve of the {escape(curve.trainer)} training: "
        f"{escape(curve.y_label)} by {escape(curve.x_label)}{band}{dropped}. Measured during "
        "training, not on the held-out items: it does not enter the verdict.</figcaption>"
        "</figure>"
    )


def _provenance(c: Certificate) -> str:
    fr = c.frozen
    rows = ""
    for name, comp in [("task", c.task), *[(s.env.id, s) for s in c.suites]]:
        env = comp.env
        runs = "<br>".join(
            f"{r.arm}: <code>{escape(r.path)}</code> ({r.n_episodes} episodes, sha256 "
            f"<code>{r.episodes_sha256[:16]}</code>{', forced: ' + ', '.join(r.forced) if r.forced else ''})"  # noqa: E501
            for r in comp.runs
        )
        rows += (
            f"<tr><td>{escape(name)}<br><code>{escape(env.id)}</code> v{escape(env.version)}"
            f"</td><td>env <code>{env.hash[:16]}</code><br>split {escape(env.split)} "
            f"<code>{env.split_hash[:16]}</code><br>{env.n_items} items, {env.n_families} "
            f"families</td><td>{runs}</td></tr>"
        )
    adm = fr.admission
    rules = "".join(f"<li>{escape(r)}</li>" for r in fr.rules)
    return f"""<h2>Provenance</h2><table><tr><th>environment</th><th>hashes</th>
<th>runs</th></tr>{rows}</table>
<div class="card"><b>Policies</b>: baseline <code>{fr.baseline.hash}</code>, candidate
<code>{fr.candidate.hash}</code><br><b>Admission</b>: {_mark(adm.passed)} {escape(adm.detail)}
{" (forced)" if adm.forced else ""}<br><b>Looks at this test split</b>: attempt
{fr.looks.attempt} ({fr.looks.previous_attempts} before), log <code>{escape(fr.looks.log)}</code>
<br><b>Frozen</b>: alpha {fr.alpha:g}, epochs {fr.epochs}, seed {fr.seed}, task margin
{fr.task_margin:g}, suite margins {escape(", ".join(f"{k} {v:g}" for k, v in fr.margins.items()))}
{_curve_source(c)}
<ul class="muted">{rules}</ul>
<p class="muted">Recompute: <code>workgym certify --recompute certificate.json</code>
({escape(c.format)})</p></div>"""


def _curve_source(c: Certificate) -> str:
    curve = c.frozen.curve
    if curve is None:
        return ""
    return (
        f"<br><b>Learning curve</b>: {escape(curve.trainer)} <code>{escape(curve.path)}</code> "
        f"(sha256 <code>{curve.sha256[:16]}</code>, {len(curve.points)} points)"
    )


def _cost_matched(c: Certificate) -> str:
    """Only when a swarm is in either arm (workgym.certify.costmatch)."""
    if c.cost_matched is None:
        return ""
    from workgym.certify.costmatch import section_html

    return section_html(c.cost_matched)


def render(cert: Certificate) -> str:
    body = "".join(
        [
            _banner(cert),
            _conditions(cert),
            _gain(cert),
            _suites(cert),
            _cost(cert),
            _cost_matched(cert),
            _families(cert),
            _plots(cert),
            _provenance(cert),
        ]
    )
    title = f"{cert.verdict} · {cert.task.env.id} certificate"
    return (
        f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>{escape(title)}"
        f"</title><style>{CSS}</style></head><body><main>{body}</main></body></html>\n"
    )
