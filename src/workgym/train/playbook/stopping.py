"""When the loop stops: the budget, an iteration or epoch cap, repeated rejections, a plateau.

A pure function of the loop's counters, checked before every iteration, so each rule can be tested
on its own and a resumed run stops exactly where an uninterrupted one does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

StopReason = Literal["budget", "max_iterations", "max_epochs", "rejections", "plateau"]


@dataclass(frozen=True)
class StopRules:
    max_epochs: int = 3
    max_iterations: int | None = None
    patience: int = 3  # iterations in a row with no accepted change
    plateau: int = 3  # checkpoints in a row that did not beat the best on dev-select


@dataclass(frozen=True)
class LoopCounters:
    iterations_done: int = 0
    epoch: float = 0.0  # passes over the train tasks completed (fractional)
    rejections_in_a_row: int = 0
    checkpoints_since_best: int = 0
    budget_allows_next: bool = True


def should_stop(rules: StopRules, c: LoopCounters) -> StopReason | None:
    """The first rule that says stop, in a fixed order (the budget first: it is a hard limit)."""
    if not c.budget_allows_next:
        return "budget"
    if rules.max_iterations is not None and c.iterations_done >= rules.max_iterations:
        return "max_iterations"
    if c.epoch >= rules.max_epochs:
        return "max_epochs"
    if rules.patience > 0 and c.rejections_in_a_row >= rules.patience:
        return "rejections"
    if rules.plateau > 0 and c.checkpoints_since_best >= rules.plateau:
        return "plateau"
    return None
