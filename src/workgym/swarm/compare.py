"""Cost-matched comparisons: reward at matched cost and cost at matched reward, paired CIs.

A swarm that spends five times the tokens of one agent has not beaten it until the single agent
got the same budget. So every run is compared with a *baseline line*: one or more runs of the
baseline (typically the single agent given several budgets, as self-consistency or best-of-k via
`Attempts(..., budget_tokens=B)`), ordered by cost.

- Reward at matched cost: the most the baseline reaches with the target's tokens per task, read
  off the line's upper concave envelope (`frontier`): a baseline given a budget may spend less
  of it, or mix two of its settings task by task, so a run that costs more and scores less than
  another (more attempts voting worse) is not what the baseline would buy (decision 0186). On
  the envelope: a run whose cost is within `tolerance` of the target's, or the per-item linear
  interpolation between the two runs whose costs bracket it, or, when the target costs more
  than the envelope's dearest run but the line was measured out to its cost, that dearest run.
  Paired difference in reward over the common items.
- Cost at matched reward: the baseline's tokens at the target's mean reward — walking the line
  from its cheapest run, the interpolation onto the first run that reaches it from the run
  before, or the cheapest run when it is within `margin` of it (or, when no run reaches it, the
  cheapest run within `margin` below). Paired difference in tokens per task.

Items are the unit (a task's epochs are averaged first); rewards are counted as in the
certificate (errors, limit hits, verifier errors and flagged successes are 0); intervals are
two-sided 95%: exact or bounded-score for rewards, paired t for tokens (`points.paired`).
An interpolated baseline treats its weight as fixed: its interval leaves out the uncertainty of
where the crossing lies, which the output says.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise
from pathlib import Path
from typing import Literal

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, Field

from workgym.core.errors import ConfigError
from workgym.swarm.points import Paired, RunCost, RunData, load, paired

COMPARE_FORMAT = "workgym-compare/1"
SCRIPTED_NOTE = (
    "scripted models (test doubles) made some of these runs: the numbers check the machinery "
    "and are not learning results"
)
ORACLE_NOTE = (
    "scripted/oracle submits the hidden answer without calling a tool, so the audit flags each "
    "of its successes (process_anomaly:no-tool-use) and this table counts them 0 until "
    "accepted: its low reward here is that rule at work, not the oracle failing or cheating "
    "(`workgym summary` shows its raw mean)"
)
INTERPOLATION_NOTE = (
    "an interpolated baseline is the per-item linear mix of two baseline runs with a fixed "
    "weight; its interval leaves out the uncertainty of that weight"
)


class Matched(BaseModel):
    """One target against the baseline line, at its cost (`kind="cost"`) or reward."""

    kind: Literal["cost", "reward"]
    target: str
    available: bool
    reference: str = ""
    at: float  # the target's tokens per task (cost) or mean reward (reward)
    reference_value: float | None = None  # baseline reward at that cost, or tokens at that reward
    diff: Paired | None = None  # reward (cost) or tokens (reward): target - baseline
    ratio: float | None = None  # target tokens / baseline tokens
    interpolated: bool = False
    verdict: str


class PairRow(BaseModel):
    target: str
    reference: str
    reward: Paired
    tokens: Paired
    ratio: float | None


class Comparison(BaseModel):
    format: str = COMPARE_FORMAT
    env_id: str
    env_hash: str
    items: int
    families: int
    tolerance: float
    margin: float
    runs: list[RunCost]
    matched_cost: list[Matched]
    matched_reward: list[Matched]
    pairwise: list[PairRow]
    scripted: bool
    notes: list[str] = Field(default_factory=list)


def _line(runs: list[RunData]) -> list[RunData]:
    return sorted((r for r in runs if r.cost.baseline), key=lambda r: (r.cost.tokens, r.cost.label))


def _pairs(line: list[RunData]) -> list[tuple[RunData, RunData]]:
    return list(pairwise(line))


def _on_or_below(a: RunData, b: RunData, c: RunData) -> bool:
    """Whether b lies on or below the segment from a to c (costs a < b < c)."""
    ax, bx, cx = a.cost.tokens, b.cost.tokens, c.cost.tokens
    ay, by, cy = a.cost.reward, b.cost.reward, c.cost.reward
    return (by - ay) * (cx - ax) <= (cy - ay) * (bx - ax)


def frontier(line: list[RunData]) -> list[RunData]:
    """The line's upper concave envelope, cheapest first: the runs a baseline with a budget
    would use. A run is left out when a cheaper one scores at least as much (it is dominated) or
    when mixing two others task by task reaches more at its cost."""
    hull: list[RunData] = []
    for run in line:  # sorted by cost
        if hull and run.cost.reward <= hull[-1].cost.reward:
            continue  # costs at least as much and scores no more
        while hull and hull[-1].cost.tokens >= run.cost.tokens:
            hull.pop()  # same cost, less reward
        while len(hull) >= 2 and _on_or_below(hull[-2], hull[-1], run):
            hull.pop()
        hull.append(run)
    return hull


def at_cost(
    target: RunData, line: list[RunData], clusters: list[str] | None, tolerance: float
) -> Matched:
    """The target's reward against the baseline's reward at the target's cost."""
    c = target.cost.tokens
    name = target.cost.label
    hull = frontier(line)
    near = [r for r in hull if c > 0 and abs(r.cost.tokens / c - 1.0) <= tolerance]
    ref: npt.NDArray[np.float64] | None = None
    top = hull[-1]
    if near:
        best = min(near, key=lambda r: abs(r.cost.tokens - c))
        ref, label, ref_tokens, interp = best.reward, best.cost.label, best.cost.tokens, False
    elif c > top.cost.tokens and line[-1].cost.tokens >= c * (1 - tolerance):
        # Measured out to the target's cost, and spending more than `top` bought no reward.
        dearer = ", ".join(r.cost.label for r in line if r.cost.tokens > top.cost.tokens)
        ref, ref_tokens, interp = top.reward, top.cost.tokens, False
        label = f"{top.cost.label} (the line's best at this cost; {dearer} cost more, scored less)"
    else:
        for lo, hi in _pairs(hull):
            if lo.cost.tokens <= c <= hi.cost.tokens and hi.cost.tokens > lo.cost.tokens:
                w = (c - lo.cost.tokens) / (hi.cost.tokens - lo.cost.tokens)
                ref = (1 - w) * lo.reward + w * hi.reward
                label = f"{lo.cost.label} ↔ {hi.cost.label} (w={w:.2f})"
                ref_tokens, interp = c, True
                break
    if ref is None:
        lo_c, hi_c = line[0].cost.tokens, line[-1].cost.tokens
        return Matched(
            kind="cost",
            target=name,
            available=False,
            at=c,
            verdict=(
                f"not available: the baseline runs cost {lo_c:,.0f}-{hi_c:,.0f} tokens/task and "
                f"{name} costs {c:,.0f}; run the baseline with a budget of about {c:,.0f} "
                "tokens per task (Attempts(model, n=..., budget_tokens=...))"
            ),
        )
    d = paired(target.reward, ref, clusters)
    if d.lower is not None and d.lower > 0:
        verdict = f"{name} is better at matched cost ({d.diff:+.3f} reward)"
    elif d.upper is not None and d.upper < 0:
        verdict = f"the baseline is better at matched cost ({d.diff:+.3f} reward for {name})"
    else:
        verdict = f"no detectable difference at matched cost ({d.diff:+.3f} reward)"
    return Matched(
        kind="cost",
        target=name,
        available=True,
        reference=label,
        at=c,
        reference_value=float(ref.mean()),
        diff=d,
        ratio=c / ref_tokens if ref_tokens > 0 else None,
        interpolated=interp,
        verdict=verdict,
    )


