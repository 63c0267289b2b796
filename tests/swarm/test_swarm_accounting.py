"""Swarm episodes with scripted doubles: every agent's tokens counted once, budgets, selection
that never sees the verifier, one verdict per episode. Scripted models: machinery, not learning."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from swarm_doubles import (
    CallLog,
    Guesser,
    Talker,
    agents_of,
    records_tokens,
    seen_text,
    usage_of,
)

import workgym as wg
from workgym.core.errors import ModelError
from workgym.core.loading import load
from workgym.core.messages import Message, ToolCall
from workgym.core.model import Completion, Sampling
from workgym.envs.toy.env import ToyShop
from workgym.swarm import Attempts, Roles
from workgym.swarm.accounting import MAX_MESSAGE_CHARS, MAX_TRANSCRIPT_MESSAGES, bounded
from workgym.swarm.sections import role_view
from workgym.swarm.selection import Candidate, plurality


class CountingShop(ToyShop):
    id = "test/swarm-counting-shop"

    def __init__(self) -> None:
        super().__init__()
        self.verified = 0

    def verify(self, task: wg.Task, episode: Any) -> wg.Verdict:
        self.verified += 1
        return super().verify(task, episode)


def play(
    env: wg.Environment, policy: wg.Policy, seed: int = 7, task: wg.Task | None = None
) -> wg.Episode:
    task = task or next(t for t in env.taskset if t.meta["kind"] == "price")
    return asyncio.run(wg.run_episode(env, task, policy, seed=seed))


def assert_exact(ep: wg.Episode, log: CallLog) -> None:
    """The episode's totals are the doubles' own counts, and the sum of its agents' records."""
    assert ep.team is not None
    assert ep.usage.total_tokens == log.tokens() == records_tokens(agents_of(ep))
    assert ep.usage.calls == len(log.calls) == sum(a.usage.calls for a in agents_of(ep))
    assert ep.usage.prompt_tokens == sum(u.prompt_tokens for _, u in log.calls)
    assert ep.usage.completion_tokens == sum(u.completion_tokens for _, u in log.calls)
    by_role = {r: sum(a.usage.by_role.get(r, 0) for a in agents_of(ep)) for r in ep.usage.by_role}
    assert by_role == ep.usage.by_role


def test_attempts_count_every_agents_tokens_once() -> None:
    log = CallLog()
    ep = play(ToyShop(), Attempts(Guesser(log, pad=5), n=4).policy())
    assert_exact(ep, log)
    assert [a.name for a in agents_of(ep)] == [f"attempt-{j}" for j in range(4)]
    per_label = log.by_label()
    for j, agent in enumerate(agents_of(ep)):
        assert agent.usage.total_tokens == per_label[f"guess-{j}"]  # each attempt its own calls
        assert agent.role == "solver" and agent.turns == 2 and agent.submitted
    (chosen,) = [a for a in agents_of(ep) if a.selected]
    assert chosen.transcript == [] and ep.answer == chosen.answer  # its transcript is the episode's
    assert all(a.transcript for a in agents_of(ep) if not a.selected)
    assert ep.model == "swarm/vote4:scripted/guess" and ep.seed == 7


def test_roles_count_every_agents_tokens_once_and_the_checker_can_send_work_back() -> None:
    log = CallLog()
    planner = Talker(log, "planner", ["1. look the item up 2. submit its price"], pad=30)
    checker = Talker(log, "checker", ["REVISE: check the price once more.", "APPROVE"])
    team = Roles(Guesser(log, p=0.0, p_plan=1.0), models={"planner": planner, "checker": checker})
    env = ToyShop()
    ep = play(env, team.policy(system_prompt="Be careful."))
    assert_exact(ep, log)
    roles = {a.role: a for a in agents_of(ep)}
    assert list(roles) == ["planner", "executor", "checker"]
    per_label = log.by_label()
    assert roles["planner"].usage.total_tokens == per_label["planner"]
    assert roles["checker"].usage.total_tokens == per_label["checker"]
    assert roles["executor"].usage.total_tokens == per_label["guess-0"]
    assert roles["checker"].turns == 2 and len(checker.prompts) == 2
    # the first submission came back as the checker's objection; the second was accepted
    statuses = [(c.name, c.status) for c in ep.tool_calls]
    assert statuses == [("get_item", "ok"), ("submit_answer", "error"), ("submit_answer", "ok")]
    assert "check the price once more" in ep.tool_calls[1].content
    assert ep.success  # the executor was right with the plan (p_plan=1)
    assert "## Plan from the planner" in ep.messages[0].content
    assert "Be careful." in ep.messages[0].content and "Be careful." in seen_text(
        planner.prompts[0]
    )
    # the checker reads the work and the proposed answer, never the verifier's answer key
    assert "submit_answer(" in checker.prompts[0][-1].content


