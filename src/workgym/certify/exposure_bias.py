"""Exposure bias in one unit: a model's step accuracy on the gold prefix against its own prefix.

Teacher forcing asks, at each step of the gold trajectory, whether the model's next action is the
gold one. Exposure bias is what that leaves out: in its own episodes the model conditions on
its own earlier steps, and an imitation-trained model may do worse there than on the gold
prefixes it was trained on (Arora et al. 2022, "Why Exposure Bias Matters"). Both numbers here
are *per-step action accuracies*, so their difference has null 0 and no free-success term in it
(unlike the old gap, per-step rate minus task success, whose slope against 1 - success is mostly
definitional: docs/imitation.md):

- gold-prefix accuracy: the teacher-forced per-step rate (`teacher_forcing`);
- own-prefix accuracy: every assistant step of the model's free-running episodes, labelled by
  the environment's state-conditional oracle (`core.next_action`): was it the right next action
  from the state the model itself had reached? Compared with the same `action_key` as teacher
  forcing, so the two rates are one unit.

Exposure bias, per cell: over the model's own steps, the share its gold-prefix accuracy says it
would get right minus the share it got right. Each task's gold-prefix rate is weighted by the
number of own steps the task's episodes took, so both shares fall on the same steps:

    exposure bias = sum_t (tf_t x N_t - S_t) / sum_t N_t

where task t's episodes took N_t own steps and got S_t right. Under the null (a model whose
accuracy is the same on any prefix), each own step of task t is right with the task's rate, so
E[S_t] = tf-rate_t x E[N_t] by optional stopping, and the teacher-forced draws are independent of
the episodes: the numerator has mean exactly 0. The obvious alternative, averaging each episode's
share of right steps, is biased under that null because an episode's length depends on its
errors (a wrong submission ends it, a wrong lookup lengthens it): `bench/exposure_null_sim.py`
measures up to 0.17 either way (decision 0180). Positive: the model is worse on its own prefixes
than on the gold ones.

That null has a blind spot: it takes a task's accuracy to be one rate at every step. Where steps
differ in difficulty (choosing a tool call is harder than submitting the value it returned) and
a wrong step shortens or lengthens the episode, the own steps hold a different mix of hard and
easy steps than the gold ones, and the estimator moves with no exposure bias at all
(`bench/exposure_null_sim.py --positions`, decision 0198). So each step is also compared with
its own state: an own step whose right next actions are those of a gold step of the same task
(the same `state_label`) expects the gold-prefix accuracy at *that* step,

    exposure bias by state = sum over matched own steps of (tf_{t,s} - right) / (matched own steps)

whose null is "the model acts as well from a state it reached by itself as from the gold state
that needs the same next action": mean 0 by the same optional-stopping argument, whatever the
steps' difficulties. Own steps from a state no gold step shares are left out and counted.

The compounding prediction sets the per-step teacher-forced accuracy beside observed free
success: if steps failed independently at their teacher-forced rates and any failed step lost
the task, a task of n steps would succeed with the product of the per-position accuracies.
Observed free success below that prediction is the compounding teacher forcing hides.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import TYPE_CHECKING

from pydantic import BaseModel

from workgym.certify.teacher_forcing import (
    StepScore,
    TaskScore,
    action_key,
    action_text,
    state_label,
)
from workgym.core.next_action import right_next

if TYPE_CHECKING:
    from workgym.core.episode import Episode
    from workgym.core.next_action import NextActionOracle
    from workgym.core.tasks import Task

OWN = "own_prefix.jsonl"


class OwnScore(BaseModel):
    """One free-running episode, every assistant step labelled by the state-conditional oracle."""

    model: str
    task_id: str
    family: str
    epoch: int
    success: bool
    steps: list[StepScore]
    """One entry per assistant step of the episode; `gold` is the oracle's label there."""

    @property
    def step_rate(self) -> float:
        """Share of the episode's own steps that were the right next action."""
        return sum(s.matched for s in self.steps) / len(self.steps) if self.steps else 0.0


def score_episode(
    oracle: NextActionOracle, task: Task, episode: Episode, model: str
) -> OwnScore | None:
    """Label each assistant step of an episode; None for an episode without one (it errored
    before the model answered, so there is no own step to label)."""
    steps: list[StepScore] = []
    for i, message in enumerate(episode.messages):
        if message.role != "assistant":
            continue
        rights = right_next(oracle, task, episode.messages[:i])
        steps.append(
            StepScore(
                index=i,
                matched=action_key(message) in [action_key(r) for r in rights],
                predicted=action_text(message),
                gold=state_label(rights),
            )
        )
    if not steps:
        return None
    return OwnScore(
        model=model,
        task_id=task.id,
        family=task.family,
        epoch=episode.epoch,
        success=episode.success,
        steps=steps,
    )


