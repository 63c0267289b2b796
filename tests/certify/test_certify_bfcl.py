"""`suites/bfcl`: BFCL's own answers pass, mutated answers fail (skips without [suites])."""

from __future__ import annotations

import json

import pytest

import workgym as wg

pytest.importorskip("bfcl_eval", reason="needs the [suites] extra")

from workgym.core.messages import Message, ToolCall
from workgym.envs.suites import bfcl_scoring as scoring
from workgym.envs.suites.bfcl import BFCLSuite, build_tasks, oracle_turn, score_turn
from workgym.envs.suites.bfcl_audit import Audit, audit, bfcl_checker, crosscheck


@pytest.fixture(scope="module")
def every_item() -> list[wg.Task]:
    return build_tasks(None, consistent=False)


@pytest.fixture(scope="module")
def result(every_item: list[wg.Task]) -> Audit:
    return audit(every_item)


@pytest.fixture(scope="module")
def suite() -> BFCLSuite:
    return BFCLSuite()


def test_bfcl_answers_pass_on_99_percent_and_every_mutation_fails(result: Audit) -> None:
    assert result.items > 2000
    assert result.answers_correct / result.items >= 0.99
    assert result.options_correct / result.options >= 0.98
    for name in ("wrong_function", "wrong_type", "missing_argument"):
        assert result.mutations[name] > 1500
        assert result.mutations_wrong[name] == result.mutations[name], name
    assert result.mutation_passes == []


def test_every_answer_failure_is_an_item_whose_answer_breaks_its_own_schema(
    result: Audit, suite: BFCLSuite
) -> None:
    failures = result.answer_failures
    reasons = ("must be", "required argument is missing", "not a declared argument")
    assert failures and all(any(r in why for r in reasons) for _, why in failures)
    kept = {t.id for t in suite.taskset}
    assert not kept & {tid for tid, _ in failures}  # such items are left out of the suite


def test_the_suite_is_a_sampled_environment_with_safe_tool_names(suite: BFCLSuite) -> None:
    env = suite
    assert len(env.taskset) > 250 and len(env.taskset.families()) == 9
    task = next(t for t in env.taskset if "." in json.dumps(t.meta["names"]))
    kit = env.toolkit(task)
    assert all("." not in spec.name for spec in kit.specs)
    assert score_turn(task, oracle_turn(task)).success


def test_scoring_semantics(suite: BFCLSuite) -> None:
    task = next(t for t in suite.taskset if t.family == "simple_python")
    turn = oracle_turn(task)
    args = json.loads(turn.tool_calls[0].arguments)
    call = turn.tool_calls[0]
    for bad_args in ("not json", "[1, 2]"):
        bad = Message(
            role="assistant", tool_calls=[call.model_copy(update={"arguments": bad_args})]
        )
        assert score_turn(task, bad).status == wg.Status.parse_error
    twice = Message(role="assistant", tool_calls=[call, call.model_copy(update={"id": "x"})])
    assert not score_turn(task, twice).success
    assert score_turn(task, Message(role="assistant", content="no call")).status == wg.Status.ok
    assert not score_turn(task, None).success
    extra = dict(args, hallucinated=1)
    assert not score_turn(
        task,
        Message(
            role="assistant",
            tool_calls=[ToolCall(id="e", name=call.name, arguments=json.dumps(extra))],
        ),
    ).success
    assert (
        scoring.matches(1.5, 1.5) and scoring.matches(2, 2.0) and not scoring.matches("15", "1.5")
    )
    assert scoring.matches("New  York", "new york") and not scoring.matches(True, 1)


def test_irrelevance_needs_no_call_and_some_words(suite: BFCLSuite) -> None:
    task = next(t for t in suite.taskset if t.family == "irrelevance")
    assert score_turn(task, oracle_turn(task)).success
    assert not score_turn(task, Message(role="assistant", content="")).success
    name = task.meta["tools"][0]["name"]
    called = Message(role="assistant", tool_calls=[ToolCall(id="c", name=name, arguments="{}")])
    assert not score_turn(task, called).success


def test_agrees_with_bfcls_checker_wherever_bfcl_rejects(every_item: list[wg.Task]) -> None:
    if bfcl_checker() is None:
        pytest.skip("BFCL's checker needs bfcl-eval with all its dependencies")
    counts = crosscheck(every_item[:600])
    assert counts is not None
    accepted_by_us_only = sum(n for (_, ours, theirs), n in counts.items() if ours and not theirs)
    assert accepted_by_us_only == 0
    for kind in ("wrong_function", "wrong_type", "missing_argument"):
        assert counts[(kind, False, False)] > 0