def test_one_attempt_is_exactly_the_single_agent() -> None:
    env = ToyShop()
    single = play(env, wg.Policy(Guesser(CallLog(), p=0.5, pad=3)), seed=11)
    swarm = play(env, Attempts(Guesser(CallLog(), p=0.5, pad=3), n=1).policy(), seed=11)
    assert swarm.answer == single.answer and swarm.reward == single.reward
    assert swarm.usage.total_tokens == single.usage.total_tokens
    assert [m.content for m in swarm.messages] == [m.content for m in single.messages]
    assert single.team is None and swarm.team is not None


def test_a_budget_stops_spawning_attempts_and_caps_the_spend() -> None:
    env = ToyShop()
    one = play(env, wg.Policy(Guesser(CallLog()))).usage.total_tokens
    log = CallLog()
    ep = play(env, Attempts(Guesser(log), n=10, budget_tokens=int(2.5 * one)).policy())
    assert len(agents_of(ep)) == 2  # a third attempt would not fit in 2.5 attempts' tokens
    assert ep.usage.total_tokens == 2 * one <= 2.5 * one
    assert_exact(ep, log)
    # a budget below one attempt: the running attempt is cut at the budget (plus one call)
    log = CallLog()
    ep = play(env, Attempts(Guesser(log), n=10, budget_tokens=one // 3).policy())
    assert len(agents_of(ep)) == 1 and ep.outcome == "truncated"
    assert ep.truncation == "max_tokens" and len(log.calls) == 1
    assert ep.verdict is not None and ep.verdict.status == wg.Status.no_answer


def test_a_role_swarms_budget_truncates_the_executor_and_skips_the_checker() -> None:
    log = CallLog()
    planner = Talker(log, "planner", ["a long plan"], pad=200)
    checker = Talker(log, "checker", ["APPROVE"])
    team = Roles(
        Guesser(log, p_plan=1.0),
        models={"planner": planner, "checker": checker},
        budget_tokens=600,
    )
    ep = play(ToyShop(), team.policy())
    assert_exact(ep, log)
    assert ep.outcome == "truncated" and ep.truncation == "max_tokens"
    assert checker.prompts == [] and [a.turns for a in agents_of(ep)] == [1, 1, 0]
    last_call = log.calls[-1][1].total_tokens
    assert 600 <= ep.usage.total_tokens < 600 + last_call  # over by less than one call


def test_the_verifier_scores_only_the_selected_answer_and_the_vote_cannot_peek() -> None:
    env = CountingShop()
    task = next(t for t in env.taskset if t.meta["kind"] == "price")
    log = CallLog()
    judge = Talker(log, "judge", ["BEST: 2"])
    team = Attempts(Guesser(log, p=0.0), n=3, select="judge", judge_model=judge)
    ep = play(env, team.policy(), task=task)
    assert env.verified == 1  # only the swarm's episode met the verifier
    assert not ep.success
    assert str(task.answer) not in seen_text(
        judge.prompts[0]
    )  # nobody guessed it; nobody leaked it
    assert_exact(ep, log)
    assert [a.role for a in agents_of(ep)] == ["solver"] * 3 + ["selector"]
    assert agents_of(ep)[1].selected and ep.answer == agents_of(ep)[1].answer


def test_plurality_takes_the_most_frequent_answer_and_the_earliest_on_ties() -> None:
    def cands(*answers: Any) -> list[Candidate]:
        return [Candidate(i, a, []) for i, a in enumerate(answers)]

    assert plurality(cands(3, 5, 5, 3, 5)) == 1
    assert plurality(cands(" a  b", "x", "a b")) == 0  # whitespace-normalised text
    assert plurality(cands(7, 8)) == 0 and plurality([]) is None
    assert plurality(cands({"b": 1, "a": 2}, 9, {"a": 2, "b": 1})) == 0  # canonical JSON


def test_unanimous_attempts_cost_no_judge_call() -> None:
    log = CallLog()
    judge = Talker(log, "judge", ["BEST: 1"])
    ep = play(
        ToyShop(), Attempts(Guesser(log, p=1.0), n=3, select="judge", judge_model=judge).policy()
    )
    assert judge.prompts == [] and ep.success
    assert_exact(ep, log)


def test_sub_transcripts_are_bounded() -> None:
    long = [Message(role="user", content="x" * (3 * MAX_MESSAGE_CHARS)) for _ in range(100)]
    kept, dropped = bounded(long)
    assert len(kept) == MAX_TRANSCRIPT_MESSAGES and dropped == 100 - MAX_TRANSCRIPT_MESSAGES
    assert all(len(m.content) < MAX_MESSAGE_CHARS + 30 for m in kept)


def test_each_role_reads_its_own_playbook_section_and_the_shared_ones() -> None:
    pb = (
        "Cite an entry's id in brackets, like [pb-001], when you follow it.\n\n"
        "### strategy\n- [pb-001] shared rule\n\n"
        "### planner\n- [pb-002] planner rule\n\n"
        "### executor\n- [pb-003] executor rule\n"
    )
    roles = ("planner", "executor", "checker")
    planner = role_view(pb, "planner", roles) or ""
    assert "shared rule" in planner and "planner rule" in planner and "executor rule" not in planner
    checker = role_view(pb, "checker", roles) or ""
    assert "shared rule" in checker and "rule" not in checker.replace("shared rule", "")
    assert role_view(pb, "solver", ("solver",)) == pb  # no role sections: the text unchanged
    only_other = "Cite an entry's id in brackets.\n\n### planner\n- [pb-002] planner rule\n"
    assert role_view(only_other, "executor", roles) is None

    log = CallLog()
    talker = Talker(log, "planner", ["plan"])
    team = Roles(Guesser(log), roles=("planner", "executor"), models={"planner": talker})
    ep = play(ToyShop(), team.policy(playbook=pb))
    executor_system = ep.messages[0].content
    assert "executor rule" in executor_system and "shared rule" in executor_system
    assert "planner rule" not in executor_system
    assert "planner rule" in talker.prompts[0][0].content
    assert "executor rule" not in talker.prompts[0][0].content


class Failing:
    name = "scripted/failing"

    def __init__(self) -> None:
        self.calls = 0

    async def complete(self, messages: Any, tools: Any, sampling: Sampling) -> Completion:
        self.calls += 1
        await asyncio.sleep(0.01 * self.calls)
        raise ModelError("scripted outage")


def test_a_model_error_in_one_attempt_propagates_as_is_for_the_runners_retries() -> None:
    with pytest.raises(ModelError, match="scripted outage"):
        play(ToyShop(), Attempts(Failing(), n=4, concurrency=2).policy())


class TextShop(ToyShop):
    """The shop's questions answered in a text reply: no tools at all, like the suites."""

    id = "test/swarm-text-shop"
    tools = []

    def verify(self, task: wg.Task, episode: Any) -> wg.Verdict:
        text = str(episode.answer or "").strip()
        return wg.Verdict.correct() if text == str(task.answer) else wg.Verdict.wrong(got=text)


def test_a_checker_reviews_a_text_answer_where_there_is_no_final_tool() -> None:
    env = TextShop()
    task = next(t for t in env.taskset if t.meta["kind"] == "price")
    log = CallLog()
    executor = Talker(log, "executor", [str(task.answer + 1), str(task.answer)])
    checker = Talker(log, "checker", ["REVISE: the price is off by one.", "APPROVE"])
    team = Roles(executor, roles=("executor", "checker"), models={"checker": checker})
    ep = play(env, team.policy(), task=task)
    assert_exact(ep, log)
    # the first answer came back as the checker's objection, a user turn; the second was accepted
    turns = [m.role for m in ep.messages if m.role != "system"]
    assert turns == ["user", "assistant", "user", "assistant"]
    assert "off by one" in ep.messages[-2].content and ep.messages[-2].role == "user"
    assert ep.answer == str(task.answer) and ep.success and ep.turns == 2
    assert str(task.answer + 1) in checker.prompts[0][-1].content  # it read the proposal
    assert {a.role: a.turns for a in agents_of(ep)}["checker"] == 2
    # after max_reviews objections an answer is accepted unreviewed, as with a final tool
    log = CallLog()
    stubborn = Talker(log, "checker", ["REVISE: no."])
    same = Talker(log, "executor", ["1"])
    team = Roles(same, roles=("executor", "checker"), models={"checker": stubborn}, max_reviews=2)
    ep = play(env, team.policy(), task=task)
    assert ep.answer == "1" and ep.turns == 3 and len(stubborn.prompts) == 2
    assert_exact(ep, log)


class FirstToolCaller:
    """`scripted/caller`: calls the first tool it is offered with no arguments."""

    name = "scripted/caller"

    def __init__(self, log: CallLog) -> None:
        self.log = log

    async def complete(
        self, messages: list[Message], tools: list[wg.ToolSpec], sampling: Sampling
    ) -> Completion:
        call = ToolCall(id=f"c{len(self.log.calls)}", name=tools[0].name, arguments="{}")
        reply = Message(role="assistant", tool_calls=[call])
        usage = usage_of(messages, reply)
        self.log.add("caller", usage)
        return Completion(message=reply, usage=usage, finish_reason="tool_calls")


def test_a_checker_reviews_calls_of_final_tools_a_suite_declares_per_task() -> None:
    env = load("suites/bfcl")
    assert not env.has_final_tool  # its final tools come with each item's toolkit
    task = env.taskset.split("test")[0]
    log = CallLog()
    checker = Talker(log, "checker", ["REVISE: wrong arguments."])
    team = Roles(FirstToolCaller(log), roles=("executor", "checker"), models={"checker": checker})
    ep = play(env, team.policy(), task=task)
    assert_exact(ep, log)
    assert len(checker.prompts) == 1 and "({})" in checker.prompts[0][-1].content
    assert [c.status for c in ep.tool_calls] == ["error"]  # vetoed; bfcl allows no second turn
    assert not ep.submitted and not ep.success


def test_bad_configurations_fail_with_a_message() -> None:
    with pytest.raises(wg.ConfigError, match="executor"):
        Roles("scripted/null", roles=("planner",))
    with pytest.raises(wg.ConfigError, match="judge_model"):
        Attempts("scripted/null", select="judge")
    with pytest.raises(wg.ConfigError, match="budget_tokens"):
        Attempts("scripted/null", budget_tokens=0)
