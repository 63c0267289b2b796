"""`workgym serve-model hf/...`: a local model behind OpenAI chat completions, on 127.0.0.1.

So the `openai/` provider (and any other OpenAI-speaking tool) can drive a real local model over
real HTTP. Requests go through the `hf/` provider: its chat template, prefill, tool-call parsing
and micro-batching, so concurrent requests share batches. Replies carry `tool_calls`, `usage`,
per-token `logprobs` when asked, and vLLM's token-id extensions (`prompt_token_ids`, and
`token_ids` on the choice), which the `openai/` provider reads.

Requests are bounded: body size, messages, tools and `max_tokens`; anything outside the bounds
is refused with HTTP 400 and a sentence saying what to change. `tool_choice: "none"` hides the
tools; otherwise a built-in model with a prefill always starts a tool call when tools are given
(it cannot call tools otherwise; docs/models.md).

    POST /v1/chat/completions   {model, messages, tools?, tool_choice?, temperature?, top_p?,
                                 max_tokens? | max_completion_tokens?, seed?, logprobs?}
    GET  /v1/models
    GET  /healthz
"""

from __future__ import annotations

import time
import uuid
from typing import Any, Literal

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from workgym.core.messages import Message, ToolCall
from workgym.core.model import Completion, Sampling
from workgym.core.tools import ToolSpec

MAX_BODY_BYTES = 1_000_000
MAX_MESSAGES = 512
MAX_TOOLS = 128
MAX_TOKENS = 4096


class WireFunction(BaseModel):
    name: str = Field(min_length=1, max_length=128)
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object"})


class WireTool(BaseModel):
    type: Literal["function"] = "function"
    function: WireFunction


class WireCallFunction(BaseModel):
    name: str
    arguments: str = "{}"


class WireToolCall(BaseModel):
    id: str
    type: Literal["function"] = "function"
    function: WireCallFunction


class WireMessage(BaseModel):
    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | list[dict[str, Any]] | None = None
    tool_calls: list[WireToolCall] | None = None
    tool_call_id: str | None = None
    name: str | None = None

    def to_message(self) -> Message:
        content = self.content
        if isinstance(content, list):  # content parts: keep the text ones
            content = "".join(str(p.get("text", "")) for p in content if p.get("type") == "text")
        calls = [
            ToolCall(id=c.id, name=c.function.name, arguments=c.function.arguments)
            for c in self.tool_calls or []
        ]
        role = "system" if self.role == "developer" else self.role
        return Message(
            role=role,
            content=content or "",
            tool_calls=calls,
            tool_call_id=self.tool_call_id,
            name=self.name,
        )


class ChatRequest(BaseModel):
    model: str = ""
    messages: list[WireMessage] = Field(min_length=1, max_length=MAX_MESSAGES)
    tools: list[WireTool] | None = Field(default=None, max_length=MAX_TOOLS)
    tool_choice: str | dict[str, Any] | None = None
    temperature: float = Field(default=1.0, ge=0.0, le=2.0)
    top_p: float | None = Field(default=None, gt=0.0, le=1.0)
    max_tokens: int | None = Field(default=None, ge=1, le=MAX_TOKENS)
    max_completion_tokens: int | None = Field(default=None, ge=1, le=MAX_TOKENS)
    seed: int | None = None
    logprobs: bool = False
    n: int = Field(default=1, ge=1, le=1)
    stream: Literal[False] = False


def response_body(model_id: str, done: Completion, want_logprobs: bool) -> dict[str, Any]:
    """The chat-completions reply for one completion (OpenAI shape, vLLM id extensions)."""
    reply = done.message
    message: dict[str, Any] = {"role": "assistant", "content": reply.content or None}
    if reply.tool_calls:
        message["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in reply.tool_calls
        ]
    finish = "tool_calls" if reply.tool_calls else (done.finish_reason or "stop")
    choice: dict[str, Any] = {
        "index": 0,
        "message": message,
        "finish_reason": finish,
        "token_ids": done.completion_token_ids,
    }
    if want_logprobs and done.logprobs is not None:
        choice["logprobs"] = {
            "content": [{"token": "", "logprob": lp, "top_logprobs": []} for lp in done.logprobs]
        }
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model_id,
        "choices": [choice],
        "usage": {
            "prompt_tokens": done.usage.prompt_tokens,
            "completion_tokens": done.usage.completion_tokens,
            "total_tokens": done.usage.total_tokens,
        },
        "prompt_token_ids": done.prompt_token_ids,
    }


def _error(status: int, message: str) -> JSONResponse:
    kind = "invalid_request_error" if status < 500 else "server_error"
    return JSONResponse({"error": {"message": message, "type": kind}}, status_code=status)


def build_app(model: Any, *, model_id: str) -> FastAPI:
    """The FastAPI app serving `model` (an `HFModel`, or anything with `complete`) as `model_id`."""
    app = FastAPI(title=f"workgym serve-model {model_id}", docs_url=None, redoc_url=None)

    @app.middleware("http")
    async def bound_body(request: Request, call_next: Any) -> Any:
        length = request.headers.get("content-length")
        if request.method == "POST" and (length is None or not length.isdigit()):
            return _error(411, "send a Content-Length header (bodies are size-bounded)")
        if length is not None and length.isdigit() and int(length) > MAX_BODY_BYTES:
            return _error(413, f"request body over {MAX_BODY_BYTES} bytes; send less history")
        return await call_next(request)

    @app.exception_handler(RequestValidationError)
    async def bad_body(_: Request, exc: RequestValidationError) -> JSONResponse:
        where = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()[:3]
        )
        return _error(400, f"bad request body ({where}); see workgym.apps.serve.model_server")

    @app.get("/healthz")
    async def healthz() -> dict[str, Any]:
        return {"ok": True, "model": model_id}

    @app.get("/v1/models")
    async def models() -> dict[str, Any]:
        entry = {"id": model_id, "object": "model", "owned_by": "local"}
        return {"object": "list", "data": [entry]}

    @app.post("/v1/chat/completions")
    async def chat(body: ChatRequest) -> JSONResponse:
        if body.model and body.model != model_id:
            return _error(404, f"model {body.model!r} is not served here; use {model_id!r}")
        messages = [m.to_message() for m in body.messages]
        hidden = body.tool_choice == "none"
        tools = [
            ToolSpec(
                name=t.function.name,
                description=t.function.description,
                parameters=t.function.parameters,
            )
            for t in body.tools or []
            if not hidden
        ]
        sampling = Sampling(
            temperature=body.temperature,
            top_p=body.top_p,
            max_tokens=body.max_completion_tokens or body.max_tokens,
            seed=body.seed,
            logprobs=body.logprobs,
        )
        done = await model.complete(messages, tools, sampling)
        return JSONResponse(response_body(model_id, done, body.logprobs))

    return app


def serve(
    model: Any,
    *,
    model_id: str,
    host: str = "127.0.0.1",
    port: int = 8000,
    log_level: str = "warning",
) -> None:
    """Run the server in this process until interrupted."""
    import uvicorn

    from workgym.apps.serve.deadline import DEFAULT_READ_TIMEOUT_S, with_read_timeout

    uvicorn.run(
        build_app(model, model_id=model_id),
        host=host,
        port=port,
        log_level=log_level,
        http=with_read_timeout(DEFAULT_READ_TIMEOUT_S),  # a silent connection is closed
    )
