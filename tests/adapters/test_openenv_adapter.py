"""OpenEnv's own `EnvClient` driving a workgym environment, against OpenEnv's own server
(`openenv_app`) and against `workgym serve --protocol openenv`."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from workgym.core.episode import record_flags
from workgym.envs.toy.env import ToyShop
from workgym.testing.chat_double import ScriptedChatServer

pytest.importorskip("openenv")
import openai
import uvicorn
from openenv.core.generic_client import GenericEnvClient

from workgym.adapters.openenv_adapter import (
    WorkgymEnvClient,
    openenv_app,
    play_episode,
)
from workgym.apps.serve.server import build_app, ws_protocol


def _serve(app: Any) -> Iterator[str]:
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", ws=ws_protocol())
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    for _ in range(400):
        if server.started:
            break
        time.sleep(0.05)
    port = server.servers[0].sockets[0].getsockname()[1]
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=10)


@pytest.fixture(scope="module", params=["openenv-server", "workgym-serve"])
def server_url(request: pytest.FixtureRequest) -> Iterator[str]:
    toy = ToyShop()
    app = (
        openenv_app(toy)
        if request.param == "openenv-server"
        else build_app(toy, token="unused-by-openenv", protocol="openenv")
    )
    yield from _serve(app)


def agent_of(double: ScriptedChatServer) -> Any:
    chat = openai.AsyncOpenAI(base_url=double.base_url, api_key="unused")

    async def agent(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
        reply = await chat.chat.completions.create(
            model=double.model_name,
            messages=messages,
            tools=tools,  # type: ignore[arg-type]
        )
        m = reply.choices[0].message
        calls = [c.model_dump() for c in m.tool_calls or []]
        return {"content": m.content or "", "tool_calls": calls}

    return agent


@pytest.mark.slow
def test_env_client_gives_workgym_eval_rewards(
    server_url: str, double: ScriptedChatServer, workgym_rewards: dict[str, float]
) -> None:
    agent = agent_of(double)

    async def play_all() -> dict[str, float]:
        rewards = {}
        for task_id in workgym_rewards:
            async with WorkgymEnvClient(base_url=server_url) as client:
                played, reward = await play_episode(client, agent, task_id=task_id, split="dev")
            rewards[played] = reward
        return rewards

    assert asyncio.run(play_all()) == workgym_rewards


def test_generic_client_and_protocol_details(server_url: str) -> None:
    toy = ToyShop()

    async def go() -> None:
        async with GenericEnvClient(base_url=server_url) as client:
            first = await client.reset(seed=5)
            again = await client.reset(seed=5)
            assert first.observation["task_id"] == again.observation["task_id"]
            assert toy.taskset.split_of(toy.taskset[first.observation["task_id"]]) == "train"
            assert [t["function"]["name"] for t in first.observation["tools"]] == [
                "list_items",
                "get_item",
                "submit_answer",
            ]
            call = {
                "id": "c",
                "type": "function",
                "function": {"name": "list_items", "arguments": '{"category": "tea"}'},
            }
            step = await client.step({"content": "", "tool_calls": [call]})
            assert not step.done and "assam" in step.observation["messages"][0]["content"]
            state = await client.state()
            assert state["step_count"] == 1
            with pytest.raises(RuntimeError, match=r"sealed|training view"):
                await client.reset(task_id=toy.taskset.split("test")[0].id)

    asyncio.run(go())


@pytest.mark.slow
def test_served_openenv_episodes_are_audited_into_the_run_directory(
    double: ScriptedChatServer,
    workgym_flags: dict[str, list[str]],
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """OpenEnv's observations carry no flags; `workgym serve --out` records them."""
    out = tmp_path_factory.mktemp("served") / "run"
    app = build_app(ToyShop(), token="unused-by-openenv", protocol="openenv", out=out)
    agent = agent_of(double)

    async def play_all(url: str) -> None:
        for task_id in workgym_flags:
            async with WorkgymEnvClient(base_url=url) as client:
                await play_episode(client, agent, task_id=task_id, split="dev")

    for url in _serve(app):
        asyncio.run(play_all(url))
    lines = (out / "episodes.jsonl").read_text().splitlines()
    flags = {e["task_id"]: sorted(record_flags(e)) for e in map(json.loads, lines)}
    assert flags == workgym_flags
