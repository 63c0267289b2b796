"""`workgym serve`: real uvicorn on a free loopback port, driven by EnvClient over WS and HTTP."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("websockets")

import uvicorn

from workgym.apps.serve.client import EnvClient, ServeClientError
from workgym.apps.serve.server import build_app, token_ok, ws_protocol
from workgym.envs.toy.env import ToyShop

# a wedged server must fail the test, not hang the suite
pytestmark = pytest.mark.timeout(45)

TOKEN = "scale-test-token"


def connect(url: str, token: str, **kwargs: Any) -> EnvClient:
    """An EnvClient with a short timeout: a wedged server fails fast here."""
    return EnvClient(url, token, timeout_s=10, **kwargs)


class Served:
    def __init__(self, app: Any) -> None:
        config = uvicorn.Config(
            app, host="127.0.0.1", port=0, log_level="warning", ws=ws_protocol()
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            assert time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.01)
        port = self.server.servers[0].sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    out = tmp_path_factory.mktemp("served") / "run"
    s = Served(build_app(ToyShop(), token=TOKEN, idle_timeout_s=60, out=out))
    s.out = out  # type: ignore[attr-defined]
    yield s
    s.stop()


def call(tool: str, /, call_id: str = "c0", **args: Any) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": tool, "arguments": json.dumps(args)},
            }
        ],
    }


def price_task(toy: ToyShop, split: str = "train") -> Any:
    return next(t for t in toy.taskset.split(split) if t.meta["kind"] == "price")


@pytest.mark.parametrize("transport", ["ws", "http"])
def test_a_client_plays_an_episode_and_sees_only_what_an_agent_may(
    served: Served, toy: ToyShop, transport: Any
) -> None:
    task = price_task(toy)
    with connect(served.url, TOKEN, transport=transport) as env:
        assert env.transport == transport
        obs, info = env.reset(task.id, seed=4)
        assert info["task_id"] == task.id and info["split"] == "train" and info["seed"] == 4
        assert [m["role"] for m in obs["messages"]] == ["system", "user"]
        assert {t["function"]["name"] for t in obs["tools"]} == {
            "list_items",
            "get_item",
            "submit_answer",
        }
        obs, reward, terminated, truncated, extra = env.step(
            call("get_item", name=task.meta["subject"])
        )
        item = json.loads(obs["messages"][0]["content"])
        assert item["price_cents"] == task.answer and (reward, terminated, truncated) == (0, 0, 0)
        obs, reward, terminated, truncated, extra = env.step(
            call("submit_answer", answer=task.answer)
        )
        assert (reward, terminated, truncated, extra) == (1.0, True, False, {})
        # the next episode in the same session: a wrong answer scores 0, and no verdict leaks
        env.reset(task.id)
        obs, reward, terminated, _, _ = env.step(call("submit_answer", answer=task.answer + 1))
        assert reward == 0.0 and terminated and "verdict" not in json.dumps(obs)


def test_sessions_are_isolated(served: Served, toy: ToyShop) -> None:
    a_task, b_task = toy.taskset.split("train")[:2]
    with connect(served.url, TOKEN) as a, connect(served.url, TOKEN) as b:
        a.reset(a_task.id)
        b.reset(b_task.id)
        assert a.session_id != b.session_id
        truncated = False
        for i in range(toy.limits.max_turns):  # `a` burns its turn limit while `b` waits
            _, _, _, truncated, _ = a.step(call("list_items", f"a{i}", category="tea"))
        assert truncated
        _, reward, terminated, truncated, _ = b.step(call("submit_answer", answer=b_task.answer))
        assert (reward, terminated, truncated) == (1.0, True, False)
        with pytest.raises(ServeClientError, match="reset first") as exc:
            a.step(call("list_items", category="tea"))
        assert exc.value.status == 409


def test_errors_say_what_to_do(served: Served, toy: ToyShop) -> None:
    with connect(served.url, TOKEN) as env:
        with pytest.raises(ServeClientError, match="reset first"):
            env.step(call("list_items", category="tea"))
        with pytest.raises(ServeClientError, match="no task") as exc:
            env.reset("no-such-task")
        assert exc.value.status == 404
        with pytest.raises(ServeClientError, match="sealed") as exc:
            env.reset(split="test")
        assert exc.value.status == 403
        test_task = toy.taskset.split("test")[0]
        with pytest.raises(ServeClientError, match="sealed"):
            env.reset(test_task.id)
        env.reset(split="dev", seed=9)
        with pytest.raises(ServeClientError, match="assistant message") as exc:
            env.step({"tool_calls": "nonsense"})
        assert exc.value.status == 400
    with connect(served.url, TOKEN, transport="http") as env:
        with pytest.raises(ServeClientError, match="reset"):
            env.step(call("list_items", category="tea"))
        env.reset()
        with pytest.raises(ServeClientError, match=r"bad request body \(body\.message") as exc:
            env._http("POST", f"/sessions/{env.session_id}/step", {"message": "hello"})
        assert exc.value.status == 400


def test_the_token_is_required(served: Served) -> None:
    for transport in ("ws", "http"):
        with pytest.raises(ServeClientError) as exc:
            client = connect(served.url, "wrong", transport=transport)  # type: ignore[arg-type]
            client.reset()
        assert exc.value.status == 401
    import urllib.request

    with urllib.request.urlopen(served.url + "/healthz") as response:  # no token needed
        assert json.loads(response.read()) == {"ok": True}
    assert token_ok("Bearer abc", "abc") and not token_ok("Bearer abd", "abc")
    assert not token_ok(None, "abc") and not token_ok("Basic abc", "abc")


def test_info_lists_tools_and_splits_but_no_answers(served: Served, toy: ToyShop) -> None:
    info = connect(served.url, TOKEN, transport="http").info()
    assert info["env_id"] == toy.id and info["content_hash"] == toy.content_hash()
    assert info["splits"] == {"train": 36, "dev": 12, "test": 12}
    assert set(info) == {  # sizes only: no task, prompt or answer travels
        "env_id",
        "version",
        "content_hash",
        "tools",
        "limits",
        "splits",
        "test_split_served",
        "sessions",
    }
    assert all(t.prompt not in json.dumps(info) for t in toy.taskset)


def test_finished_episodes_are_recorded_server_side(served: Served, toy: ToyShop) -> None:
    task = toy.taskset.split("dev")[0]
    for _ in range(2):
        with connect(served.url, TOKEN) as env:
            env.reset(task.id)
            env.step(call("submit_answer", answer=task.answer))
    lines = [json.loads(x) for x in (served.out / "episodes.jsonl").read_text().splitlines()]  # type: ignore[attr-defined]
    mine = [x for x in lines if x["task_id"] == task.id]
    assert [x["epoch"] for x in mine] == [0, 1]  # (task, epoch) stays unique
    assert all(x["verdict"]["success"] and x["model"] == "remote/agent" for x in mine)


def test_idle_sessions_are_reaped(toy: ToyShop) -> None:
    s = Served(build_app(ToyShop(), token=TOKEN, idle_timeout_s=0.3))
    try:
        ws = connect(s.url, TOKEN, transport="ws")
        http = connect(s.url, TOKEN, transport="http")
        ws.reset()
        http.reset()
        time.sleep(1.0)
        with pytest.raises(ServeClientError, match="idle") as exc:
            ws.step(call("list_items", category="tea"))
        assert exc.value.status == 410
        with pytest.raises(ServeClientError, match="reaped") as exc:
            http.step(call("list_items", category="tea"))
        assert exc.value.status == 404
    finally:
        s.stop()


def test_workgym_serve_cli_prints_a_token_and_binds_loopback(tmp_path: Path, toy: ToyShop) -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "workgym", "serve", "workgym/toy-shop", "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert f"http://127.0.0.1:{port}" in first
        token = proc.stdout.readline().split("token: ", 1)[1].strip()
        assert len(token) >= 24
        task = price_task(toy)
        deadline = time.monotonic() + 20
        while True:
            try:
                env = connect(f"http://127.0.0.1:{port}", token, transport="ws")
                break
            except OSError:
                assert time.monotonic() < deadline, proc.stderr.read() if proc.stderr else ""
                time.sleep(0.1)
        with env:
            env.reset(task.id)
            _, reward, terminated, _, _ = env.step(call("submit_answer", answer=task.answer))
        assert reward == 1.0 and terminated
    finally:
        proc.terminate()
        proc.wait(10)
