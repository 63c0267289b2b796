"""A GRPO run whose groups all scored alike says it had no gradient (seen on the real model:
lookup v2, 3 steps, 0/4 groups with reward variance in every step)."""

from __future__ import annotations

from workgym.train.trl.grpo import no_signal_hint
from workgym.train.trl.rollout import RolloutStats


def point(step: int, varied: int, reward: float) -> RolloutStats:
    return RolloutStats(
        step=step, episodes=16, mean_reward=reward, success_rate=reward,
        groups_with_variance=varied, groups=4,
    )  # fmt: skip


def test_every_group_alike_warns_with_what_to_change() -> None:
    hint = no_signal_hint([point(0, 0, 0.0), point(1, 0, 0.25)])
    assert "in all 2 steps" in hint and "no gradient" in hint and "--num-generations" in hint


def test_one_varied_group_anywhere_is_signal() -> None:
    assert no_signal_hint([point(0, 0, 0.0), point(1, 1, 0.25)]) == ""
    assert no_signal_hint([]) == ""
