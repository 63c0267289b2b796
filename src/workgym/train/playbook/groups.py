"""Groups of rollouts: group advantages and the contrastive selection the reflector sees.

- Advantage within a group of G rollouts of one task: (r - mean) / (std + eps). A group is
  `contrastive` (rewards differ), `all-pass` or `all-fail`; only contrastive groups say which
  behaviour earned reward, so they are the ones the reflector sees first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from statistics import fmean, pstdev
from typing import Literal

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
