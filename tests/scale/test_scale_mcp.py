"""`workgym serve ENV --mcp` driven by the official MCP client over stdio (a real subprocess)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from mcp import Client
from mcp.client.stdio import StdioServerParameters

from workgym.apps.serve.mcp_server import McpEpisodes
from workgym.envs.toy.env import ToyShop

pytestmark = pytest.mark.timeout(60)


def text(result: Any) -> str:
    return "\n".join(block.text for block in result.content)


def test_an_mcp_agent_plays_episodes_through_the_real_tools(tmp_path: Path, toy: ToyShop) -> None:
    out = tmp_path / "run"
    task = next(t for t in toy.taskset.split("train") if t.meta["kind"] == "price")
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "workgym", "serve", "workgym/toy-shop", "--mcp", "--out", str(out)],
    )

    async def agent() -> None:
        async with Client(params) as client:
            names = [t.name for t in (await client.list_tools()).tools]
            assert names == ["start_task", "list_items", "get_item", "submit_answer"]
            early = await client.call_tool("get_item", {"name": "assam"})
            assert early.is_error and "start_task first" in text(early)

            started = await client.call_tool("start_task", {"task_id": task.id})
            assert not started.is_error and task.prompt in text(started)
            assert str(task.answer) not in text(started)
            bad = await client.call_tool("get_item", {"name": 5})
            assert bad.is_error and "invalid arguments" in text(bad)
            item = await client.call_tool("get_item", {"name": task.meta["subject"]})
            assert json.loads(text(item))["price_cents"] == task.answer
            done = await client.call_tool("submit_answer", {"answer": task.answer})
            assert "episode over" in text(done) and "reward" not in text(done)
            after = await client.call_tool("list_items", {"category": "tea"})
            assert after.is_error  # the episode ended with the submission

            await client.call_tool("start_task", {"split": "dev", "seed": 2})
            await client.call_tool("submit_answer", {"answer": -1})

    asyncio.run(asyncio.wait_for(agent(), 60))
    episodes = [json.loads(x) for x in (out / "episodes.jsonl").read_text().splitlines()]
    assert len(episodes) == 2
    first, second = episodes
    assert first["task_id"] == task.id and first["verdict"]["success"]
    assert first["turns"] == 3 and [c["status"] for c in first["tool_calls"]] == [
        "invalid_arguments",
        "ok",
        "ok",
    ]
    assert second["split"] == "dev" and not second["verdict"]["success"]


def test_a_text_answer_environment_gets_a_submit_tool() -> None:
    class TextAnswers(ToyShop):
        tools = [t for t in ToyShop.tools if not t.final]

    episodes = McpEpisodes(TextAnswers())
    names = [t["name"] for t in episodes.tool_list()]
    assert names == ["start_task", "list_items", "get_item", "submit"]
    task = TextAnswers().taskset.split("train")[0]

    async def play() -> tuple[str, bool]:
        await episodes.call("start_task", {"task_id": task.id})
        return await episodes.call("submit", {"answer": str(task.answer)})

    reply, is_error = asyncio.run(play())
    assert not is_error and "episode over" in reply
    last = episodes.session.last_episode
    assert last is not None and last.answer == str(task.answer) and last.submitted
