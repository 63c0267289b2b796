"""Closing connections that stopped talking: uvicorn's HTTP protocol with a read deadline.

uvicorn closes a keep-alive connection that sits idle after a response, but a connection that
never sends a whole request (a bare TCP connect, half a header, a body that stops) is kept
forever: each holds a socket and a slot, and enough of them starve the server (issue 39, item
6; measured: still open after 8 s of silence, and after any wait). `ReadDeadline` closes a
connection when `read_timeout_s` passes without a byte from the client while the server waits
on it (no request yet, between requests, or mid-body). A request the application is working on
is never cut: the client is then waiting on us, not idle. WebSockets leave this protocol at the
upgrade, and there uvicorn's pings (20 s) find a peer that went away, and the hub reaps idle
sessions.
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

DEFAULT_READ_TIMEOUT_S = 30.0


class ReadDeadline(H11Protocol):  # type: ignore[misc]
    """H11Protocol that closes the connection after `read_timeout_s` of client silence."""

    read_timeout_s: float = DEFAULT_READ_TIMEOUT_S
    _deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        self._arm()
        super().data_received(data)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def handle_websocket_upgrade(self, event: Any) -> None:
        self._disarm()  # the WebSocket protocol owns the transport from here
        super().handle_websocket_upgrade(event)

    def _arm(self) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(self.read_timeout_s, self._expire)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expire(self) -> None:
        self._deadline = None
        cycle = self.cycle
        waiting_on_client = cycle is None or cycle.response_complete or cycle.more_body
        if not waiting_on_client:  # the application is answering: the client is not idle
            self._arm()
            return
        if not self.transport.is_closing():
            self.transport.close()


def with_read_timeout(seconds: float) -> type[ReadDeadline]:
    """The protocol class for uvicorn's `http=` with this deadline."""
    return type("ReadDeadline", (ReadDeadline,), {"read_timeout_s": seconds})
