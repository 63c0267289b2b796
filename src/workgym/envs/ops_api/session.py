"""One episode's handle on the operations API: a private session and an HTTP client bound to it.

The tools only ever reach `request()`, which sends the session header and nothing else, so an
agent cannot address another episode's world or the admin routes. The verifier reads the final
state through `final_state()` with the admin token; `close()` deletes the session on the server.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import httpx2

from workgym.core.errors import ToolError

if TYPE_CHECKING:
    from workgym.envs.ops_api.hosting import ServiceThread

REQUEST_TIMEOUT_S = 10.0


class OpsSession:
    def __init__(self, service: ServiceThread, world_seed: int) -> None:
        self.world_seed = world_seed
        self._service = service
        base_url = service.start()
        self._admin = {"X-Admin-Token": service.admin_token}
        # Creating the session is one blocking round trip on this thread; the server runs on its
        # own thread and loop, so this cannot deadlock the episode loop that called state().
        with httpx2.Client(
            base_url=base_url,
            transport=httpx2.HTTPTransport(verify=False),
            timeout=REQUEST_TIMEOUT_S,
        ) as client:
            reply = client.post(
                "/admin/sessions", json={"world_seed": world_seed}, headers=self._admin
            )
        if reply.status_code != 201:
            raise RuntimeError(
                f"operations API refused a session: {reply.status_code} {reply.text}"
            )
        self.session_id: str = reply.json()["session_id"]
        # verify=False skips building an SSL context (25 ms per client): this is plain HTTP.
        self.client = httpx2.AsyncClient(
            base_url=base_url,
            headers={"X-Session": self.session_id},
            transport=httpx2.AsyncHTTPTransport(verify=False),
            timeout=REQUEST_TIMEOUT_S,
        )
        self.final: dict[str, Any] | None = None
        self.closed = False

    async def request(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        params: dict[str, str] | None = None,
    ) -> Any:
        """One API call for a tool: JSON back, or a ToolError carrying the server's message."""
        if self.closed:
            raise ToolError("this episode's API session is closed")
        try:
            reply = await self.client.request(
                method, path, json=body if body is not None else None, params=params
            )
        except httpx2.TimeoutException:
            raise ToolError(f"{method} {path} timed out; try again") from None
        except httpx2.HTTPError as exc:
            raise ToolError(f"the operations API did not answer ({type(exc).__name__})") from None
        try:
            data = reply.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            data = {"error": reply.text[:500]}
        if reply.status_code >= 400:
            message = data.get("error", data) if isinstance(data, dict) else data
            raise ToolError(f"{reply.status_code}: {message}")
        return data

    async def snapshot(self) -> dict[str, Any]:
        """The session's final world, reads and forbidden calls (cached once taken)."""
        if self.final is None:
            reply = await self.client.get(f"/admin/sessions/{self.session_id}", headers=self._admin)
            reply.raise_for_status()
            self.final = reply.json()
        return self.final

    def snapshot_sync(self) -> dict[str, Any]:
        """`snapshot()` for a caller outside an event loop (a verifier run on its own)."""
        if self.final is None:
            reply = httpx2.get(
                f"{self._service.base_url}/admin/sessions/{self.session_id}",
                headers=self._admin,
                timeout=REQUEST_TIMEOUT_S,
                verify=False,
            )
            reply.raise_for_status()
            self.final = reply.json()
        return self.final

    async def close(self) -> None:
        """Take the final snapshot, then free the session on the server and the client."""
        if self.closed:
            return
        try:
            await self.snapshot()
            await self.client.delete(f"/admin/sessions/{self.session_id}", headers=self._admin)
        finally:
            self.closed = True
            await self.client.aclose()
