from __future__ import annotations

import asyncio
from typing import Any

import workgym as wg
from conftest import call, turn
from workgym.core.model import Completion, Sampling, Usage
from workgym.envs.toy.env import ToyShop


def play(env: wg.Environment, model: Any, task: wg.Task | None = None) -> wg.Episode:
    task = task or env.taskset.split("dev")[0]
    return asyncio.run(wg.run_episode(env, task, wg.Policy(model), seed=1))


def scripted(*turns: wg.Message) -> wg.ScriptedModel:
    return wg.ScriptedModel("scripted/test", turns=list(turns))


def test_three_turn_episode_records_everything(toy: ToyShop) -> None:
    task = next(t for t in toy.taskset if t.meta["kind"] == "price")
    item = task.meta["subject"]
    model = scripted(
        turn(call("list_items", category="tea")),
        turn(call("get_item", name=item)),
        turn(call("submit_answer", answer=task.answer)),
    )
    ep = play(toy, model, task)
    assert ep.outcome == "terminated" and ep.submitted and ep.answer == task.answer
    assert ep.verdict is not None and ep.verdict.success and ep.reward == 1.0
    assert ep.turns == 3 and [c.name for c in ep.tool_calls] == [
        "list_items",
        "get_item",
        "submit_answer",
    ]
    assert [m.role for m in ep.messages] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
        "tool",
    ]
    assert ep.usage.calls == 3 and ep.usage.prompt_tokens > 0 and ep.usage.completion_tokens > 0
    assert ep.usage.by_role["tool"] > 0 and ep.usage.by_role["system"] > 0
    assert ep.env_hash == toy.content_hash() and ep.policy_hash and ep.seed == 1
    assert ep.wall_time_s > 0


def test_malformed_tool_calls_get_errors_and_the_episode_goes_on(toy: ToyShop) -> None:
    task = toy.taskset.split("dev")[0]
    model = scripted(
        turn(wg.ToolCall(id="a", name="get_item", arguments="{not json")),
        turn(wg.ToolCall(id="b", name="no_such_tool", arguments="{}")),
        turn(call("submit_answer", answer=str(task.answer))),  # "5" is not 5
        turn(call("submit_answer", answer=task.answer)),
    )
    ep = play(toy, model, task)
    statuses = [c.status for c in ep.tool_calls]
    assert statuses == ["invalid_arguments", "unknown_tool", "invalid_arguments", "ok"]
    assert ep.success and ep.turns == 4


def test_first_accepted_submission_wins(toy: ToyShop) -> None:
    task = toy.taskset.split("dev")[0]
    wrong, right = task.answer + 1, task.answer
    ep = play(
        toy,
        scripted(
            turn(call("submit_answer", "1", answer=wrong), call("submit_answer", "2", answer=right))
        ),
        task,
    )
    assert ep.answer == wrong and not ep.success and len(ep.tool_calls) == 1


def test_text_reply_without_final_tool_call_is_no_answer(toy: ToyShop) -> None:
    ep = play(toy, scripted(turn(text="The answer is 42.")))
    assert ep.outcome == "terminated" and not ep.submitted
    assert ep.verdict is not None and ep.verdict.status == wg.Status.no_answer


def test_max_turns_truncates(toy: ToyShop) -> None:
    looping = wg.ScriptedModel(
        "scripted/loop", fn=lambda msgs, tools: turn(call("list_items", category="tea"))
    )
    ep = play(toy, looping)
    assert ep.outcome == "truncated" and ep.truncation == "max_turns"
    assert ep.turns == toy.limits.max_turns
    assert ep.verdict is not None and ep.verdict.status == wg.Status.no_answer


class TinyBudget(ToyShop):
    id = "test/tiny-budget"
    limits = wg.Limits(max_turns=50, max_total_tokens=300)


class Timed(ToyShop):
    id = "test/timed"
    limits = wg.Limits(max_turns=50, episode_timeout_s=0.2)


def test_token_limit_truncates() -> None:
    env = TinyBudget()
    looping = wg.ScriptedModel(
        "scripted/loop", fn=lambda msgs, tools: turn(call("list_items", category="spice"))
    )
    ep = play(env, looping)
    assert ep.truncation == "max_tokens" and ep.usage.total_tokens >= 300


class Sleepy:
    name = "scripted/sleepy"

    async def complete(self, messages: Any, tools: Any, sampling: Sampling) -> Completion:
        await asyncio.sleep(10)
        raise AssertionError("unreachable")


def test_a_model_that_hangs_is_cut_by_the_episode_time_limit() -> None:
    ep = play(Timed(), Sleepy())
    assert ep.outcome == "truncated" and ep.truncation == "time_limit"
    assert ep.verdict is not None and ep.verdict.status == wg.Status.timeout
    assert ep.wall_time_s < 2


class Broken(ToyShop):
    id = "test/broken-verifier"

    def verify(self, task: wg.Task, episode: Any) -> wg.Verdict:
        raise RuntimeError("verifier bug")


def test_verifier_exceptions_become_verifier_error_not_zero() -> None:
    env = Broken()
    task = env.taskset.split("dev")[0]
    ep = play(env, scripted(turn(call("submit_answer", answer=1))), task)
    assert ep.verdict is not None and ep.verdict.status == wg.Status.verifier_error
    assert "verifier bug" in ep.verdict.evidence["error"] and not ep.verdict.trainable


def test_token_ids_are_kept_per_turn_when_the_provider_returns_them(toy: ToyShop) -> None:
    task = toy.taskset.split("dev")[0]

    class WithIds:
        name = "scripted/ids"

        async def complete(self, messages: Any, tools: Any, sampling: Sampling) -> Completion:
            return Completion(
                message=turn(call("submit_answer", answer=task.answer)),
                usage=Usage(prompt_tokens=5, completion_tokens=2),
                prompt_token_ids=[1, 2, 3, 4, 5],
                completion_token_ids=[6, 7],
                logprobs=[-0.1, -0.2],
            )

    ep = play(toy, WithIds(), task)
    assert ep.trainer is not None and ep.trainer.turn_tokens[0].completion_token_ids == [6, 7]
    assert ep.usage.prompt_tokens == 5 and ep.usage.completion_tokens == 2


def test_the_agent_never_sees_the_answer(toy: ToyShop) -> None:
    task = next(t for t in toy.taskset if t.meta["kind"] == "category_stock")
    seen: list[str] = []

    def spy(msgs: list[wg.Message], tools: list[wg.ToolSpec]) -> wg.Message:
        seen.extend(m.content for m in msgs)
        seen.extend(t.model_dump_json() for t in tools)
        return turn(text="")

    play(toy, wg.ScriptedModel("scripted/spy", fn=spy), task)
    assert seen and not any(str(task.answer) in s for s in seen)
