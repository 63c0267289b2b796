"""The certificate's cost-matched section, shown when a swarm (a team) is in either arm.

A swarm's gain over one agent may be bought with tokens. The section says whether the two arms
spent about the same per task (within `TOLERANCE`), gives the paired difference in tokens with its
95% CI, and splits each arm's tokens by agent role. When the arms are not cost-matched it says so
next to the verdict and names the comparison that would be fair: the single agent given the
swarm's budget (`Attempts(..., budget_tokens=B)`), through `workgym compare`.

It is computed from the certificate's stored items and run directories only, so
`workgym certify --recompute` rebuilds it byte for byte.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from pathlib import Path
from typing import Any

import numpy as np

from workgym.certify.schema import CostMatched, ItemScore
from workgym.run.rundir import RunDir, read_spec
from workgym.run.summary import role_tokens
from workgym.stats import tests as stats

TOLERANCE = 0.10
ARMS = ("baseline", "candidate")


def _roles(run: Path, items: Sequence[ItemScore], epochs: int) -> dict[str, float]:
    wanted = {(i.id, e) for i in items for e in range(epochs)}
    totals: dict[str, float] = {}
    for r in RunDir(run, read_spec(run)).records():
        if (str(r["task_id"]), int(r["epoch"])) in wanted:
            for role, n in role_tokens(r).items():
                totals[role] = totals.get(role, 0.0) + n
    return {k: v / len(wanted) for k, v in sorted(totals.items())}


def cost_matched(
    baseline_run: Path, candidate_run: Path, items: Sequence[ItemScore], epochs: int
) -> CostMatched | None:
    """The section, or None when neither arm is a team (the certificate then has none)."""
    specs = {"baseline": read_spec(baseline_run), "candidate": read_spec(candidate_run)}
    teams: dict[str, dict[str, Any]] = {
        arm: spec.policy["team"] for arm, spec in specs.items() if spec.policy.get("team")
    }
    if not teams:
        return None
    base = np.array([float(np.mean(i.baseline.tokens)) for i in items])
    cand = np.array([float(np.mean(i.candidate.tokens)) for i in items])
    # over items, not cluster-robust: with 4 families that interval is degenerate (decision 0070)
    test = stats.paired_t_test(cand, base, "two-sided", 0.95)
    b_mean, c_mean = float(base.mean()), float(cand.mean())
    ratio = c_mean / b_mean if b_mean > 0 else None
    matched = ratio is not None and abs(ratio - 1.0) <= TOLERANCE
    lo = float(test.lower) if np.isfinite(test.lower) else None
    hi = float(test.upper) if np.isfinite(test.upper) else None
    share = "n/a" if ratio is None else f"{ratio:.0%}"
    ci = "" if lo is None or hi is None else f" [{lo:+,.0f}, {hi:+,.0f}]"
    spend = (
        f"the candidate spends {share} of the baseline's tokens per task "
        f"(paired difference {test.diff:+,.0f}{ci})"
    )
    if matched:
        statement = f"cost-matched: {spend}, within ±{TOLERANCE:.0%}: the gain is at equal cost"
    elif ratio is not None and ratio < 1.0:
        statement = f"cheaper candidate: {spend}; a gain here is a gain at lower cost"
    else:
        costly = "candidate" if "candidate" in teams else "baseline"
        statement = (
            f"NOT cost-matched: {spend}. The gain above is not a gain at equal cost: compare "
            f"the {costly} swarm with one agent given the same budget (Attempts(model, n=..., "
            f"budget_tokens≈{max(b_mean, c_mean):,.0f})) using `workgym compare`"
        )
    models = " ".join(str(s.policy) for s in specs.values())
    return CostMatched(
        teams=teams,
        tolerance=TOLERANCE,
        baseline_tokens=b_mean,
        candidate_tokens=c_mean,
        ratio=ratio,
        matched=matched,
        token_diff=float(test.diff),
        token_lower=lo,
        token_upper=hi,
        by_role={
            "baseline": _roles(baseline_run, items, epochs),
            "candidate": _roles(candidate_run, items, epochs),
        },
        statement=statement,
        scripted="scripted/" in models,
    )


def section_html(section: CostMatched) -> str:
    """The certificate.html part (uses the page's own CSS classes)."""
    rows = ""
    for arm in ARMS:
        team = section.teams.get(arm)
        kind = "one agent" if team is None else escape(_team_text(team))
        roles = ", ".join(f"{escape(k)} {v:,.0f}" for k, v in section.by_role.get(arm, {}).items())
        tokens = section.baseline_tokens if arm == "baseline" else section.candidate_tokens
        rows += (
            f"<tr><td>{arm}</td><td>{kind}</td><td class='n'>{tokens:,.0f}</td>"
            f"<td>{roles}</td></tr>"
        )
    cls = "ok" if section.matched else "bad"
    scripted = (
        "<p class='warn'>Scripted models (test doubles) made these runs: the numbers check the "
        "machinery and are not learning results.</p>"
        if section.scripted
        else ""
    )
    return (
        "<h2>Cost-matched comparison (a swarm is involved)</h2>"
        f"<p class='{cls}'>{escape(section.statement)}</p>{scripted}"
        "<table class='narrow'><tr><th>arm</th><th>agents</th><th>tokens/task</th>"
        f"<th>tokens/task by role</th></tr>{rows}</table>"
        "<p class='muted'>Every agent's tokens are counted once (server counts per call). Costs "
        f"within ±{section.tolerance:.0%} count as matched.</p>"
    )


def _team_text(team: dict[str, Any]) -> str:
    if team.get("kind") == "attempts":
        budget = team.get("budget_tokens")
        extra = f", budget {budget:,} tokens/task" if budget else ""
        select = (team.get("select") or {}).get("kind", "vote")
        return f"{team.get('n')} attempts of {team.get('member')}, {select}{extra}"
    if team.get("kind") == "roles":
        return " + ".join(team.get("roles") or []) + " roles"
    return str(team.get("kind", "team"))
