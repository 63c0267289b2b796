"""Group advantages, contrastive selection, and the two gates every change must pass.

- Advantage within a group of G rollouts of one task: (r - mean) / (std + eps). A group is
  `contrastive` (rewards differ), `all-pass` or `all-fail`; only contrastive groups say which
  behaviour earned reward, so they are the ones the reflector sees first.
- Gate A: the candidate re-runs the source tasks with the same seeds and must not do worse.
- Gate B: a paired comparison on a fresh dev subset (same tasks, same seeds, K rollouts each).
  Accept if reward rises by more than one paired standard error, or holds (>= -delta) while
  tokens per task fall by at least tau. Reward comes before token savings. A change that raises
  the primary reward but not the audit reward (flagged successes do not count) is refused.
- A failing batch of several deltas is bisected, so one bad delta cannot sink good ones.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from statistics import fmean, pstdev
from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict

from workgym.stats.tests import paired_t_test

GroupKind = Literal["contrastive", "all-pass", "all-fail"]
EPS = 1e-6


def advantages(rewards: Sequence[float], eps: float = EPS) -> list[float]:
    """Group-relative advantages (population std, as in GRPO); all zero for a flat group."""
    if not rewards:
        return []
    mean, std = fmean(rewards), pstdev(rewards)
    return [(r - mean) / (std + eps) for r in rewards]


def classify(rewards: Sequence[float], successes: Sequence[bool]) -> GroupKind:
    if len(rewards) > 1 and pstdev(rewards) > EPS:
        return "contrastive"
    return "all-pass" if successes and all(successes) else "all-fail"


@dataclass(frozen=True)
class Group:
    """The G rollouts of one task with the current playbook."""

    task_id: str
    rewards: tuple[float, ...]
    successes: tuple[bool, ...]
    refs: tuple[str, ...]  # episode refs, in the order of `rewards`

    @property
    def kind(self) -> GroupKind:
        return classify(self.rewards, self.successes)

    @property
    def mean(self) -> float:
        return fmean(self.rewards) if self.rewards else 0.0

    @property
    def spread(self) -> float:
        return pstdev(self.rewards) if self.rewards else 0.0

    @property
    def advantages(self) -> list[float]:
        return advantages(self.rewards)


def select_contrastive(groups: Sequence[Group], m: int) -> list[Group]:
    """The m groups the reflector sees: most contrastive first (highest reward spread), then
    all-fail groups (failures still teach); all-pass groups teach nothing to a reflector."""
    contrastive = [g for g in groups if g.kind == "contrastive" and g.rewards]
    contrastive.sort(key=lambda g: -g.spread)  # stable: ties keep batch order
    failing = [g for g in groups if g.kind == "all-fail" and g.rewards]
    return (contrastive + failing)[:m]


class GateA(BaseModel):
    model_config = ConfigDict(frozen=True)

    passed: bool
    candidate: float
    baseline: float
    diff: float
    n: int
    reason: str


def gate_a(candidate: Sequence[float], baseline: Sequence[float], tolerance: float = 0.0) -> GateA:
    """Per-task mean rewards on the source tasks, paired by position; not worse (>= -tol)."""
    if len(candidate) != len(baseline) or not candidate:
        raise ValueError("gate A needs the same non-empty list of tasks in both arms")
    cand, base = fmean(candidate), fmean(baseline)
    diff = cand - base
    passed = diff >= -tolerance - 1e-12
    reason = f"source tasks: {cand:.3f} vs {base:.3f} ({diff:+.3f})" + (
        "" if passed else f", worse than the tolerance {tolerance:g}"
    )
    return GateA(
        passed=passed, candidate=cand, baseline=base, diff=diff, n=len(candidate), reason=reason
    )


class GateB(BaseModel):
    model_config = ConfigDict(frozen=True)

    passed: bool
    rule: Literal["rise", "hold", "none"]
    diff: float
    se: float
    n: int
    candidate: float
    baseline: float
    tokens_candidate: float
    tokens_baseline: float
    token_change: float  # relative: -0.2 means 20% fewer tokens per task
    audit_diff: float
    audit_flagged: bool
    reason: str


def gate_b(
    candidate: Sequence[float],
    baseline: Sequence[float],
    *,
    tokens_candidate: float,
    tokens_baseline: float,
    audit_candidate: Sequence[float] | None = None,
    audit_baseline: Sequence[float] | None = None,
    hold_delta: float = 0.02,
    tau: float = 0.10,
) -> GateB:
    """The acceptance rule on per-task mean rewards (paired by position); see the module doc."""
    if len(candidate) != len(baseline) or len(candidate) < 2:
        raise ValueError("gate B needs at least two paired dev tasks")
    test = paired_t_test(candidate, baseline, alternative="two-sided")
    diff, se = test.diff, test.se
    change = (tokens_candidate - tokens_baseline) / tokens_baseline if tokens_baseline else 0.0
    rise = diff > 0 and diff > se
    hold = diff >= -hold_delta and change <= -tau
    rule: Literal["rise", "hold", "none"] = "rise" if rise else ("hold" if hold else "none")
    audit_c = audit_candidate if audit_candidate is not None else candidate
    audit_b = audit_baseline if audit_baseline is not None else baseline
    audit_diff = fmean(audit_c) - fmean(audit_b)
    flagged = rule == "rise" and audit_diff <= 0
    passed = rule != "none" and not flagged
    if flagged:
        reason = f"reward rose {diff:+.3f} but the audit reward did not ({audit_diff:+.3f})"
    elif rule == "rise":
        reason = f"reward rose {diff:+.3f} > 1 SE ({se:.3f})"
    elif rule == "hold":
        reason = f"reward held ({diff:+.3f} >= -{hold_delta:g}) and tokens fell {-change:.0%}"
    else:
        reason = (
            f"reward {diff:+.3f} (SE {se:.3f}) did not rise by more than 1 SE, and tokens "
            f"changed {change:+.0%} (a hold needs >= -{hold_delta:g} and <= -{tau:.0%})"
        )
    return GateB(
        passed=passed,
        rule=rule,
        diff=diff,
        se=se if math.isfinite(se) else 0.0,
        n=len(candidate),
        candidate=fmean(candidate),
        baseline=fmean(baseline),
        tokens_candidate=tokens_candidate,
        tokens_baseline=tokens_baseline,
        token_change=change,
        audit_diff=audit_diff,
        audit_flagged=flagged,
        reason=reason,
    )


T = TypeVar("T")


async def bisect(items: Sequence[T], attempt: Callable[[list[T]], Awaitable[bool]]) -> None:
    """Try the whole batch; if it fails and holds more than one item, try each half in turn.

    `attempt` gates a batch against the current playbook and, on acceptance, makes it the
    current one, so the second half is judged on top of an accepted first half.
    """
    batch = list(items)
    if not batch or await attempt(batch) or len(batch) == 1:
        return
    mid = (len(batch) + 1) // 2
    await bisect(batch[:mid], attempt)
    await bisect(batch[mid:], attempt)
