from __future__ import annotations

import pytest

from workgym.core.tasks import Task
from workgym.train.playbook.sampling import TaskSampler
from workgym.train.playbook.stopping import LoopCounters, StopRules, should_stop

RULES = StopRules(max_epochs=3, max_iterations=10, patience=2, plateau=2)


def test_no_rule_fires_on_a_fresh_run() -> None:
    assert should_stop(RULES, LoopCounters()) is None


@pytest.mark.parametrize(
    ("counters", "reason"),
    [
        (LoopCounters(budget_allows_next=False), "budget"),
        (LoopCounters(iterations_done=10), "max_iterations"),
        (LoopCounters(epoch=3.0), "max_epochs"),
        (LoopCounters(rejections_in_a_row=2), "rejections"),
        (LoopCounters(checkpoints_since_best=2), "plateau"),
    ],
)
def test_each_stopping_rule(counters: LoopCounters, reason: str) -> None:
    assert should_stop(RULES, counters) == reason


def test_rules_below_their_thresholds_do_not_fire() -> None:
    assert (
        should_stop(
            RULES,
            LoopCounters(
                iterations_done=9, epoch=2.99, rejections_in_a_row=1, checkpoints_since_best=1
            ),
        )
        is None
    )
    assert should_stop(StopRules(max_iterations=None), LoopCounters(iterations_done=10**6)) is None


def test_the_budget_is_checked_first() -> None:
    everything = LoopCounters(
        iterations_done=10,
        epoch=5,
        rejections_in_a_row=9,
        checkpoints_since_best=9,
        budget_allows_next=False,
    )
    assert should_stop(RULES, everything) == "budget"


TASKS = [Task(id=f"t{i}", family=f"f{i}", prompt=str(i)) for i in range(10)]


def test_sampler_passes_over_the_train_split_in_seeded_epochs() -> None:
    s = TaskSampler(TASKS, seed=1, replay_fraction=0.0)
    seen = [t.id for _ in range(4) for t in s.next_batch(5)[0]]
    assert sorted(seen[:10]) == sorted(t.id for t in TASKS)  # first epoch covers every task once
    assert s.epoch == 1 and s.epoch_progress == pytest.approx(2.0)
    again = TaskSampler(TASKS, seed=1, replay_fraction=0.0)
    assert [t.id for t in again.next_batch(5)[0]] == seen[:5]
    other = TaskSampler(TASKS, seed=2, replay_fraction=0.0)
    assert [t.id for t in other.next_batch(10)[0]] != seen[:10]
    with pytest.raises(ValueError, match="no train tasks"):
        TaskSampler([])


def test_failure_replay_buffer() -> None:
    s = TaskSampler(TASKS, seed=0, replay_fraction=0.5, max_replays=2)
    batch, replayed = s.next_batch(4)
    assert replayed == []
    s.observe("t3", 0.0, all_pass=False, threshold=0.5)
    s.observe("t4", 0.8, all_pass=False, threshold=0.5)  # doing fine: not replayed
    s.observe("t5", 0.2, all_pass=False, threshold=0.5)
    batch, replayed = s.next_batch(4)
    assert replayed == ["t3", "t5"] and [t.id for t in batch[:2]] == ["t3", "t5"]
    assert len({t.id for t in batch}) == 4
    s.observe("t3", 1.0, all_pass=True, threshold=0.5)  # solved: leaves the buffer
    s.observe("t5", 0.0, all_pass=False, threshold=0.5)
    _, replayed = s.next_batch(4)
    assert replayed == ["t5"]
    s.observe("t5", 0.0, all_pass=False, threshold=0.5)  # replayed twice: leaves
    assert s.next_batch(4)[1] == []
