"""FakeChatServer: a scripted stand-in for an OpenAI-compatible server, on 127.0.0.1 only.

It is a real HTTP server so that tests exercise the real SDK and its transport (headers, status
codes, timeouts, dropped connections) rather than a mocked client. Each request to
POST /v1/chat/completions takes the next scripted reply; with the script empty it answers a
plain default text. Every request body is recorded so a test can assert what the client sent.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

DEFAULT_TEXT = "default reply from FakeChatServer"


@dataclass(frozen=True)
class ScriptedReply:
    """One scripted answer: a status, a body (dict -> JSON, str -> sent as is) and headers."""

    status: int = 200
    body: dict[str, Any] | str = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0


def _usage(prompt: int, completion: int, cached: int | None) -> dict[str, Any]:
    usage: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }
    if cached is not None:
        usage["prompt_tokens_details"] = {"cached_tokens": cached}
    return usage


def completion_body(
    message: dict[str, Any],
    *,
    finish_reason: str = "stop",
    usage: dict[str, Any] | None = None,
    choice_extra: dict[str, Any] | None = None,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A chat.completion object with one choice, shaped like vLLM and api.openai.com send it."""
    choice: dict[str, Any] = {
        "index": 0,
        "message": {"role": "assistant", **message},
        "finish_reason": finish_reason,
        "logprobs": None,
    }
    choice.update(choice_extra or {})
    body: dict[str, Any] = {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": "fake-model",
        "choices": [choice],
        "usage": usage if usage is not None else _usage(10, 5, None),
    }
    body.update(extra or {})
    return body


def text(
    content: str | None,
    *,
    prompt_tokens: int = 10,
    completion_tokens: int = 5,
    cached_tokens: int | None = None,
    finish_reason: str = "stop",
) -> ScriptedReply:
    """An assistant message with plain text (content None is what some servers send)."""
    usage = _usage(prompt_tokens, completion_tokens, cached_tokens)
    body = completion_body({"content": content}, finish_reason=finish_reason, usage=usage)
    return ScriptedReply(body=body)


def tool_calls(
    *calls: tuple[str, dict[str, Any] | str] | tuple[str, dict[str, Any] | str, str | None],
    content: str | None = None,
) -> ScriptedReply:
    """Tool calls as (name, arguments[, id]); dict arguments are JSON-encoded, str sent raw.

    An id of None leaves the `id` key out, as some small local servers do.
    """
    wire = []
    for i, call in enumerate(calls):
        name, arguments = call[0], call[1]
        call_id = call[2] if len(call) > 2 else f"call_fake_{i}"
        raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
        entry: dict[str, Any] = {"type": "function", "function": {"name": name, "arguments": raw}}
        if call_id is not None:
            entry["id"] = call_id
        wire.append(entry)
    body = completion_body({"content": content, "tool_calls": wire}, finish_reason="tool_calls")
    return ScriptedReply(body=body)


def malformed_tool_args(name: str = "lookup", raw: str = '{"city": "Par') -> ScriptedReply:
    """A tool call whose arguments are not valid JSON (a truncated object by default)."""
    return tool_calls((name, raw))


def with_logprobs(
    content: str,
    logprobs: list[float],
    *,
    token_ids: list[int] | None = None,
    prompt_token_ids: list[int] | None = None,
    prompt_ids_on_choice: bool = False,
) -> ScriptedReply:
    """Text with per-token logprobs and, as vLLM sends with `return_token_ids`, token ids.

    vLLM puts `prompt_token_ids` on the response; `prompt_ids_on_choice` moves it onto the
    choice, which other servers do.
    """
    tokens: list[dict[str, Any]] = [
        {"token": f"t{i}", "logprob": lp, "bytes": None, "top_logprobs": []}
        for i, lp in enumerate(logprobs)
    ]
    choice_extra: dict[str, Any] = {"logprobs": {"content": tokens, "refusal": None}}
    extra: dict[str, Any] = {}
    if token_ids is not None:
        choice_extra["token_ids"] = token_ids
    if prompt_token_ids is not None:
        (choice_extra if prompt_ids_on_choice else extra)["prompt_token_ids"] = prompt_token_ids
    body = completion_body({"content": content}, choice_extra=choice_extra, extra=extra)
    return ScriptedReply(body=body)


