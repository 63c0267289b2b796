from __future__ import annotations

from typing import Any

from workgym.core.rewards import AllOf, Gate, WeightedSum
from workgym.core.tasks import Task
from workgym.core.verdict import Status, Verdict

TASK = Task(family="f", prompt="p")


def const(name: str, reward: float, success: bool, status: Status = Status.ok) -> Any:
    def scorer(task: Task, episode: Any) -> Verdict:
        return Verdict(reward=reward, success=success, status=status, flags=[f"{name}-flag"])

    scorer.__name__ = name
    return scorer


def test_weighted_sum_normalises_and_names_subscores() -> None:
    v = WeightedSum([(3, const("a", 1.0, True)), (1, const("b", 0.0, False))], threshold=0.75)(
        TASK, None
    )
    assert v.reward == 0.75 and v.success
    assert v.subscores == {"a": 1.0, "b": 0.0}
    assert v.flags == ["a-flag", "b-flag"]
    v = WeightedSum([(1, const("a", 1.0, True)), (1, const("b", 0.0, False))])(TASK, None)
    assert v.reward == 0.5 and not v.success


def test_gate_blocks_partial_credit_when_the_gate_fails() -> None:
    v = Gate(const("parses", 0.0, False, Status.parse_error), const("right", 1.0, True))(TASK, None)
    assert v.reward == 0.0 and not v.success and v.status == Status.parse_error
    v = Gate(const("parses", 1.0, True), const("right", 0.4, False))(TASK, None)
    assert v.reward == 0.4 and v.subscores == {"parses": 1.0, "right": 0.4}


def test_all_of_is_binary_and_reports_worst_status() -> None:
    v = AllOf([const("a", 1.0, True), const("b", 1.0, True)])(TASK, None)
    assert v.reward == 1.0 and v.success
    v = AllOf([const("a", 1.0, True), const("b", 0.9, False, Status.forbidden_action)])(TASK, None)
    assert v.reward == 0.0 and not v.success and v.status == Status.forbidden_action
    assert v.subscores["b"] == 0.9


def test_verifier_error_is_not_trainable() -> None:
    assert not Verdict(status=Status.verifier_error).trainable
    assert Verdict.wrong().trainable
    assert set(Status) == {
        Status.ok,
        Status.no_answer,
        Status.parse_error,
        Status.timeout,
        Status.agent_error,
        Status.forbidden_action,
        Status.verifier_error,
    }


def test_all_or_nothing_says_why_it_failed() -> None:
    ok = Verdict.all_or_nothing([], {"a": 1.0}, {"rows": 3})
    assert ok.success and ok.reward == 1.0 and ok.evidence == {"rows": 3}
    bad = Verdict.all_or_nothing(["missing row 7"], {"a": 0.0}, {"rows": 3}, ["provenance"])
    assert not bad.success and bad.reward == 0.0 and bad.flags == ["provenance"]
    assert bad.evidence == {"rows": 3, "problems": ["missing row 7"]}
