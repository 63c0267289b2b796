"""Finishers: the driver scores and stops; the run layer applies the audit to every episode."""

from __future__ import annotations

import asyncio
import json

import workgym as wg
from workgym.core.driver import EpisodeDriver, drive
from workgym.core.messages import Message, ToolCall
from workgym.envs.toy.env import ToyShop
from workgym.guards.audit import record_audit
from workgym.run.finish import default_finishers, finish_episode

PEEK = Message(
    role="assistant",
    tool_calls=[
        ToolCall(id="c", name="get_item", arguments=json.dumps({"name": "../tasks.jsonl"}))
    ],
)


def driven(env: wg.Environment, task: wg.Task) -> EpisodeDriver:
    policy = wg.Policy(wg.ScriptedModel("scripted/peek", turns=[PEEK]))
    driver = EpisodeDriver(env, task, policy, seed=1)
    asyncio.run(drive(driver, policy.model_for(task, env), policy.sampling))
    return driver


def test_the_audit_is_the_default_finisher() -> None:
    assert default_finishers() == (record_audit,)


def test_the_driver_scores_without_auditing_and_the_run_layer_audits() -> None:
    env = ToyShop()
    task = env.taskset.split("dev")[0]
    alone = asyncio.run(driven(env, task).finish())
    assert alone.verdict is not None and alone.flags == []
    finished = asyncio.run(finish_episode(driven(env, task)))
    assert (
        "peek:hidden-data" in finished.flags
        and finished.audit
        and finished.audit.sites["peek:hidden-data"]
    )
    played = asyncio.run(wg.run_episode(env, task, wg.Policy(wg.ScriptedModel("x", turns=[PEEK]))))
    assert played.flags == finished.flags and played.audit == finished.audit


def test_a_caller_composes_its_own_finishers() -> None:
    env = ToyShop()
    task = env.taskset.split("dev")[0]
    seen: list[str] = []

    def note(env: wg.Environment, task: wg.Task, episode: wg.Episode) -> None:
        seen.append(episode.task_id)

    episode = asyncio.run(finish_episode(driven(env, task), [note]))
    assert seen == [task.id] and episode.flags == []
