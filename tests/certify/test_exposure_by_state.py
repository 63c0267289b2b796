"""Exposure bias by state (decision 0198) and oracles with several right next actions.

The doubles are test doubles: each acts on the state alone, or is lost after its own text, so
its exposure bias is known in advance. `scripted/toy-examples-agent` acts on the state alone, and
its first step is harder than its second: decision 0180's "on own steps" reads that step mix as
exposure bias, which is why the by-state estimator exists.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from tests.certify.test_exposure_bias import Double, lost_on_its_own_text, slips_on_the_last_step

from workgym.certify.exposure_bias import OwnScore, on_own_states, state_rates
from workgym.certify.imitation_gap import ImitationReport, measure
from workgym.certify.teacher_forcing import StepScore, TaskScore, score_task
from workgym.core.environment import Environment
from workgym.core.messages import Message, ToolCall
from workgym.core.model import Completion, Sampling
from workgym.core.next_action import SeveralNextActions, next_action_oracle, right_next
from workgym.core.tasks import Task
from workgym.core.tools import ToolSpec
from workgym.envs.lookup.env import Lookup
from workgym.envs.toy_examples.env import ToyExamples, ToyExamplesAgent
from workgym.run.gold import gold_trajectory


class ToolPath(ToyExamples):
    """toy-examples whose gold trajectory is the tool path (as `bench/toy-examples-c1`)."""

    id = "test/toy-examples-tool-path"

    def oracle(self, task: Task) -> list[Message]:
        replied = [Message(role="tool", content=str(task.answer))]
        return [self.next_actions(task, [])[0], self.next_actions(task, replied)[0]]


class LeavesOutTheGold(ToolPath):
    """A broken oracle: its right actions never include the gold transform call."""

    id = "test/toy-examples-broken-oracle"

    def next_actions(self, task: Task, messages: list[Message]) -> list[Message]:
        return super().next_actions(task, messages)[1:] or super().next_actions(task, messages)


def _call(name: str, **args: object) -> Message:
    return Message(
        role="assistant",
        tool_calls=[ToolCall(id=f"c_{name}", name=name, arguments=json.dumps(args))],
    )


class Answers:
    """Submits the worked-out answer at once: right from the start by toy-examples' oracle."""

    name = "scripted/answers-at-once"

    def __init__(self, task: Task) -> None:
        self.task = task

    async def complete(
        self, messages: list[Message], tools: list[ToolSpec], sampling: Sampling
    ) -> Completion:
        return Completion(message=_call("submit", answer=str(self.task.answer)))


def measured(env: Environment, models: dict[str, Any], out: Path, **kw: Any) -> ImitationReport:
    return asyncio.run(measure(env, models, split="train", out=out, progress=False, **kw))


def test_toy_examples_declares_several_right_actions_until_a_reply_holds_the_answer() -> None:
    env = ToyExamples()
    task = env.taskset.split("train")[0]
    oracle = next_action_oracle(env)
    assert oracle is not None and isinstance(env, SeveralNextActions)
    start = [(m.tool_calls[0].name, json.loads(m.tool_calls[0].arguments))
             for m in right_next(oracle, task, [])]  # fmt: skip
    word, kind = task.meta["word"], task.meta["kind"]
    assert start == [("transform", {"kind": kind, "word": word}),
                     ("submit", {"answer": task.answer})]  # fmt: skip
    wrong = [_call("transform", kind="upper", word="zzz"), Message(role="tool", content="ZZZ")]
    assert right_next(oracle, task, wrong) == right_next(oracle, task, [])  # nothing learned
    replied = [*wrong, Message(role="tool", content=str(task.answer))]
    only = right_next(oracle, task, replied)
    assert [m.tool_calls[0].name for m in only] == ["submit"]
    assert env.next_action(task, []).tool_calls[0].name == "transform"  # the canonical first


def test_teacher_forcing_counts_any_right_action_and_refuses_an_oracle_without_the_gold() -> None:
    env = ToolPath()
    task = env.taskset.split("train")[0]
    gold = asyncio.run(gold_trajectory(env, task, ""))
    score = asyncio.run(score_task(Answers(task), "scripted/answers-at-once", env, task, gold))
    # Step 1 (transform expected) is matched by the submission; so is step 2.
    assert [s.matched for s in score.steps] == [True, True]
    assert " | " in score.steps[0].gold and " | " not in score.steps[1].gold
    broken = LeavesOutTheGold()
    with pytest.raises(ValueError, match="leaves out the gold step"):
        asyncio.run(score_task(Answers(task), "x", broken, task, gold))


def test_a_state_only_agent_has_no_exposure_bias_by_state_where_on_own_steps_sees_some(
    tmp_path: Path,
) -> None:
    """The 0198 known answer: the toy-examples agent acts on the state alone (its misses end the
    episode at the hard first step), so the truth is 0; on own steps reads the step mix."""
    agent = ToyExamplesAgent()
    report = measured(
        ToolPath(), {agent.name: agent}, tmp_path, epochs=4,
        sampling=Sampling(temperature=0.6),
    )  # fmt: skip
    (e,) = report.exposure
    assert e.by_state == 0.0 and e.by_state_matched == e.by_state_own_steps > 0
    assert e.off_gold_steps == 0  # its misses submit the word unchanged, which ends the episode
    assert e.exposure_bias > 0.05  # decision 0180's estimator: a false positive here
    assert e.gold_by_position[0] < e.gold_by_position[1]  # the first step is the hard one


def test_compounding_own_errors_show_by_state_and_a_memoryless_slip_does_not(
    tmp_path: Path,
) -> None:
    lost = Double("scripted/lost-on-its-own-text", lost_on_its_own_text)
    slips = Double("scripted/slips-on-the-last-step", slips_on_the_last_step)
    report = measured(Lookup(), {lost.name: lost, slips.name: slips}, tmp_path, limit=56)
    by = {e.model: e for e in report.exposure}
    assert by[lost.name].by_state is not None and by[lost.name].by_state > 0.5
    assert by[lost.name].off_gold_steps > 0 and by[lost.name].off_gold_observed == 0.0
    assert by[slips.name].by_state == 0.0  # it slips on the gold prefix exactly as on its own
    assert by[slips.name].off_gold_steps == 0  # and every slip ends its episode


def test_own_steps_from_a_state_no_gold_step_shares_are_left_out_and_counted() -> None:
    step = lambda gold, ok: StepScore(index=0, matched=ok, predicted="p", gold=gold)  # noqa: E731
    gold = [
        TaskScore(model="m", task_id="t", family="f", steps=[step("a", True), step("b", False)]),
        TaskScore(
            model="m", task_id="t", family="f", epoch=1, steps=[step("a", False), step("b", False)]
        ),
    ]
    rates = state_rates(gold)
    assert rates == {("t", "a"): 0.5, ("t", "b"): 0.0}
    own = [OwnScore(model="m", task_id="t", family="f", epoch=0, success=False,
                    steps=[step("a", False), step("c", True), step("b", False)])]  # fmt: skip
    got = on_own_states(rates, own)
    assert got is not None
    assert (got.matched, got.own_steps) == (2, 3)
    assert got.expected == pytest.approx(0.25) and got.observed == 0.0
    assert got.bias == pytest.approx(0.25)
    # After the first miss ("a"), "c" has no gold state and "b" is the one off-gold step.
    assert (got.off_gold, got.off_gold_expected, got.off_gold_observed) == (1, 0.0, 0.0)
    assert on_own_states({}, own) is None
