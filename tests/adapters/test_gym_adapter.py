"""The Gymnasium adapter, checked by Gymnasium's own code: `check_env` and `gymnasium.make`."""

from __future__ import annotations

import json
import warnings

import pytest

from workgym.envs.toy.env import ToyShop

gymnasium = pytest.importorskip("gymnasium")
from gymnasium.utils.env_checker import check_env  # noqa: E402

from workgym.adapters.gym_adapter import WorkgymEnv, parse_action  # noqa: E402


def test_check_env_passes_without_warnings(toy: ToyShop) -> None:
    env = WorkgymEnv(toy)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any warning of the checker fails the test
        check_env(env, skip_render_check=True)
    env.close()


def test_make_by_id_and_by_module_prefix() -> None:
    env = gymnasium.make("workgym/toy-shop")
    assert isinstance(env.unwrapped, WorkgymEnv)
    obs, info = env.reset(seed=1)
    assert env.observation_space.contains(obs) and info["split"] == "train"
    env.close()
    other = gymnasium.make("workgym.adapters.gym_adapter:workgym/toy-shop", split="dev")
    assert other.reset(seed=0)[1]["split"] == "dev"
    other.close()


def test_seeds_draw_tasks_same_seed_same_task(toy: ToyShop) -> None:
    env = WorkgymEnv(toy)
    n = len(toy.taskset.training_view().split("train"))
    ids = [env.reset(seed=s)[1]["task_id"] for s in range(100)]
    assert len(set(ids)) == n  # every train task, and nothing else
    assert len(set(ids[:n])) == n  # n consecutive seeds: n different tasks
    assert all(env.reset(seed=s)[1]["task_id"] == ids[s] for s in range(100))
    assert {toy.taskset.split_of(toy.taskset[i]) for i in ids} == {"train"}
    # no seed: the sequence the last seed started, reproducibly
    env.reset(seed=7)
    first = [env.reset()[1]["task_id"] for _ in range(5)]
    env.reset(seed=7)
    assert [env.reset()[1]["task_id"] for _ in range(5)] == first
    env.close()


def test_options_task_id_and_sealed_test_split(toy: ToyShop) -> None:
    env = WorkgymEnv(toy)
    task = toy.taskset.split("train")[3]
    obs, info = env.reset(seed=0, options={"task_id": task.id})
    assert info["task_id"] == task.id and task.prompt in json.loads(obs)["messages"][-1]["content"]
    with pytest.raises(ValueError, match="training view"):
        env.reset(options={"task_id": toy.taskset.split("test")[0].id})
    env.close()


def test_episode_through_text_actions_scores_the_verdict(toy: ToyShop) -> None:
    env = WorkgymEnv(toy)
    task = toy.taskset.split("train")[0]
    env.reset(seed=0, options={"task_id": task.id})
    lookup = {
        "role": "assistant",
        "tool_calls": [
            {"id": "a", "function": {"name": "list_items", "arguments": '{"category": "tea"}'}}
        ],
    }
    obs, reward, terminated, truncated, info = env.step(json.dumps(lookup))
    assert (reward, terminated, truncated) == (0.0, False, False)
    assert "assam" in json.loads(obs)["messages"][0]["content"]
    submit = {
        "role": "assistant",
        "tool_calls": [
            {"id": "b", "function": {"name": "submit_answer", "arguments": {"answer": task.answer}}}
        ],
    }
    obs, reward, terminated, truncated, info = env.step(json.dumps(submit))
    assert reward == 1.0 and terminated and info["success"] and info["status"] == "ok"
    assert env.last_episode is not None and env.last_episode.answer == task.answer
    assert str(task.answer) not in obs.replace("answer recorded", "")
    env.close()


def test_plain_text_action_is_a_plain_reply() -> None:
    assert parse_action("42").content == "42" and not parse_action("42").tool_calls
    assert parse_action('{"role": "assistant", "content": "hi"}').content == "hi"
