from __future__ import annotations

import asyncio

import pytest

from workgym.train.playbook.gate import bisect, gate_a, gate_b
from workgym.train.playbook.groups import Group, advantages, classify, select_contrastive


def test_group_advantages() -> None:
    adv = advantages([1.0, 0.0, 0.0, 1.0])
    assert adv == pytest.approx([1.0, -1.0, -1.0, 1.0], abs=1e-5)
    assert advantages([1.0, 1.0, 1.0]) == [0.0, 0.0, 0.0] and advantages([]) == []
    assert sum(advantages([0.2, 0.5, 0.9])) == pytest.approx(0.0)


def test_classify_groups() -> None:
    assert classify([1, 0, 1], [True, False, True]) == "contrastive"
    assert classify([1, 1], [True, True]) == "all-pass"
    assert classify([0, 0], [False, False]) == "all-fail"
    assert classify([0.5, 0.5], [False, False]) == "all-fail"  # flat partial credit


def g(task: str, *rewards: float) -> Group:
    return Group(
        task,
        rewards,
        tuple(r == 1.0 for r in rewards),
        tuple(f"{task}/{i}" for i in range(len(rewards))),
    )


def test_contrastive_selection_prefers_spread_then_failures_never_passes() -> None:
    groups = [
        g("pass", 1, 1, 1),
        g("weak", 1, 0, 0, 0, 0),
        g("fail", 0, 0, 0),
        g("even", 1, 1, 0, 0),
        g("even2", 0, 1, 0, 1),
        g("empty"),
    ]
    assert [x.task_id for x in select_contrastive(groups, 3)] == ["even", "even2", "weak"]
    assert [x.task_id for x in select_contrastive(groups, 9)] == ["even", "even2", "weak", "fail"]


def test_gate_a_must_not_do_worse() -> None:
    assert gate_a([1.0, 0.5], [0.5, 0.5]).passed
    assert gate_a([0.5, 0.5], [0.5, 0.5]).passed  # holding is not doing worse
    res = gate_a([0.4, 0.5], [0.5, 0.5])
    assert not res.passed and res.diff == pytest.approx(-0.05) and "tolerance" in res.reason
    assert gate_a([0.4, 0.5], [0.5, 0.5], tolerance=0.05).passed
    with pytest.raises(ValueError, match="same non-empty"):
        gate_a([1.0], [1.0, 0.0])


def test_gate_b_rise_needs_more_than_one_paired_standard_error() -> None:
    rise = gate_b([1, 1, 1, 1], [0, 0, 1, 0], tokens_candidate=100, tokens_baseline=100)
    assert rise.passed and rise.rule == "rise" and rise.diff == pytest.approx(0.75)
    assert rise.se == pytest.approx(0.25)
    noisy = gate_b([1, 0, 1, 0], [0, 1, 0, 0], tokens_candidate=100, tokens_baseline=100)
    assert noisy.diff == pytest.approx(0.25) and noisy.diff <= noisy.se and not noisy.passed
    same = gate_b([1, 0], [1, 0], tokens_candidate=100, tokens_baseline=100)
    assert same.rule == "none" and not same.passed


def test_gate_b_hold_needs_reward_held_and_tokens_down_by_tau() -> None:
    hold = gate_b([1, 0, 1], [1, 0, 1], tokens_candidate=85, tokens_baseline=100)
    assert hold.passed and hold.rule == "hold" and hold.token_change == pytest.approx(-0.15)
    small = gate_b([1, 0, 1], [1, 0, 1], tokens_candidate=95, tokens_baseline=100)
    assert not small.passed  # only 5% cheaper
    drop = gate_b([1, 0, 0.9], [1, 0, 1], tokens_candidate=50, tokens_baseline=100)
    assert not drop.passed and drop.diff < -0.02  # reward comes before token savings
    slight = gate_b(
        [1, 0, 0.97], [1, 0, 1], tokens_candidate=50, tokens_baseline=100, hold_delta=0.02
    )
    assert slight.passed and slight.rule == "hold"


def test_gate_b_refuses_a_rise_the_audit_reward_does_not_share() -> None:
    res = gate_b(
        [1, 1, 1],
        [0, 0, 0],
        tokens_candidate=100,
        tokens_baseline=100,
        audit_candidate=[0, 0, 0],
        audit_baseline=[0, 0, 0],
    )
    assert res.rule == "rise" and res.audit_flagged and not res.passed and "audit" in res.reason
    with pytest.raises(ValueError, match="two paired"):
        gate_b([1], [0], tokens_candidate=1, tokens_baseline=1)


def test_bisection_isolates_the_bad_delta_and_judges_halves_in_order() -> None:
    tried: list[list[str]] = []
    accepted: list[str] = []

    async def attempt(batch: list[str]) -> bool:
        tried.append(list(batch))
        ok = "bad" not in batch
        if ok:
            accepted.extend(batch)
        return ok

    asyncio.run(bisect(["good", "bad", "other"], attempt))
    assert tried == [["good", "bad", "other"], ["good", "bad"], ["good"], ["bad"], ["other"]]
    assert accepted == ["good", "other"]
    tried.clear()
    asyncio.run(bisect(["bad"], attempt))
    assert tried == [["bad"]]
    tried.clear()
    asyncio.run(bisect([], attempt))
    assert tried == []
