"""Serve the operations API with uvicorn on 127.0.0.1, in a background thread of this process.

A thread (not a subprocess) keeps the service's lifetime tied to the environment object that
started it: it starts on the first episode, binds a free port chosen by the OS (port 0, so
parallel test runs never collide), and stops when the environment is closed or collected. It runs
its own event loop, so the episode loop's blocking calls (creating a session) cannot deadlock it.
"""

from __future__ import annotations

import secrets
import socket
import threading
import time

import uvicorn

from workgym.envs.ops_api.service import create_app

HOST = "127.0.0.1"
START_TIMEOUT_S = 15.0


class ServiceError(RuntimeError):
    """The service did not start or stopped answering."""


class ServiceThread:
    """One uvicorn server on a free local port; `start()` is idempotent and thread-safe."""

    def __init__(self, host: str = HOST) -> None:
        self.host = host
        self.admin_token = secrets.token_urlsafe(24)
        self._lock = threading.Lock()
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._socket: socket.socket | None = None
        self.base_url = ""

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> str:
        with self._lock:
            if self.running:
                return self.base_url
            # proto=IPPROTO_TCP matters: asyncio sets TCP_NODELAY only on sockets that say they
            # are TCP, and without it every keep-alive response waits ~40 ms for a delayed ACK.
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((self.host, 0))
            port = sock.getsockname()[1]
            config = uvicorn.Config(
                create_app(self.admin_token),
                log_level="warning",
                access_log=False,
                lifespan="off",
                loop="asyncio",
                http="h11",
                ws="none",
                timeout_keep_alive=30,
            )
            server = uvicorn.Server(config)
            thread = threading.Thread(
                target=server.run,
                kwargs={"sockets": [sock]},
                name=f"workgym-ops-api:{port}",
                daemon=True,
            )
            thread.start()
            deadline = time.monotonic() + START_TIMEOUT_S
            while not server.started:
                if not thread.is_alive() or time.monotonic() > deadline:
                    server.should_exit = True
                    sock.close()
                    raise ServiceError(
                        f"the operations API did not start on {self.host}:{port}; "
                        "see the log above for the cause"
                    )
                time.sleep(0.005)
            self._server, self._thread, self._socket = server, thread, sock
            self.base_url = f"http://{self.host}:{port}"
            return self.base_url

    def stop(self, timeout_s: float = 5.0) -> None:
        with self._lock:
            if self._server is not None:
                self._server.should_exit = True
            if self._thread is not None:
                self._thread.join(timeout_s)
            if self._socket is not None:
                self._socket.close()
            self._server = self._thread = self._socket = None
            self.base_url = ""
