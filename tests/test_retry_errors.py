"""Faults that heal (issue 18, item 6): a run against an endpoint that fails its first N requests
and then recovers, re-run with --retry-errors, ends with every episode answered and the summary
of a clean run; the errored lines stay in the file, marked superseded."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from fakes.chat_server import FakeChatServer, ScriptedReply, error, tool_calls, truncated_json
from workgym.apps.cli.main import app
from workgym.apps.viewer.queries import RunQueries
from workgym.envs.toy.env import ToyShop
from workgym.run.rundir import RunDir, read_spec, superseded_lines
from workgym.run.runner import Run

pytestmark = pytest.mark.timeout(120)
TASKS = 4


class Flaky:
    """Answers each task correctly from its prompt, after failing the first `failures` requests
    (HTTP 500, and a reply cut short mid-JSON every third time)."""

    def __init__(self, server: FakeChatServer, failures: int) -> None:
        self.server, self.failures, self.seen = server, failures, 0
        self.answers = {t.prompt: t.answer for t in ToyShop().taskset}
        server._take = self.take  # type: ignore[method-assign]

    def take(self, body: dict[str, Any], headers: dict[str, str]) -> ScriptedReply:
        self.seen += 1
        if self.seen <= self.failures:
            return truncated_json() if self.seen % 3 == 0 else error(500, "warming up")
        prompt = next(m["content"] for m in body["messages"] if m["role"] == "user")
        return tool_calls(("submit_answer", {"answer": self.answers[prompt]}))


def _eval(url: str, out: Path, *extra: str) -> tuple[int, str]:
    args = ["eval", "workgym/toy-shop", "--model", "openai/fake-model", "--base-url", url,
            "--split", "dev", "--limit", str(TASKS), "--concurrency", "1", "--out", str(out),
            "--max-retries", "0", "--timeout", "5", "--no-progress", *extra]  # fmt: skip
    result = CliRunner().invoke(app, args)
    return result.exit_code, result.output + (repr(result.exception) if result.exception else "")


def _summary(out: Path) -> dict[str, Any]:
    summary = Run(RunDir(out, read_spec(out))).summary().model_dump()
    summary.pop("run")
    return summary


def test_retry_errors_heals_a_run_into_the_clean_runs_summary(tmp_path: Path) -> None:
    with FakeChatServer() as clean_server:
        Flaky(clean_server, failures=0)
        assert _eval(clean_server.base_url, tmp_path / "clean")[0] == 0
    clean = _summary(tmp_path / "clean")
    assert clean["errors"] == 0 and clean["success_rate"] == 1.0 and clean["n_episodes"] == TASKS

    with FakeChatServer() as server:
        # Each episode tries 3 times (the runner's retries): 6 failures error two episodes.
        Flaky(server, failures=6)
        out = tmp_path / "flaky"
        code, output = _eval(server.base_url, out)
        assert code == 0, output
        hurt = _summary(out)
        assert hurt["errors"] == 2 and hurt["n_episodes"] == TASKS
        assert _eval(server.base_url, out)[0] == 0  # a plain resume adds nothing
        assert _summary(out) == hurt
        code, output = _eval(server.base_url, out, "--retry-errors")
        assert code == 0, output

    healed = _summary(out)
    assert healed == clean
    lines = (out / "episodes.jsonl").read_text().splitlines()
    assert len(lines) == TASKS + 2  # the errored lines are kept...
    replaced = superseded_lines(out)
    assert len(replaced) == 2  # ...and marked superseded
    assert all(json.loads(lines[n - 1])["outcome"] == "error" for n in replaced)
    keys = [(r["task_id"], r["epoch"]) for r in RunDir(out, read_spec(out)).records()]
    assert len(keys) == len(set(keys)) == TASKS
    viewer = RunQueries()  # the viewer's numbers are the CLI's numbers, superseded lines left out
    try:
        assert viewer.summary(out).model_dump(exclude={"run"}) == healed
        assert all(viewer.episode(out, t, e)["outcome"] != "error" for t, e in keys)  # type: ignore[index]
    finally:
        viewer.close()


def test_a_dead_base_url_fails_before_any_episode(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    code, output = _eval(f"http://127.0.0.1:{port}/v1", tmp_path / "dead")
    assert code != 0 and "cannot reach" in output
    assert not (tmp_path / "dead" / "episodes.jsonl").exists()
