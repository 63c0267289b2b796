"""`workgym serve ENV --mcp`: the environment's tools as an MCP server, over stdio.

An external agent (any MCP client) acts through the environment's real toolkit. One MCP
connection is one agent: `start_task` begins an episode (by task id, or drawn from a split with
a seed) and returns the task as the agent would see it; the environment's tools then act on
that episode's own state; the final tool (or `submit` for environments that take a text answer)
ends it. Every call goes through the same EpisodeDriver as a local episode, so limits, argument
validation and the audit apply unchanged. The reward is never shown to the agent: with `--out`
each finished episode is appended to a run directory for `workgym summary`.

stdio, not HTTP: MCP hosts launch servers as subprocesses, the parent owns the pipe (no port, so
no token), and one process per agent keeps episodes isolated by construction.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from workgym.apps.serve.refusal import ServeError
from workgym.apps.serve.sessions import Hub, ResetRequest, Session
from workgym.core.environment import Environment
from workgym.core.messages import Message, ToolCall

START = "start_task"
SUBMIT = "submit"
OVER = "[episode over: call start_task for the next task]"


def _start_schema() -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "task_id": {"type": "string", "description": "a task id; omit to draw one"},
            "split": {"type": "string", "description": "split to draw from (train, dev)"},
            "seed": {"type": "integer", "description": "seed of the draw and the episode"},
        },
        "additionalProperties": False,
    }


class McpEpisodes:
    """The agent's side of one MCP connection: its current episode, through a Session."""

    def __init__(
        self, env: Environment, *, allow_test: bool = False, out: str | Path | None = None
    ):
        self.hub = Hub(env, allow_test=allow_test, out=out, idle_timeout_s=float("inf"))
        self.session: Session = self.hub.open()
        self.calls = 0
        names = {t.name for t in env.tools}
        self.submit_tool = None if env.has_final_tool or SUBMIT in names else SUBMIT

    def tool_list(self) -> list[dict[str, Any]]:
        env = self.hub.env
        start = {
            "name": START,
            "description": "Start a task (ends any running one) and return its instructions.",
            "input_schema": _start_schema(),
        }
        tools = [start] + [
            {
                "name": t.spec.name,
                "description": t.spec.description,
                "input_schema": t.spec.parameters,
            }
            for t in env.tools
        ]
        if self.submit_tool:
            tools.append(
                {
                    "name": self.submit_tool,
                    "description": "Give your final answer as text. This ends the task.",
                    "input_schema": {
                        "type": "object",
                        "properties": {"answer": {"type": "string"}},
                        "required": ["answer"],
                        "additionalProperties": False,
                    },
                }
            )
        return tools

    async def call(self, name: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        """Run one MCP tool call; returns (text for the agent, is_error)."""
        try:
            if name == START:
                return self._start(arguments), False
            return await self._act(name, arguments)
        except ServeError as exc:
            return str(exc), True
        except ValueError as exc:  # arguments of start_task that do not validate
            return f"bad arguments for {name}: {exc}", True

    def _start(self, arguments: dict[str, Any]) -> str:
        result = self.session.reset(ResetRequest.model_validate(arguments))
        parts = [m.get("content") or "" for m in result.observation["messages"]]
        text = "\n\n".join(p for p in parts if p)
        return f"{text}\n\n(task {result.task_id}; call the tools to work on it)"

    async def _act(self, name: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        driver = self.session.driver
        if driver is None or driver.done:
            raise ServeError(409, f"no task is running: call {START} first")
        self.calls += 1
        if name == self.submit_tool:
            message = Message(role="assistant", content=str(arguments.get("answer", "")))
        else:
            call = ToolCall(id=f"mcp_{self.calls}", name=name, arguments=json.dumps(arguments))
            message = Message(role="assistant", tool_calls=[call])
        result = await self.session.step(message)
        replies = result.observation["messages"]
        text = "\n".join(str(m.get("content", "")) for m in replies) or "done"
        is_error = bool(driver.episode.tool_calls) and driver.episode.tool_calls[-1].is_error
        if result.terminated or result.truncated:
            text = f"{text}\n{OVER}"
        return text, is_error and name != self.submit_tool


def build_mcp_server(
    env: Environment, *, allow_test: bool = False, out: str | Path | None = None
) -> Any:
    """A low-level `mcp.server.Server` whose tools are `env`'s, plus start_task (and submit)."""
    import mcp_types as types
    from mcp.server import Server

    episodes = McpEpisodes(env, allow_test=allow_test, out=out)
    tools = [types.Tool.model_validate(t) for t in episodes.tool_list()]

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        text, is_error = await episodes.call(params.name, dict(params.arguments or {}))
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)], is_error=is_error
        )

    server = Server(
        f"workgym-{env.id}",
        instructions=f"Tools of the workgym environment {env.id}: call {START} first.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
    server.workgym_episodes = episodes  # type: ignore[attr-defined]
    return server


async def serve_stdio(
    env: Environment, *, allow_test: bool = False, out: str | Path | None = None
) -> None:
    """Serve MCP on this process's stdin/stdout until the client disconnects."""
    from mcp.server.stdio import stdio_server

    server = build_mcp_server(env, allow_test=allow_test, out=out)
    try:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())
    finally:
        server.workgym_episodes.hub.shutdown()
