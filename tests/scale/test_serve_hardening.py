"""`workgym serve` under attack (issue 18, item 5): oversized bodies get 413 and reach nothing, a
lone surrogate loses no episode, every started episode is recorded, and replaying one task to
read its answer off the reward stops at the attempt cap, recorded in the attempts log."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from workgym.apps.serve.server import build_app
from workgym.envs.toy.env import ToyShop

TOKEN = "hardening-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def _client(tmp_path: Path, **kw: Any) -> TestClient:
    kw.setdefault("attempts_log", tmp_path / "attempts.jsonl")
    app = build_app(ToyShop(), token=TOKEN, out=tmp_path / "run", **kw)
    return TestClient(app, raise_server_exceptions=False)


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    with _client(tmp_path) as c:
        yield c


def _episodes(tmp_path: Path) -> list[dict[str, Any]]:
    path = tmp_path / "run" / "episodes.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _submit(answer: int) -> dict[str, Any]:
    call = {"name": "submit_answer", "arguments": json.dumps({"answer": answer})}
    return {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function", "function": call}]}


def test_a_200_mb_step_body_gets_413_and_writes_nothing(client: TestClient, tmp_path: Path) -> None:
    sid = client.post("/sessions", json={}, headers=AUTH).json()["session_id"]
    huge = b'{"message": {"role": "assistant", "content": "' + b"x" * 200_000_000 + b'"}}'
    reply = client.post(
        f"/sessions/{sid}/step", content=huge, headers={**AUTH, "content-type": "application/json"}
    )
    del huge
    assert reply.status_code == 413 and "1048576-byte limit" in reply.json()["error"]
    run = tmp_path / "run"
    assert sum(f.stat().st_size for f in run.rglob("*") if f.is_file()) < 100_000


def test_a_chunked_body_over_the_limit_is_cut_off_too(client: TestClient) -> None:
    sid = client.post("/sessions", json={}, headers=AUTH).json()["session_id"]

    def chunks() -> Iterator[bytes]:
        yield b'{"message": {"role": "assistant", "content": "'
        for _ in range(3):
            yield b"x" * 2**20
        yield b'"}}'

    reply = client.post(
        f"/sessions/{sid}/step",
        content=chunks(),
        headers={**AUTH, "content-type": "application/json"},
    )
    assert reply.status_code == 413


def test_a_lone_surrogate_loses_no_episode(client: TestClient, tmp_path: Path) -> None:
    sid = client.post("/sessions", json={}, headers=AUTH).json()["session_id"]
    body = '{"message": {"role": "assistant", "content": "\\ud800 the answer"}}'
    reply = client.post(
        f"/sessions/{sid}/step", content=body, headers={**AUTH, "content-type": "application/json"}
    )
    assert reply.status_code == 200, reply.text
    (record,) = _episodes(tmp_path)
    assert "\ufffd the answer" in json.dumps(record, ensure_ascii=False)


def test_every_started_episode_is_recorded(
    client: TestClient, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = client.post("/sessions", json={}, headers=AUTH).json()["session_id"]
    client.delete(f"/sessions/{first}", headers=AUTH)  # closed mid-episode
    second = client.post("/sessions", json={}, headers=AUTH).json()["session_id"]
    client.post(f"/sessions/{second}/reset", json={"seed": 1}, headers=AUTH)  # reset mid-episode

    async def broken(*_: Any, **__: Any) -> Any:
        raise RuntimeError("disk on fire")

    hub = client.app.state.hub  # type: ignore[attr-defined]
    monkeypatch.setattr(hub.sessions[second].driver, "step", broken)
    reply = client.post(f"/sessions/{second}/step", json={"message": _submit(1)}, headers=AUTH)
    assert reply.status_code == 500 and "recorded as an error" in reply.json()["error"]
    records = _episodes(tmp_path)
    assert [r["outcome"] for r in records] == ["error", "error", "error"]
    assert "session closed" in records[0]["error"] and "reset" in records[1]["error"]
    assert "disk on fire" in records[2]["error"]


def test_replaying_one_task_for_its_answer_stops_at_the_cap(tmp_path: Path) -> None:
    toy = ToyShop()
    task = next(t for t in toy.taskset.split("train") if int(t.answer) >= 50)
    found = None
    with _client(tmp_path, max_attempts=50) as c:
        for guess in range(1000):  # the oracle attack: one guess per replay of the same task
            opened = c.post("/sessions", json={"task_id": task.id}, headers=AUTH)
            if opened.status_code == 429:
                assert "50 attempts" in opened.json()["error"]
                break
            sid = opened.json()["session_id"]
            step = c.post(f"/sessions/{sid}/step", json={"message": _submit(guess)}, headers=AUTH)
            if step.json()["reward"] == 1.0:
                found = guess
                break
        else:
            raise AssertionError("the cap never stopped the replay")
    assert found is None and guess == 50
    log = [json.loads(line) for line in (tmp_path / "attempts.jsonl").read_text().splitlines()]
    assert len(log) == 50 and {r["task_id"] for r in log} == {task.id}
    assert len({r["session_id"] for r in log}) == 50 and log[-1]["attempt"] == 50
    with _client(tmp_path, max_attempts=50) as again:  # a restart does not reset the count
        assert again.post("/sessions", json={"task_id": task.id}, headers=AUTH).status_code == 429
        other = next(t for t in toy.taskset.split("train") if t.id != task.id)
        assert again.post("/sessions", json={"task_id": other.id}, headers=AUTH).status_code == 200