def error(
    status: int,
    message: str | None = None,
    *,
    retry_after: str | None = None,
    error_type: str | None = None,
) -> ScriptedReply:
    """An HTTP error with the OpenAI error envelope; `retry_after` sets the Retry-After header."""
    types = {
        400: "invalid_request_error",
        401: "authentication_error",
        404: "not_found_error",
        429: "rate_limit_exceeded",
    }
    body = {
        "error": {
            "message": message or f"fake error {status}",
            "type": error_type or types.get(status, "server_error"),
            "param": None,
            "code": None,
        }
    }
    headers = {"Retry-After": retry_after} if retry_after is not None else {}
    return ScriptedReply(status=status, body=body, headers=headers)


def slow(reply: ScriptedReply, delay_s: float) -> ScriptedReply:
    """The same reply, sent only after `delay_s` (to push the client past its timeout)."""
    return ScriptedReply(reply.status, reply.body, reply.headers, delay_s)


def raw(body: dict[str, Any] | str, status: int = 200) -> ScriptedReply:
    """Anything at all, for shapes the helpers above do not make (no choices, odd fields)."""
    return ScriptedReply(status=status, body=body)


def truncated_json(keep: int = 60) -> ScriptedReply:
    """A 200 reply whose JSON body stops after `keep` characters (a proxy cut it short)."""
    body = json.dumps(completion_body({"content": "cut short"}))[:keep]
    return ScriptedReply(status=200, body=body, headers={"Content-Type": "application/json"})


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # keep pytest output clean
        pass

    def do_GET(self) -> None:
        if self.path.rstrip("/") == "/v1/models":
            models = [{"id": m, "object": "model", "owned_by": "fake"} for m in self.server.models]
            self._send(ScriptedReply(body={"object": "list", "data": models}))
        else:
            self._send(error(404, f"no route GET {self.path}"))

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        data = self.rfile.read(length)
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._send(error(404, f"no route POST {self.path}"))
            return
        try:
            body = json.loads(data)
        except ValueError:
            self._send(error(400, "request body is not JSON"))
            return
        reply = self.server.owner._take(body, dict(self.headers.items()))
        if reply.delay_s and self.server.owner._closing.wait(reply.delay_s):
            return  # shutting down: drop the reply
        self._send(reply)

    def _send(self, reply: ScriptedReply) -> None:
        payload = reply.body if isinstance(reply.body, str) else json.dumps(reply.body)
        encoded = payload.encode()
        try:
            self.send_response(reply.status)
            content_type = "application/json" if isinstance(reply.body, dict) else "text/plain"
            self.send_header("Content-Type", reply.headers.get("Content-Type", content_type))
            self.send_header("Content-Length", str(len(encoded)))
            for key, value in reply.headers.items():
                if key != "Content-Type":
                    self.send_header(key, value)
            self.end_headers()
            self.wfile.write(encoded)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timed out) before we answered


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    owner: FakeChatServer
    models: list[str]


class FakeChatServer:
    """Test double for a chat-completions server. Use as a context manager.

    >>> with FakeChatServer() as server:
    ...     server.script(error(429, retry_after="0.1"), text("hi"))
    ...     model = OpenAIModel("fake-model", base_url=server.base_url)
    """

    def __init__(self, models: list[str] | None = None) -> None:
        self._lock = threading.Lock()
        self._queue: deque[ScriptedReply] = deque()
        self._closing = threading.Event()
        self.requests: list[dict[str, Any]] = []
        self.request_headers: list[dict[str, str]] = []
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.owner = self
        self._server.models = models or ["fake-model"]
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.01},  # shutdown waits up to one poll: keep tests fast
            name="FakeChatServer",
            daemon=True,
        )
        self._thread.start()

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def script(self, *replies: ScriptedReply) -> FakeChatServer:
        """Queue replies, answered in order, one per chat-completions request."""
        with self._lock:
            self._queue.extend(replies)
        return self

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    def _take(self, body: dict[str, Any], headers: dict[str, str]) -> ScriptedReply:
        with self._lock:
            self.requests.append(body)
            self.request_headers.append(headers)
            return self._queue.popleft() if self._queue else text(DEFAULT_TEXT)

    def close(self) -> None:
        self._closing.set()  # wake any handler sleeping in a slow reply
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> FakeChatServer:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
