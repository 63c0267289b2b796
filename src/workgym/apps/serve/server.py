"""`workgym serve ENV`: an environment as an HTTP + WebSocket server of isolated episodes.

Trainers and agents on other machines drive episodes with the Gymnasium verbs: `reset` picks a
task (by id, or drawn from a split with the seed) and returns the opening observation; `step`
takes one assistant message and returns the tool results, the reward (0 until the end) and the
terminated/truncated flags. Every session has its own toolkit state. What the verifier found
stays on the server.

Wire form (JSON; `Authorization: Bearer TOKEN` on everything but /healthz):

    POST   /sessions                 {task_id?, split?, seed?}   -> ResetResult
    POST   /sessions/{id}/reset      {task_id?, split?, seed?}   -> ResetResult
    POST   /sessions/{id}/step       {message}                   -> StepResult
    DELETE /sessions/{id}
    GET    /info                     env id, hash, tools, split sizes (never answers)
    WS     /ws                       one session per connection:
           {"op": "reset", ...} | {"op": "step", "message": {...}} | {"op": "close"}
           -> {"ok": true, ...result} or {"ok": false, "status": N, "error": "..."}

Each accepted token is one client (`--token` repeats): a client's resets spend its own attempt
caps only, and its sessions answer to it alone (404 for another client's session id). A
connection silent for `read_timeout_s` while the server waits on it is closed (`deadline`).

Errors carry the HTTP status and a sentence that says what to do. Idle sessions are reaped;
a reaped WebSocket is closed with code 4008. Request bodies and WebSocket messages over
`max_body_bytes` get 413 with the limit; resets past a task's attempt cap get 429 (attempts).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import json
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Depends, FastAPI, Request, WebSocket, WebSocketDisconnect
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from workgym.apps.serve.attempts import DEFAULT_MAX_ATTEMPTS
from workgym.apps.serve.deadline import DEFAULT_READ_TIMEOUT_S, with_read_timeout
from workgym.apps.serve.refusal import ServeError
from workgym.apps.serve.sessions import Hub, ResetRequest, Session, StepRequest
from workgym.core.environment import Environment

PROTOCOLS = ("workgym", "openenv")
WS_IDLE_CLOSE = 4008
WS_UNAUTHORIZED = 4001
DEFAULT_MAX_BODY_BYTES = 2**20  # one assistant message; a 200 MB body was written to the run


def _too_large_text(limit: int) -> str:
    return f"request body over the {limit}-byte limit; send one assistant message per step"


class BodyLimit:
    """ASGI middleware: 413 for an HTTP body over `max_bytes`, by its Content-Length or, when
    chunked, as soon as that many bytes have arrived (nothing past the limit is buffered)."""

    def __init__(self, app: Any, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await self._refuse(send)
            return
        # Read the body here, up to the limit (FastAPI turns an error raised while it reads the
        # body into a 400), then hand the app the same messages.
        messages: list[Any] = []
        seen = 0
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":
                break
            seen += len(message.get("body", b""))
            if seen > self.max_bytes:
                await self._refuse(send)
                return
            if not message.get("more_body", False):
                break

        async def replay() -> Any:
            return messages.pop(0) if messages else await receive()

        await self.app(scope, replay, send)

    async def _refuse(self, send: Any) -> None:
        body = json.dumps({"error": _too_large_text(self.max_bytes)}).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
        await send({"type": "http.response.start", "status": 413, "headers": headers})
        await send({"type": "http.response.body", "body": body})


def new_token() -> str:
    return secrets.token_urlsafe(24)


def token_ok(header: str | None, token: str) -> bool:
    """Constant-time check of an `Authorization: Bearer ...` header."""
    scheme, _, given = (header or "").partition(" ")
    return hmac.compare_digest(
        given.strip().encode() if scheme.lower() == "bearer" else b"", token.encode()
    )


def client_id(token: str) -> str:
    """The name a token's client goes by in the attempts log (never the token itself)."""
    return "client-" + hashlib.sha256(token.encode()).hexdigest()[:12]


def client_of(header: str | None, clients: dict[str, str]) -> str | None:
    """The client whose token an `Authorization: Bearer ...` header carries, or None; every
    token is compared in constant time, so the answer's timing names no token."""
    scheme, _, given = (header or "").partition(" ")
    sent = given.strip().encode() if scheme.lower() == "bearer" else b""
    found = None
    for token, name in clients.items():
        if hmac.compare_digest(sent, token.encode()):
            found = name
    return found