def at_reward(
    target: RunData, line: list[RunData], clusters: list[str] | None, margin: float
) -> Matched:
    """The target's tokens against the baseline's tokens at the target's reward."""
    goal = target.cost.reward
    name = target.cost.label
    ref: npt.NDArray[np.float64] | None = None
    # Where the line, walked from its cheapest run, first reaches the goal. A line need not rise
    # with cost (more attempts can vote worse), and a crossing on a falling segment would price
    # the baseline at a cost it had already beaten more cheaply.
    first = next((i for i, r in enumerate(line) if r.cost.reward >= goal), None)
    if first is None:  # nothing reaches it: the cheapest run within the margin below, if any
        near = [r for r in line if goal - r.cost.reward <= margin]
        if near:
            ref, label, interp = near[0].tokens, near[0].cost.label, False
    elif first == 0:  # the cheapest run reaches it: a match only if within the margin
        if line[0].cost.reward - goal <= margin:
            ref, label, interp = line[0].tokens, line[0].cost.label, False
    else:
        lo, hi = line[first - 1], line[first]
        w = (goal - lo.cost.reward) / (hi.cost.reward - lo.cost.reward)
        ref = (1 - w) * lo.tokens + w * hi.tokens
        label, interp = f"{lo.cost.label} ↔ {hi.cost.label} (w={w:.2f})", True
    if ref is None:
        top = max(line, key=lambda r: r.cost.reward)
        if top.cost.reward < goal:
            why = (
                f"no baseline run reaches reward {goal:.3f} (best {top.cost.reward:.3f} at "
                f"{top.cost.tokens:,.0f} tokens/task): give the baseline a larger budget"
            )
        else:
            why = (
                f"the cheapest baseline run ({line[0].cost.label}, {line[0].cost.tokens:,.0f} "
                f"tokens/task) already has more reward than {goal:.3f}: run the baseline with "
                "a smaller budget"
            )
        return Matched(
            kind="reward", target=name, available=False, at=goal, verdict="not available: " + why
        )
    d = paired(target.tokens, ref, clusters)
    ref_mean = float(ref.mean())
    ratio = target.cost.tokens / ref_mean if ref_mean > 0 else None
    share = "n/a" if ratio is None else f"{ratio:.0%}"
    if d.upper is not None and d.upper < 0:
        verdict = f"{name} needs {share} of the baseline's tokens at matched reward"
    elif d.lower is not None and d.lower > 0:
        verdict = f"{name} needs {share} of the baseline's tokens at matched reward: it costs more"
    else:
        verdict = f"no detectable cost difference at matched reward ({share} of the tokens)"
    return Matched(
        kind="reward",
        target=name,
        available=True,
        reference=label,
        at=goal,
        reference_value=ref_mean,
        diff=d,
        ratio=ratio,
        interpolated=interp,
        verdict=verdict,
    )


