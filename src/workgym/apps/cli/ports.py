"""Claiming a TCP port for `workgym view` and `workgym serve` before printing its URL.

Printing "open: http://127.0.0.1:8765/" and then dying in uvicorn on a busy port sends a
newcomer to a page that is someone else's. The port is bound here first, so a busy one is a
one-line error that says what to do, and the URL printed is the one that was bound.
"""

from __future__ import annotations

import errno
import socket

from workgym.core.errors import ConfigError


def claim(host: str, port: int) -> socket.socket:
    """A socket bound to (host, port); port 0 picks a free one. Busy: ConfigError."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise ConfigError(
                f"port {port} on {host} is already in use (another `workgym view` or `serve`?): "
                "pass --port 0 for a free port, or --port N"
            ) from exc
        raise ConfigError(
            f"cannot bind {host}:{port} ({exc.strerror}); pick another --host or --port"
        ) from exc
    # listening now, so the URL printed next answers at once: a browser (or a script) that
    # connects before the server has started waits in the backlog instead of being refused
    sock.listen(128)
    return sock


def bound_port(sock: socket.socket) -> int:
    return int(sock.getsockname()[1])