def build_app(
    env: Environment,
    *,
    token: str,
    tokens: Sequence[str] = (),
    idle_timeout_s: float = 600.0,
    max_sessions: int = 1024,
    allow_test: bool = False,
    out: str | Path | None = None,
    protocol: str = "workgym",
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    max_attempts: int | None = DEFAULT_MAX_ATTEMPTS,
    attempts_log: str | Path | None = None,
) -> FastAPI:
    """The FastAPI application serving `env`; run it with uvicorn (see `serve`).

    `protocol="openenv"` makes `/ws` speak OpenEnv's protocol (`openenv_ws`), which has no
    credentials; the HTTP routes keep the token. `tokens`: more clients' tokens, each its own
    client (caps and sessions), beside `token`.

    FastAPI reads the handlers' annotations at runtime, so its types are imported at module
    level here (this module is only imported to serve).
    """
    if not token or not all(tokens):
        raise ValueError("the server needs non-empty tokens")
    clients = {t: client_id(t) for t in (token, *tokens)}
    if protocol not in PROTOCOLS:
        raise ValueError(f"unknown protocol {protocol!r}: use {' or '.join(PROTOCOLS)}")
    hub = Hub(
        env,
        idle_timeout_s=idle_timeout_s,
        max_sessions=max_sessions,
        allow_test=allow_test,
        out=out,
        max_attempts=max_attempts,
        attempts_log=attempts_log,
    )

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        reaper = asyncio.create_task(hub.reap_forever())
        try:
            yield
        finally:
            reaper.cancel()
            hub.shutdown()

    app = FastAPI(title=f"workgym serve {env.id}", lifespan=lifespan, docs_url=None)
    app.state.hub = hub
    app.add_middleware(BodyLimit, max_bytes=max_body_bytes)

    async def require_token(request: Request) -> None:
        client = client_of(request.headers.get("authorization"), clients)
        if client is None:
            raise ServeError(401, "missing or wrong token: send Authorization: Bearer <token>")
        request.state.client = client

    secured = APIRouter(dependencies=[Depends(require_token)])

    @app.exception_handler(ServeError)
    async def serve_error(_: Request, exc: ServeError) -> JSONResponse:
        return JSONResponse({"error": str(exc)}, status_code=exc.status)

    @app.exception_handler(RequestValidationError)
    async def bad_body(_: Request, exc: RequestValidationError) -> JSONResponse:
        where = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()[:3]
        )
        error = f"bad request body ({where}); see the wire form in workgym.apps.serve.server"
        return JSONResponse({"error": error}, status_code=400)

    @app.get("/healthz")
    async def healthz() -> dict[str, Any]:
        return {"ok": True}

    @secured.get("/info")
    async def info() -> dict[str, Any]:
        return hub.info()

    @secured.post("/sessions")
    async def open_session(request: Request, body: ResetRequest | None = None) -> dict[str, Any]:
        session = hub.open(request.state.client)
        try:
            return session.reset(body or ResetRequest()).model_dump()
        except ServeError:
            hub.close(session.id)
            raise

    @secured.post("/sessions/{session_id}/reset")
    async def reset(
        request: Request, session_id: str, body: ResetRequest | None = None
    ) -> dict[str, Any]:
        session = hub.get(session_id, request.state.client)
        return session.reset(body or ResetRequest()).model_dump()

    @secured.post("/sessions/{session_id}/step")
    async def step(request: Request, session_id: str, body: StepRequest) -> dict[str, Any]:
        return (await hub.get(session_id, request.state.client).step(body.message)).model_dump()

    @secured.delete("/sessions/{session_id}")
    async def close(request: Request, session_id: str) -> dict[str, Any]:
        hub.get(session_id, request.state.client)
        hub.close(session_id)
        return {"closed": session_id}

    app.include_router(secured)

    @app.websocket("/ws")
    async def ws(socket: WebSocket) -> None:
        if protocol == "openenv":
            from workgym.apps.serve.openenv_ws import openenv_refusal, openenv_turn

            steps = [0]  # OpenEnv's `state` reports the episode's step count

            async def turn(session: Session, text: str) -> str | None:
                return await openenv_turn(session, text, steps)

            await _socket_session(hub, socket, turn, openenv_refusal, max_body_bytes, "openenv")
            return
        client = client_of(socket.headers.get("authorization"), clients)
        if client is None:
            await socket.close(code=WS_UNAUTHORIZED, reason="missing or wrong token")
            return
        await _socket_session(hub, socket, _ws_turn, _ws_refusal, max_body_bytes, client)

    return app


