"""`workgym serve` with several clients (issue 39, item 6): one client cannot spend another's
attempt caps or touch its sessions, caps persist across restarts per client, connections that
stop talking are closed, and a 5 MB reply is not counted as 15 tokens."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from workgym.apps.serve.deadline import with_read_timeout
from workgym.apps.serve.server import build_app, client_id
from workgym.core.episode import TokenUsage
from workgym.core.messages import Message
from workgym.core.model import MAX_TOKEN_BYTES, Completion, Sampling, Usage
from workgym.envs.toy.env import ToyShop
from workgym.run.policy import Policy, run_episode

A, B = "token-of-client-a", "token-of-client-b"


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _client(tmp_path: Path, **kw: Any) -> TestClient:
    app = build_app(ToyShop(), token=A, tokens=[B], attempts_log=tmp_path / "attempts.jsonl", **kw)
    return TestClient(app, raise_server_exceptions=False)


def _exhaust(c: TestClient, token: str, task_id: str, cap: int) -> None:
    for _ in range(cap):
        opened = c.post("/sessions", json={"task_id": task_id}, headers=_auth(token))
        assert opened.status_code == 200, opened.text
    refused = c.post("/sessions", json={"task_id": task_id}, headers=_auth(token))
    assert refused.status_code == 429 and f"{cap} attempts by this client" in refused.text


def test_one_client_cannot_spend_another_clients_attempts(tmp_path: Path) -> None:
    task = ToyShop().taskset.split("train")[0]
    with _client(tmp_path, max_attempts=5) as c:
        _exhaust(c, A, task.id, 5)  # client A uses up its cap on the task ...
        opened = c.post("/sessions", json={"task_id": task.id}, headers=_auth(B))
        assert opened.status_code == 200  # ... and client B still plays it
    log = [json.loads(x) for x in (tmp_path / "attempts.jsonl").read_text().splitlines()]
    assert [r["client"] for r in log] == [client_id(A)] * 5 + [client_id(B)]
    assert A not in json.dumps(log) and B not in json.dumps(log)  # tokens never logged
    with _client(tmp_path, max_attempts=5) as again:  # caps persist across a restart, per client
        again_a = again.post("/sessions", json={"task_id": task.id}, headers=_auth(A))
        assert again_a.status_code == 429
        again_b = again.post("/sessions", json={"task_id": task.id}, headers=_auth(B))
        assert again_b.status_code == 200


def test_legacy_lines_without_a_client_count_for_every_client(tmp_path: Path) -> None:
    toy = ToyShop()
    task = toy.taskset.split("train")[0]
    line = {"at": "t", "env_id": toy.id, "env_hash": toy.content_hash(), "task_id": task.id,
            "split": "train", "session_id": "s", "attempt": 1}  # fmt: skip
    (tmp_path / "attempts.jsonl").write_text((json.dumps(line) + "\n") * 3)
    with _client(tmp_path, max_attempts=3) as c:
        for token in (A, B):
            opened = c.post("/sessions", json={"task_id": task.id}, headers=_auth(token))
            assert opened.status_code == 429


def test_a_client_cannot_use_another_clients_session(tmp_path: Path) -> None:
    with _client(tmp_path) as c:
        sid = c.post("/sessions", json={}, headers=_auth(A)).json()["session_id"]
        step = {"message": {"role": "assistant", "content": "hi"}}
        assert c.post(f"/sessions/{sid}/step", json=step, headers=_auth(B)).status_code == 404
        assert c.post(f"/sessions/{sid}/reset", json={}, headers=_auth(B)).status_code == 404
        assert c.delete(f"/sessions/{sid}", headers=_auth(B)).status_code == 404
        assert c.post(f"/sessions/{sid}/step", json=step, headers=_auth(A)).status_code == 200


@pytest.fixture
def server(tmp_path: Path) -> Iterator[int]:
    """The real app on uvicorn with ReadDeadline at 1 s."""
    import uvicorn

    app = build_app(ToyShop(), token=A, attempts_log=tmp_path / "attempts.jsonl")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    config = uvicorn.Config(
        app, host="127.0.0.1", port=port, log_level="warning", http=with_read_timeout(1.0)
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 15
    while not server.started:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    yield port
    server.should_exit = True
    thread.join(timeout=10)


@pytest.mark.parametrize(
    "payload",
    [b"", b"GET /info HTTP/1.1\r\nHost: x\r\n", b"POST /sessions HTTP/1.1\r\nHost: x\r\n"
     b"Content-Length: 100\r\nAuthorization: Bearer " + A.encode() + b"\r\n\r\n{\"ta"],
)  # fmt: skip
def test_a_connection_that_stops_talking_is_closed(server: int, payload: bytes) -> None:
    with socket.create_connection(("127.0.0.1", server), timeout=10) as conn:
        conn.sendall(payload)
        started = time.monotonic()
        data = conn.recv(1000)  # b"" when the server closes; a timeout fails the test
        assert time.monotonic() - started < 5
        assert not data.startswith(b"HTTP/1.1 200")


def test_a_whole_request_still_gets_its_answer(server: int) -> None:
    with socket.create_connection(("127.0.0.1", server), timeout=10) as conn:
        conn.sendall(
            b"GET /info HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + A.encode() + b"\r\n\r\n"
        )
        assert conn.recv(1000).startswith(b"HTTP/1.1 200")


class _Liar:
    """A server that sends a 5 MB reply and says it was 15 tokens."""

    name = "fake/liar"

    async def complete(self, messages: list[Message], tools: Any, sampling: Sampling) -> Completion:
        reply = Message(role="assistant", content="x" * 5_000_000)
        return Completion(message=reply, usage=Usage(prompt_tokens=10, completion_tokens=15))


def test_a_5_mb_reply_is_not_counted_as_15_tokens() -> None:
    toy = ToyShop()
    task = toy.taskset.split("train")[0]
    episode = asyncio.run(run_episode(toy, task, Policy(_Liar()), seed=0))
    assert episode.usage.completion_tokens >= 5_000_000 // MAX_TOKEN_BYTES
    honest = Completion(
        message=Message(role="assistant", content="hi"), usage=Usage(completion_tokens=3)
    )
    usage = TokenUsage()
    usage.add_call(honest)
    assert usage.completion_tokens == 3  # an honest count is never raised
