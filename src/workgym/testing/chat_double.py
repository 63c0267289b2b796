"""`ScriptedChatServer`: a workgym test double served as an OpenAI-compatible chat server.

Other harnesses (verifiers' `vf-eval`, Inspect's `inspect eval`, a trainer's client) only talk
to models over HTTP. To compare their rewards with `workgym eval` under *the same* scripted
model, this server plays a `scripted/<name>` double for one environment: it finds the task by
the conversation's prompt, counts the assistant turns already taken, and answers with the
double's next turn. It is stateless across requests (any client, any concurrency) and binds to
127.0.0.1 only. Its replies are a test double's, never a model's result.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import TYPE_CHECKING, Any

from workgym.core.messages import Message, ToolCall
from workgym.core.model import Sampling
from workgym.core.task_aware import TaskAwareModel

if TYPE_CHECKING:
    from workgym.core.environment import Environment
    from workgym.core.tasks import Task


class ScriptError(ValueError):
    """A request the double cannot answer (an unknown prompt): sent back as HTTP 400."""


def _content(value: Any) -> str:
    if isinstance(value, list):  # content parts: keep the text ones
        return "".join(p.get("text", "") for p in value if isinstance(p, dict))
    return "" if value is None else str(value)


def to_message(data: dict[str, Any]) -> Message:
    """One chat-completions request message as a workgym Message."""
    calls = [
        ToolCall(
            id=c.get("id") or f"call_{i}",
            name=c.get("function", {}).get("name", ""),
            arguments=c.get("function", {}).get("arguments", "{}"),
        )
        for i, c in enumerate(data.get("tool_calls") or [])
    ]
    role = data.get("role", "user")
    return Message(
        role=role if role in ("system", "user", "assistant", "tool") else "user",
        content=_content(data.get("content")),
        tool_calls=calls,
        tool_call_id=data.get("tool_call_id"),
    )


class ScriptedReplies:
    """The double's next turn for any conversation on one environment's tasks."""

    def __init__(self, env: Environment, model: TaskAwareModel) -> None:
        self.env = env
        self.model = model
        self.by_prompt: dict[str, Task] = {}
        for task in env.taskset:
            prompt = "\n".join(m.content for m in task.messages() if m.role == "user")
            self.by_prompt.setdefault(prompt, task)

    def task_of(self, messages: list[Message]) -> Task:
        users: list[str] = []
        for m in messages:
            if m.role == "assistant":
                break
            if m.role == "user":
                users.append(m.content)
        task = self.by_prompt.get("\n".join(users))
        if task is None:
            raise ScriptError(
                f"no task of {self.env.id} has this prompt; the double only plays its own tasks"
            )
        return task

    async def reply(self, messages: list[Message]) -> Message:
        task = self.task_of(messages)
        turn = sum(1 for m in messages if m.role == "assistant")
        player = self.model.for_task(task, self.env)
        completion = None
        for k in range(turn + 1):  # replay the double's earlier turns to reach this one
            seen = messages[: _prefix_end(messages, k)]
            completion = await player.complete(seen, [], Sampling())
        assert completion is not None
        message = completion.message
        calls = [
            c.model_copy(update={"id": f"call_{turn}_{i}"})
            for i, c in enumerate(message.tool_calls)
        ]
        return message.model_copy(update={"tool_calls": calls})


def _prefix_end(messages: list[Message], assistant_turns: int) -> int:
    """Index just before the (assistant_turns+1)-th assistant message (or the end)."""
    seen = 0
    for i, m in enumerate(messages):
        if m.role == "assistant":
            if seen == assistant_turns:
                return i
            seen += 1
    return len(messages)


def completion_json(message: Message, model: str) -> dict[str, Any]:
    wire: dict[str, Any] = {"role": "assistant", "content": message.content or None}
    if message.tool_calls:
        wire["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in message.tool_calls
        ]
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": wire,
                "finish_reason": "tool_calls" if message.tool_calls else "stop",
                "logprobs": None,
            }
        ],
        "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
    }


class ScriptedChatServer:
    """`with ScriptedChatServer(env, "scripted/oracle") as server: server.base_url`."""

    def __init__(self, env: Environment, model: str | TaskAwareModel, port: int = 0) -> None:
        from workgym.testing.scripted import get_scripted

        double = get_scripted(model.removeprefix("scripted/")) if isinstance(model, str) else model
        self.replies = ScriptedReplies(env, double)
        self.model_name = double.name
        self.requests = 0
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), _Handler)
        self._httpd.daemon_threads = True
        self._httpd.owner = self  # type: ignore[attr-defined]
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def start(self) -> ScriptedChatServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> ScriptedChatServer:
        return self.start()

    def __exit__(
        self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        import asyncio

        with self._lock:
            self.requests += 1
        messages = [to_message(m) for m in body.get("messages") or []]
        message = asyncio.run(self.replies.reply(messages))
        return completion_json(message, self.model_name)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _send(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        owner: ScriptedChatServer = self.server.owner  # type: ignore[attr-defined]
        if self.path.rstrip("/").endswith("/models"):
            model = {"id": owner.model_name, "object": "model", "owned_by": "workgym"}
            self._send(200, {"object": "list", "data": [model]})
        else:
            self._send(404, _error(f"no route GET {self.path}"))

    def do_POST(self) -> None:
        owner: ScriptedChatServer = self.server.owner  # type: ignore[attr-defined]
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send(404, _error(f"no route POST {self.path}; use /v1/chat/completions"))
            return
        try:
            self._send(200, owner.answer(body))
        except ScriptError as exc:
            self._send(400, _error(str(exc)))


def _error(message: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error", "param": None}}
