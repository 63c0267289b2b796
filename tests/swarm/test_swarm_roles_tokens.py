"""The roles swarm's token accounting per member, prompt and completion apart (issue 35's
acceptance): each member's record is exactly its own calls, and the episode is their sum.
Scripted doubles: their numbers are machinery, never results."""

from __future__ import annotations

import asyncio

from swarm_doubles import CallLog, Guesser, Talker

import workgym as wg
from workgym.envs.toy.env import ToyShop
from workgym.swarm import Roles


def test_each_member_of_the_roles_swarm_counts_its_own_prompt_and_completion_tokens() -> None:
    log = CallLog()
    planner = Talker(log, "planner", ["1. look the item up 2. submit its price"], pad=30)
    checker = Talker(log, "checker", ["REVISE: look again.", "APPROVE"], pad=3)
    team = Roles(Guesser(log, p=0.0, p_plan=1.0), models={"planner": planner, "checker": checker})
    env = ToyShop()
    task = next(t for t in env.taskset if t.meta["kind"] == "price")
    ep = asyncio.run(wg.run_episode(env, task, team.policy(), seed=3))
    assert ep.team is not None
    label = {"planner": "planner", "checker": "checker", "executor": "guess-0"}
    for agent in ep.team.agents:
        own = [u for name, u in log.calls if name == label[agent.role]]
        assert own, f"{agent.role} made no call"
        assert agent.usage.prompt_tokens == sum(u.prompt_tokens for u in own)
        assert agent.usage.completion_tokens == sum(u.completion_tokens for u in own)
        assert agent.usage.calls == len(own)
    assert sorted(a.role for a in ep.team.agents) == ["checker", "executor", "planner"]
    assert ep.usage.prompt_tokens == sum(a.usage.prompt_tokens for a in ep.team.agents)
    assert ep.usage.completion_tokens == sum(a.usage.completion_tokens for a in ep.team.agents)
    # the planner's padded plan is a completion once, then prompt text of every executor turn
    planner_rec = next(a for a in ep.team.agents if a.role == "planner")
    executor_rec = next(a for a in ep.team.agents if a.role == "executor")
    assert planner_rec.usage.completion_tokens > 30
    assert executor_rec.usage.prompt_tokens > planner_rec.usage.completion_tokens


def test_the_checkers_reply_is_an_objection_when_it_says_revise_or_opens_with_revision() -> None:
    """The 0.5B checker of claim 4 wrote "REVISION: ..." for "REVISE: ..."; those replies passed
    as approvals (decision 0186). A "revision" inside a sentence is still no objection."""
    from workgym.swarm.roles import objection

    assert objection("REVISE: check the price once more.") == "check the price once more."
    assert objection("The answer is wrong. revise: look again") == "look again"
    wrong = "REVISION: The proposed final answer is incorrect."
    assert objection(wrong) == "The proposed final answer is incorrect."
    assert objection("**REVISION**: use the tool") == "use the tool"
    assert objection("APPROVE") is None
    assert objection("APPROVE. The work needs no revision.") is None
    assert objection("REVISE") == "the checker gave no reason."
