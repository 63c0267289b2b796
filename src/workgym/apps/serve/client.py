"""`EnvClient`: the reset/step API of `workgym.GymEnv`, against a `workgym serve` server.

A trainer swaps `GymEnv(env)` for `EnvClient(url, token)` and keeps its loop. The difference is
deliberate: `info` from `step` is empty, because the verdict stays on the server; the reward and
the end flags are what a remote trainer gets.

WebSocket is the transport (one connection = one session, no per-step handshake); when the
`websockets` package is missing or the upgrade fails, the client falls back to plain HTTP with
the standard library, so a bare Python can still drive an environment.
"""

from __future__ import annotations

import contextlib
import inspect
import json
import urllib.error
import urllib.request
from typing import Any, Literal

from workgym.core.messages import Message

Transport = Literal["auto", "ws", "http"]
Observation = dict[str, Any]


class ServeClientError(RuntimeError):
    """The server refused a request; `status` is its HTTP status."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"{status}: {message}")
        self.status = status


class _Rejected(Exception):
    """The server (or a proxy) answered the WebSocket upgrade with a non-auth error status."""


class EnvClient:
    """A remote environment: `reset(task_id | split, seed)` and `step(assistant_message)`."""

    def __init__(
        self,
        url: str,
        token: str,
        *,
        transport: Transport = "auto",
        timeout_s: float = 60.0,
    ) -> None:
        if not url.startswith(("http://", "https://")):
            raise ValueError(
                f"server URL {url!r} must start with http:// (e.g. http://127.0.0.1:8765)"
            )
        self.url = url.rstrip("/")
        self.token = token
        self.timeout_s = timeout_s
        self.session_id: str | None = None
        self._ws: Any = None
        self.transport: Literal["ws", "http"] = "http"
        if transport in ("auto", "ws"):
            try:
                self._ws = self._connect_ws()
                self.transport = "ws"
            except (ImportError, _Rejected):
                if transport == "ws":
                    raise  # auto: no websockets package, or a proxy that refuses upgrades

    # -- transports ----------------------------------------------------------------------------

    def _connect_ws(self) -> Any:
        from websockets.exceptions import InvalidStatus
        from websockets.sync.client import connect

        ws_url = "ws" + self.url.removeprefix("http") + "/ws"
        options: dict[str, Any] = {
            "additional_headers": {"Authorization": f"Bearer {self.token}"},
            "open_timeout": self.timeout_s,
            "max_size": 2**24,
        }
        if "legacy" in inspect.signature(connect).parameters:
            options["legacy"] = True  # websockets >= 17: a long-lived connection, not a `with`
        try:
            return connect(ws_url, **options)
        except InvalidStatus as exc:
            if exc.response.status_code in (401, 403):
                raise ServeClientError(401, "the server refused the token") from exc
            raise _Rejected(f"WebSocket upgrade refused: {exc}") from exc

    def _ws_call(self, request: dict[str, Any]) -> dict[str, Any]:
        from websockets.exceptions import ConnectionClosed

        try:
            self._ws.send(json.dumps(request))
            reply: dict[str, Any] = json.loads(self._ws.recv(timeout=self.timeout_s))
        except ConnectionClosed as exc:
            reason = exc.rcvd.reason if exc.rcvd is not None else "connection closed"
            raise ServeClientError(410, f"session is gone ({reason}); open a new client") from exc
        if not reply.pop("ok", False):
            raise ServeClientError(int(reply.get("status", 500)), str(reply.get("error")))
        return reply

    def _http(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(
            self.url + path,
            data=data,
            method=method,
            headers={"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as exc:
            try:
                message = json.loads(exc.read()).get("error", exc.reason)
            except ValueError:
                message = exc.reason
            raise ServeClientError(exc.code, str(message)) from None

    # -- the Gymnasium verbs -------------------------------------------------------------------

    def reset(
        self, task_id: str | None = None, *, split: str = "train", seed: int = 0
    ) -> tuple[Observation, dict[str, Any]]:
        """Start an episode; returns (observation, info with task_id, split, seed)."""
        body = {"task_id": task_id, "split": split, "seed": seed}
        if self._ws is not None:
            reply = self._ws_call({"op": "reset", **body})
        elif self.session_id is None:
            reply = self._http("POST", "/sessions", body)
        else:
            reply = self._http("POST", f"/sessions/{self.session_id}/reset", body)
        self.session_id = reply["session_id"]
        observation = reply.pop("observation")
        return observation, reply

    def step(
        self, message: Message | dict[str, Any]
    ) -> tuple[Observation, float, bool, bool, dict[str, Any]]:
        """One assistant turn -> (observation, reward, terminated, truncated, {})."""
        wire = message.to_openai() if isinstance(message, Message) else message
        if self._ws is not None:
            reply = self._ws_call({"op": "step", "message": wire})
        else:
            if self.session_id is None:
                raise ServeClientError(409, "call reset() before step()")
            reply = self._http("POST", f"/sessions/{self.session_id}/step", {"message": wire})
        return (
            reply["observation"],
            float(reply["reward"]),
            bool(reply["terminated"]),
            bool(reply["truncated"]),
            {},
        )

    def info(self) -> dict[str, Any]:
        """The environment's id, hash, tools and split sizes (over HTTP)."""
        result: dict[str, Any] = self._http("GET", "/info")
        return result

    def close(self) -> None:
        if self._ws is not None:
            with contextlib.suppress(Exception):
                self._ws.send(json.dumps({"op": "close"}))
            self._ws.close()
            self._ws = None
        elif self.session_id is not None:
            with contextlib.suppress(ServeClientError, OSError):
                self._http("DELETE", f"/sessions/{self.session_id}")
        self.session_id = None

    def __enter__(self) -> EnvClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