def compare(
    paths: Sequence[Path],
    *,
    baseline: Sequence[Path] = (),
    tolerance: float = 0.10,
    margin: float = 0.05,
) -> Comparison:
    """Compare runs of one environment at equal cost; `baseline` runs form the line (default:
    the first run)."""
    if not 0 <= tolerance < 1 or not 0 <= margin < 1:
        raise ConfigError("--tolerance and --margin are fractions in [0, 1), e.g. 0.1 and 0.05")
    paths = list(dict.fromkeys([*baseline, *paths]))
    base = list(baseline) or [paths[0]]
    runs, families, notes, env = load(paths, base)
    clusters = families if len(set(families)) >= 2 else None
    line = _line(runs)
    targets = [r for r in runs if not r.cost.baseline]
    if not targets:
        raise ConfigError("every run is a baseline run: give at least one run to compare with them")
    matched_cost = [at_cost(t, line, clusters, tolerance) for t in targets]
    matched_reward = [at_reward(t, line, clusters, margin) for t in targets]
    pairwise = [
        PairRow(
            target=t.cost.label,
            reference=b.cost.label,
            reward=paired(t.reward, b.reward, clusters),
            tokens=paired(t.tokens, b.tokens, clusters),
            ratio=t.cost.tokens / b.cost.tokens if b.cost.tokens > 0 else None,
        )
        for t in targets
        for b in line
    ]
    if any(m.interpolated for m in [*matched_cost, *matched_reward]):
        notes.append(INTERPOLATION_NOTE)
    scripted = any(r.cost.scripted for r in runs)
    if any(r.cost.model == "scripted/oracle" for r in runs):
        notes.append(ORACLE_NOTE)
    if scripted:
        notes.insert(0, SCRIPTED_NOTE)
    return Comparison(
        env_id=env["env_id"],
        env_hash=env["env_hash"],
        items=len(families),
        families=len(set(families)),
        tolerance=tolerance,
        margin=margin,
        runs=[r.cost for r in runs],
        matched_cost=matched_cost,
        matched_reward=matched_reward,
        pairwise=pairwise,
        scripted=scripted,
        notes=notes,
    )