def own_counts_by_task(scores: list[OwnScore]) -> dict[str, tuple[int, int]]:
    """Own steps right and own steps taken per task, summed over its episodes (each step weighs
    the same; a per-episode share would let an episode's length, which its errors set, weigh)."""
    right: dict[str, int] = defaultdict(int)
    taken: dict[str, int] = defaultdict(int)
    for score in scores:
        right[score.task_id] += sum(s.matched for s in score.steps)
        taken[score.task_id] += len(score.steps)
    return {k: (right[k], taken[k]) for k in taken}


def on_own_steps(
    gold_rate: dict[str, float], own: dict[str, tuple[int, int]]
) -> tuple[float, float] | None:
    """(gold-prefix accuracy weighted by each task's own steps, the own-prefix accuracy) over the
    tasks in `gold_rate`; their difference is the exposure bias. None when no task has an own
    step (every episode errored before the model acted)."""
    steps = sum(own.get(t, (0, 0))[1] for t in gold_rate)
    if not steps:
        return None
    expected = sum(rate * own.get(t, (0, 0))[1] for t, rate in gold_rate.items())
    right = sum(own.get(t, (0, 0))[0] for t in gold_rate)
    return expected / steps, right / steps


def state_rates(scores: list[TaskScore]) -> dict[tuple[str, str], float]:
    """Gold-prefix accuracy per (task, state label), over every draw of the task's gold steps
    taken from that state."""
    hits: dict[tuple[str, str], list[bool]] = defaultdict(list)
    for score in scores:
        for step in score.steps:
            hits[(score.task_id, step.gold)].append(step.matched)
    return {k: sum(v) / len(v) for k, v in hits.items()}


class ByState(BaseModel):
    """Own steps set beside the gold-prefix accuracy of the gold state with the same label."""

    expected: float
    """Mean gold-prefix accuracy of the matched own steps' states."""
    observed: float
    """Share of the matched own steps that were right."""
    matched: int
    """Own steps whose state a gold step of the same task shares."""
    own_steps: int
    """Every own step of the scores."""
    off_gold: int = 0
    """Matched own steps taken after the episode's own first wrong step, whose prefixes hold
    one of the model's own mistakes. A model whose every miss ends its episode has none; its
    own prefixes are then the gold ones up to wording, and its by-state number compares the
    same states drawn twice: no evidence either way."""
    off_gold_expected: float | None = None
    off_gold_observed: float | None = None
    """The two accuracies on those steps alone."""

    @property
    def bias(self) -> float:
        return self.expected - self.observed


def on_own_states(gold: dict[tuple[str, str], float], own: list[OwnScore]) -> ByState | None:
    """Exposure bias by state (module docstring): None when no own step's state has a gold
    counterpart."""
    expected = off_expected = 0.0
    right = matched = total = off = off_right = 0
    for score in own:
        erred = False
        for step in score.steps:
            total += 1
            rate = gold.get((score.task_id, step.gold))
            if rate is not None:
                matched += 1
                expected += rate
                right += step.matched
                if erred:
                    off += 1
                    off_expected += rate
                    off_right += step.matched
            erred = erred or not step.matched
    if not matched:
        return None
    return ByState(
        expected=expected / matched,
        observed=right / matched,
        matched=matched,
        own_steps=total,
        off_gold=off,
        off_gold_expected=off_expected / off if off else None,
        off_gold_observed=off_right / off if off else None,
    )


def position_accuracy(scores: list[TaskScore]) -> list[float]:
    """Gold-prefix accuracy at each step position (1st, 2nd, ...), over the tasks that have it."""
    hits: dict[int, list[bool]] = defaultdict(list)
    for score in scores:
        for k, step in enumerate(score.steps):
            hits[k].append(step.matched)
    return [sum(hits[k]) / len(hits[k]) for k in range(len(hits))]


def own_position_accuracy(scores: list[OwnScore]) -> list[float]:
    """Own-prefix accuracy at each step position, over the episodes that reached it."""
    hits: dict[int, list[bool]] = defaultdict(list)
    for score in scores:
        for k, step in enumerate(score.steps):
            hits[k].append(step.matched)
    return [sum(hits[k]) / len(hits[k]) for k in range(len(hits))]


def predicted_success(scores: list[TaskScore]) -> float:
    """Mean over tasks of the product of the per-position gold-prefix accuracies up to the
    task's length: the success the teacher-forced rates predict if errors were independent and
    each lost the task. (Per task, greedy matches are 0 or 1, so the product is taken over the
    cell's per-position rates, not the task's own matches, which would give the all-steps rate.)"""
    if not scores:
        return math.nan
    rates = position_accuracy(scores)
    return sum(math.prod(rates[: len(s.steps)]) for s in scores) / len(scores)
