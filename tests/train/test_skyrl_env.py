"""The SkyRL-gym text environment adapter, registered by id, on a CPU test episode."""

from __future__ import annotations

import json

import pytest

skyrl_gym = pytest.importorskip("skyrl_gym")

from workgym.core.errors import ConfigError  # noqa: E402
from workgym.envs.toy.env import ToyShop  # noqa: E402
from workgym.train import skyrl  # noqa: E402


def call(tool_name: str, /, **arguments: object) -> str:
    body = json.dumps({"name": tool_name, "arguments": arguments})
    return f"<tool_call>\n{body}\n</tool_call><|im_end|>"


def test_a_registered_environment_plays_an_episode_to_its_reward() -> None:
    env = ToyShop()
    env_id = skyrl.register(env)
    assert skyrl.register(env) == env_id == "workgym/toy-shop"  # idempotent
    rows = skyrl.dataset_rows(env)
    assert {r["task_id"] for r in rows} == {t.id for t in env.taskset.split("train")}
    row = next(r for r in rows if env.taskset[r["task_id"]].meta["kind"] == "price")
    task = env.taskset[row["task_id"]]
    text_env = skyrl_gym.make(env_id, env_config={"max_turns": 9}, extras={"task_id": task.id})
    assert isinstance(text_env, skyrl_gym.Env)
    messages, info = text_env.init(row["prompt"])
    assert messages == row["prompt"]
    assert str(task.answer) not in json.dumps(messages)  # the hidden answer is not shown
    assert [t["function"]["name"] for t in info["tools"]] == [
        "list_items",
        "get_item",
        "submit_answer",
    ]
    out = text_env.step(call("get_item", name=task.meta["subject"]))
    assert out["done"] is False and out["reward"] == 0.0
    assert json.loads(out["observations"][0]["content"])["price_cents"] == task.answer
    out = text_env.step("I will answer now." + call("submit_answer", answer=task.answer))
    assert out["done"] is True and out["reward"] == 1.0
    assert out["metadata"]["status"] == "ok" and out["metadata"]["trainable"] is True
    assert text_env.get_metrics() == {"turns": 2, "success": 1.0, "reward": 1.0}
    text_env.close()


def test_bad_replies_get_tool_errors_and_turn_limits_end_the_episode() -> None:
    env = ToyShop()
    task = env.taskset.split("train")[0]
    text_env = skyrl.WorkgymTextEnv({"env": env}, {"task_id": task.id})
    text_env.max_turns = 2
    out = text_env.step("<tool_call>{not json</tool_call>")
    assert out["done"] is False and out["observations"][0]["content"].startswith("error:")
    out = text_env.step(call("list_items", category="tea"))
    assert out["done"] is True and out["reward"] == 0.0
    assert text_env.episode.outcome == "truncated"


def test_the_test_split_is_sealed() -> None:
    env = ToyShop()
    test_task = env.taskset.split("test")[0]
    with pytest.raises(ConfigError, match="sealed"):
        skyrl.WorkgymTextEnv({"env": env}, {"task_id": test_task.id})
