from __future__ import annotations

import json

import workgym as wg
from workgym.envs.toy.env import ToyShop


def test_reset_step_terminates_with_reward_and_info_stays_out_of_observations(toy: ToyShop) -> None:
    env = wg.GymEnv(toy)
    task = toy.taskset.split("dev")[0]
    obs, info = env.reset(task.id, seed=3)
    assert obs["messages"][-1]["content"] == task.prompt and len(obs["tools"]) == 3
    assert info["task_id"] == task.id
    msg = {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": "1",
                "type": "function",
                "function": {"name": "list_items", "arguments": '{"category": "tea"}'},
            }
        ],
    }
    obs, reward, terminated, truncated, info = env.step(msg)
    assert (reward, terminated, truncated, info) == (0.0, False, False, {})
    assert obs["messages"][0]["role"] == "tool" and "assam" in obs["messages"][0]["content"]
    submit = wg.Message(
        role="assistant",
        tool_calls=[
            wg.ToolCall(id="2", name="submit_answer", arguments=json.dumps({"answer": task.answer}))
        ],
    )
    obs, reward, terminated, truncated, info = env.step(submit)
    assert reward == 1.0 and terminated and not truncated
    assert info["verdict"].success and info["episode"].task_id == task.id
    assert "verdict" not in json.dumps(obs)
    env.close()


def test_default_reset_draws_from_train_only(toy: ToyShop) -> None:
    env = wg.GymEnv(toy)
    _, info = env.reset()
    assert info["split"] == "train"
    env.close()
