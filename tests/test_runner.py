from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import workgym as wg
from conftest import call, turn
from workgym.core.errors import ModelError
from workgym.core.model import Completion, Sampling
from workgym.envs.toy.env import ToyShop


def test_eval_writes_run_dir_and_summary(tmp_path: Path, toy: ToyShop) -> None:
    run = wg.eval(toy, "scripted/oracle", split="dev", epochs=2, out=tmp_path / "r", progress=False)
    spec = json.loads((tmp_path / "r" / "run.json").read_text())
    assert spec["env_id"] == "workgym/toy-shop" and spec["env_hash"] == toy.content_hash()
    assert spec["epochs"] == 2 and spec["versions"]["workgym"] == wg.__version__
    lines = (tmp_path / "r" / "episodes.jsonl").read_text().splitlines()
    assert len(lines) == 2 * len(toy.taskset.split("dev"))
    s = run.summary()
    assert s.mean_reward == 1.0 and s.success_rate == 1.0 and s.pass_hat_k == 1.0
    assert s.n_tasks == len(toy.taskset.split("dev")) and s.errors == 0
    assert s.tokens_per_task > 0


def test_same_command_resumes_and_skips_finished(tmp_path: Path, toy: ToyShop) -> None:
    out = tmp_path / "r"
    wg.eval(toy, "scripted/oracle", split="dev", out=out, limit=5, progress=False)
    first = (out / "episodes.jsonl").read_text().splitlines()
    wg.eval(toy, "scripted/oracle", split="dev", out=out, limit=5, progress=False)
    assert (out / "episodes.jsonl").read_text().splitlines() == first


def test_a_different_run_in_the_same_dir_is_refused(tmp_path: Path, toy: ToyShop) -> None:
    out = tmp_path / "r"
    wg.eval(toy, "scripted/oracle", split="dev", out=out, limit=2, progress=False)
    with pytest.raises(wg.ConfigError, match=r"different run.*policy_hash"):
        wg.eval(toy, "scripted/null", split="dev", out=out, limit=2, progress=False)

    class V2(ToyShop):
        version = "2"

    with pytest.raises(wg.ConfigError, match="env_hash"):
        wg.eval(V2(), "scripted/oracle", split="dev", out=out, limit=2, progress=False)


def test_corrupt_run_directory_errors_clearly(tmp_path: Path, toy: ToyShop) -> None:
    out = tmp_path / "r"
    wg.eval(toy, "scripted/oracle", split="dev", out=out, limit=3, progress=False)
    lines = (out / "episodes.jsonl").read_text().splitlines()
    (out / "episodes.jsonl").write_text(lines[0] + "\n{garbage\n" + lines[2] + "\n")
    with pytest.raises(wg.ConfigError, match=r"episodes\.jsonl:2 is corrupt"):
        wg.eval(toy, "scripted/oracle", split="dev", out=out, limit=3, progress=False)
    (out / "run.json").write_text("{}")
    with pytest.raises(wg.ConfigError, match=r"run\.json is corrupt"):
        wg.eval(toy, "scripted/oracle", split="dev", out=out, limit=3, progress=False)


def test_torn_last_line_is_kept_aside_and_rerun(tmp_path: Path, toy: ToyShop) -> None:
    out = tmp_path / "r"
    wg.eval(toy, "scripted/oracle", split="dev", out=out, limit=3, progress=False)
    data = (out / "episodes.jsonl").read_text()
    (out / "episodes.jsonl").write_text(data[: len(data) - 40])  # cut inside the last record
    wg.eval(toy, "scripted/oracle", split="dev", out=out, limit=3, progress=False)
    records = [json.loads(x) for x in (out / "episodes.jsonl").read_text().splitlines()]
    assert len(records) == 3 and len({r["task_id"] for r in records}) == 3
    assert (out / "episodes.torn").exists()


class Flaky:
    """Fails with a retryable infrastructure error on the first call of every episode."""

    name = "scripted/flaky"

    def __init__(self, answer: int) -> None:
        self.calls = 0
        self.answer = answer

    async def complete(self, messages: Any, tools: Any, sampling: Sampling) -> Completion:
        self.calls += 1
        if self.calls % 2 == 1:
            raise ModelError("503 from upstream")
        return Completion(message=turn(call("submit_answer", answer=self.answer)))


def test_infrastructure_errors_are_retried_then_recorded(tmp_path: Path, toy: ToyShop) -> None:
    task = toy.taskset.split("dev")[0]
    run = wg.eval(
        toy,
        Flaky(task.answer),
        split="dev",
        limit=1,
        out=tmp_path / "a",
        progress=False,
        retry_backoff_s=0,
    )
    ep = next(run.episodes())
    assert ep.outcome == "terminated" and ep.success

    class Down:
        name = "scripted/down"

        async def complete(self, *a: Any) -> Completion:
            raise ModelError("connection refused")

    run = wg.eval(
        toy, Down(), split="dev", limit=2, out=tmp_path / "b", progress=False, retry_backoff_s=0
    )
    s = run.summary()
    assert s.errors == 2 and s.mean_reward == 0.0 and s.outcomes == {"error": 2}
    assert "after 3 attempts" in (next(run.episodes()).error or "")


def test_non_retryable_model_errors_stop_the_run(tmp_path: Path, toy: ToyShop) -> None:
    class BadKey:
        name = "scripted/badkey"

        async def complete(self, *a: Any) -> Completion:
            raise ModelError("401: set OPENAI_API_KEY", retryable=False)

    with pytest.raises(ModelError, match="401"):
        wg.eval(toy, BadKey(), split="dev", out=tmp_path / "r", progress=False)


def test_duckdb_views_over_the_jsonl(tmp_path: Path, toy: ToyShop) -> None:
    run = wg.eval(toy, "scripted/oracle", split="dev", epochs=2, out=tmp_path / "r", progress=False)
    con = run.dir.duckdb()
    n, mean = con.execute("SELECT count(*), avg(reward) FROM episode_scores").fetchone()
    assert n == 2 * len(toy.taskset.split("dev")) and mean == 1.0


KILL_SCRIPT = """
import sys, workgym as wg
from workgym.envs.toy.env import ToyShop
env = ToyShop()
oracle = wg.TaskScript("scripted/slow-oracle", lambda t, e: e.oracle(t), latency_s=0.01)
wg.eval(env, oracle, split="all", epochs=3, concurrency=4, out=sys.argv[1], progress=False)
"""


def test_sigkill_mid_run_then_resume_loses_and_duplicates_nothing(
    tmp_path: Path, toy: ToyShop
) -> None:
    out = tmp_path / "run"
    episodes = out / "episodes.jsonl"
    cmd = [sys.executable, "-c", KILL_SCRIPT, str(out)]
    proc = subprocess.Popen(cmd)
    deadline = time.time() + 60
    while time.time() < deadline:
        if episodes.exists() and len(episodes.read_bytes().splitlines()) >= 30:
            break
        time.sleep(0.005)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    killed_at = len(episodes.read_bytes().splitlines())
    total = len(toy.taskset) * 3
    assert 30 <= killed_at < total, "the kill must land mid-run"
    subprocess.run(cmd, check=True)
    keys = [(r["task_id"], r["epoch"]) for r in map(json.loads, episodes.read_text().splitlines())]
    assert len(keys) == total and len(set(keys)) == total