async def _socket_session(
    hub: Hub,
    socket: WebSocket,
    turn: Callable[[Session, str], Awaitable[str | None]],
    refusal: Callable[[ServeError], dict[str, Any]],
    max_bytes: int = DEFAULT_MAX_BODY_BYTES,
    client: str = "",
) -> None:
    """One WebSocket connection = one session: each text message is a turn of `turn` (None:
    close); a hub that is full answers `refusal(error)` and closes; a message over `max_bytes`
    is answered with a 413 refusal and goes no further."""
    await socket.accept()
    try:
        session = hub.open(client)
    except ServeError as exc:
        await socket.send_json(refusal(exc))
        await socket.close()
        return

    async def on_reap() -> None:
        with contextlib.suppress(Exception):
            await socket.close(code=WS_IDLE_CLOSE, reason="idle session reaped")

    session.on_reap = on_reap
    try:
        while True:
            text = await socket.receive_text()
            if len(text) > max_bytes:
                await socket.send_json(refusal(ServeError(413, _too_large_text(max_bytes))))
                continue
            reply = await turn(session, text)
            if reply is None:
                await socket.close()
                return
            await socket.send_text(reply)
    except (WebSocketDisconnect, RuntimeError):
        return  # the client went away, or the reaper closed the socket
    finally:
        hub.close(session.id)


def _ws_refusal(exc: ServeError) -> dict[str, Any]:
    return {"ok": False, "status": exc.status, "error": str(exc)}


async def _ws_turn(session: Session, text: str) -> str | None:
    """One WebSocket request -> its JSON reply; None for `close`."""
    try:
        request = json.loads(text)
        if not isinstance(request, dict):
            raise ServeError(400, 'send a JSON object like {"op": "reset"}')
        op = request.pop("op", None)
        if op == "close":
            return None
        if op == "reset":
            result: Any = session.reset(ResetRequest.model_validate(request))
        elif op == "step":
            result = await session.step(StepRequest.model_validate(request).message)
        else:
            raise ServeError(400, f"unknown op {op!r}: use reset, step or close")
        return json.dumps({"ok": True, **result.model_dump()})
    except ServeError as exc:
        return json.dumps({"ok": False, "status": exc.status, "error": str(exc)})
    except ValueError as exc:  # bad JSON, or a body that does not validate
        error = f"bad request ({exc}); see `workgym serve --help` for the wire form"
        return json.dumps({"ok": False, "status": 400, "error": error})


def serve(
    env: Environment,
    *,
    host: str = "127.0.0.1",
    port: int = 8765,
    token: str,
    tokens: Sequence[str] = (),
    idle_timeout_s: float = 600.0,
    max_sessions: int = 1024,
    allow_test: bool = False,
    out: str | Path | None = None,
    log_level: str = "warning",
    protocol: str = "workgym",
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    max_attempts: int | None = DEFAULT_MAX_ATTEMPTS,
    read_timeout_s: float = DEFAULT_READ_TIMEOUT_S,
) -> None:
    """Run the server in this process until interrupted."""
    import uvicorn

    app = build_app(
        env,
        token=token,
        tokens=tokens,
        idle_timeout_s=idle_timeout_s,
        max_sessions=max_sessions,
        allow_test=allow_test,
        out=out,
        protocol=protocol,
        max_body_bytes=max_body_bytes,
        max_attempts=max_attempts,
    )
    uvicorn.run(
        app,
        host=host,
        port=port,
        log_level=log_level,
        ws=ws_protocol(),
        ws_max_size=max_body_bytes + 1024,
        http=with_read_timeout(read_timeout_s),
    )


def ws_protocol() -> str:
    """uvicorn's WebSocket implementation: the sans-I/O one where available, none without
    the `websockets` package (HTTP sessions still work; `pip install 'workgym[serve]'`)."""
    import importlib.util

    from uvicorn.config import WS_PROTOCOLS

    if importlib.util.find_spec("websockets") is None:
        import sys

        print(
            "workgym: WebSocket sessions are off (no websockets package); HTTP sessions work. "
            "pip install 'workgym[serve]' to enable them",
            file=sys.stderr,
        )
        return "none"
    return "websockets-sansio" if "websockets-sansio" in WS_PROTOCOLS else "auto"
