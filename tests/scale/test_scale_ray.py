"""The Ray executor against a real one-node Ray cluster started here (skipped without ray)."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import workgym as wg
from workgym.core.errors import ModelError
from workgym.core.messages import Message, ToolCall
from workgym.core.model import Completion, Sampling
from workgym.envs.toy.env import ToyShop
from workgym.run.executors.ray_executor import RayExecutor, pickle_policy

ray = pytest.importorskip("ray")

DRIVER_PID = os.getpid()
pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module", autouse=True)
def cluster() -> Any:
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


def _submit(answer: int) -> Message:
    call = ToolCall(id="s0", name="submit_answer", arguments=json.dumps({"answer": answer}))
    return Message(role="assistant", tool_calls=[call])


class _SeededGuess:
    name = "scripted/seeded-guess"

    def __init__(self, answer: int) -> None:
        self.answer = answer

    async def complete(self, messages: list[Message], tools: Any, sampling: Sampling) -> Completion:
        # Right on even episode seeds, off by one on odd ones: verdicts depend on the seed.
        return Completion(message=_submit(self.answer + (sampling.seed or 0) % 2))


class SeededGuess:
    """scripted/seeded-guess: a test double that fails about half the episodes, by seed."""

    name = "scripted/seeded-guess"

    def for_task(self, task: wg.Task, env: wg.Environment) -> _SeededGuess:
        return _SeededGuess(int(task.answer))


def kill_worker_once(marker: Path, victim: str) -> wg.TaskScript:
    """scripted/kill-worker-once: the first worker to play `victim` kills its own process."""

    def script(task: wg.Task, env: wg.Environment) -> list[Message]:
        if task.id == victim and os.getpid() != DRIVER_PID:
            try:
                os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            except FileExistsError:
                pass
            else:
                os._exit(1)  # the Ray worker dies mid-episode
        return env.oracle(task)

    return wg.TaskScript("scripted/kill-worker-once", script)


def verdicts(path: Path) -> dict[tuple[str, int, int], tuple[Any, ...]]:
    out = {}
    for line in (path / "episodes.jsonl").read_text().splitlines():
        ep = json.loads(line)
        v = ep["verdict"]
        out[(ep["task_id"], ep["epoch"], ep["seed"])] = (
            v["status"],
            v["reward"],
            v["success"],
            ep["answer"],
            ep["outcome"],
        )
    return out


def keys(path: Path) -> list[tuple[str, int]]:
    lines = (path / "episodes.jsonl").read_text().splitlines()
    return [(json.loads(x)["task_id"], json.loads(x)["epoch"]) for x in lines]


@pytest.mark.parametrize("model", ["scripted/oracle", "seeded"])
def test_asyncio_and_ray_give_identical_verdicts(tmp_path: Path, toy: ToyShop, model: str) -> None:
    chosen: Any = SeededGuess() if model == "seeded" else model
    common: dict[str, Any] = {"split": "all", "epochs": 2, "progress": False, "seed": 3}
    base = wg.eval(toy, chosen, out=tmp_path / "asyncio", **common)
    expected = verdicts(base.path)
    assert len(expected) == 2 * len(toy.taskset)
    if model == "seeded":  # the comparison is only meaningful if both outcomes occur
        successes = Counter(v[2] for v in expected.values())
        assert successes[True] > 10 and successes[False] > 10
    for mode in ("tasks", "actors"):
        run = wg.eval(toy, chosen, out=tmp_path / mode, executor=RayExecutor(mode=mode), **common)
        assert verdicts(run.path) == expected, mode
        assert run.summary().n_episodes == len(expected)


@pytest.mark.parametrize("mode", ["tasks", "actors"])
def test_a_killed_worker_loses_no_episode(tmp_path: Path, toy: ToyShop, mode: str) -> None:
    tasks = toy.taskset.split("dev")
    marker = tmp_path / "killed"
    model = kill_worker_once(marker, victim=tasks[3].id)
    ex = RayExecutor(mode=mode, workers=2, worker_retries=2)
    run = wg.eval(
        toy, model, split="dev", epochs=1, out=tmp_path / "r", progress=False, executor=ex
    )
    assert marker.exists(), "the scripted model did not kill its worker"
    recorded = keys(run.path)
    assert sorted(recorded) == sorted((t.id, 0) for t in tasks)  # each once, none lost
    summary = run.summary()
    assert summary.errors == 0 and summary.success_rate == 1.0


def kill_worker_always(victim: str) -> wg.TaskScript:
    """scripted/kill-worker-always: every worker that plays `victim` dies (a poison episode)."""

    def script(task: wg.Task, env: wg.Environment) -> list[Message]:
        if task.id == victim and os.getpid() != DRIVER_PID:
            os._exit(1)
        return env.oracle(task)

    return wg.TaskScript("scripted/kill-worker-always", script)


@pytest.mark.parametrize("mode", ["tasks", "actors"])
def test_a_poison_episode_is_recorded_as_an_error_once_and_the_run_goes_on(
    tmp_path: Path, toy: ToyShop, mode: str
) -> None:
    tasks = toy.taskset.split("dev")
    victim = tasks[1].id
    ex = RayExecutor(mode=mode, workers=2, worker_retries=1)
    run = wg.eval(
        toy,
        kill_worker_always(victim),
        split="dev",
        out=tmp_path / "r",
        progress=False,
        concurrency=2,
        executor=ex,
    )
    episodes = {e.task_id: e for e in run.episodes()}
    assert sorted(keys(run.path)) == sorted((t.id, 0) for t in tasks)
    lost = episodes[victim]
    assert lost.outcome == "error" and "ray worker lost 2 times" in (lost.error or "")
    others = [e for tid, e in episodes.items() if tid != victim]
    assert all(e.success for e in others)  # a fresh actor took over after the poisoned one


def test_the_driver_records_each_episode_once() -> None:
    from workgym.run.executors import OnceRecorder

    written: list[wg.Episode] = []
    once = OnceRecorder(written.append)
    ep = wg.Episode(task_id="t", family="f", split="dev", epoch=0)
    once(ep)
    once(ep.model_copy())
    once(ep.model_copy(update={"epoch": 1}))
    assert [e.epoch for e in written] == [0, 1] and once.duplicates == 1


def test_ray_resumes_a_run_like_asyncio(tmp_path: Path, toy: ToyShop) -> None:
    out = tmp_path / "r"
    wg.eval(toy, "scripted/oracle", split="dev", out=out, progress=False)
    full = (out / "episodes.jsonl").read_text().splitlines()
    (out / "episodes.jsonl").write_text("\n".join(full[:4]) + "\n")  # as if killed after 4
    wg.eval(toy, "scripted/oracle", split="dev", out=out, progress=False, executor="ray")
    lines = (out / "episodes.jsonl").read_text().splitlines()
    assert lines[:4] == full[:4] and len(lines) == len(full)  # finished pairs were skipped
    assert sorted(keys(out)) == sorted((t.id, 0) for t in toy.taskset.split("dev"))
    wg.eval(toy, "scripted/oracle", split="dev", out=out, progress=False, executor="ray")
    assert (out / "episodes.jsonl").read_text().splitlines() == lines  # nothing left to run


class _Unregistered(ToyShop):
    id = "tests/not-registered"


def test_an_environment_workers_cannot_load_is_refused_up_front(tmp_path: Path) -> None:
    with pytest.raises(wg.ConfigError, match=r"neither a saved directory nor registered"):
        wg.eval(
            _Unregistered(),
            "scripted/oracle",
            out=tmp_path / "r",
            progress=False,
            executor="ray",
            limit=1,
        )


class _Fatal:
    name = "scripted/fatal"

    async def complete(self, messages: Any, tools: Any, sampling: Sampling) -> Completion:
        raise ModelError("bad key: set OPENAI_API_KEY", retryable=False)


def test_a_fatal_model_error_on_a_worker_stops_the_run_as_it_does_locally(
    tmp_path: Path, toy: ToyShop
) -> None:
    with pytest.raises(ModelError, match="bad key"):
        wg.eval(
            toy,
            _Fatal(),
            split="dev",
            out=tmp_path / "r",
            progress=False,
            executor=RayExecutor(mode="tasks"),
            limit=2,
        )


def test_policy_pickling_ships_test_module_code_by_value(toy: ToyShop) -> None:
    import pickle
    import sys

    payload = pickle_policy(wg.Policy(SeededGuess()))
    # A fresh interpreter cannot import this test module, so the class must travel by value.
    assert __name__ in sys.modules and b"SeededGuess" in payload
    assert pickle.loads(payload).model_name == "scripted/seeded-guess"


def test_an_openai_policy_travels_with_its_endpoint() -> None:
    import pickle

    policy = wg.Policy("openai/some-model", base_url="http://127.0.0.1:8000/v1")
    shipped = pickle.loads(pickle_policy(policy))
    assert shipped.hash == policy.hash and shipped.model.base_url == "http://127.0.0.1:8000/v1"


def test_an_address_with_nothing_listening_fails_in_seconds() -> None:
    import socket

    from workgym.run.executors.ray_executor import _probe

    with socket.socket() as sock:  # a port that was free a moment ago: nothing listens there
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(wg.ConfigError, match=r"nothing answers at Ray address.*ray start --head"):
        _probe(f"127.0.0.1:{port}")
    _probe("auto")  # left to ray.init, which finds the local cluster or says there is none


def test_cli_eval_on_ray(tmp_path: Path) -> None:
    from workgym.apps.cli.main import app

    runner = CliRunner()
    out = tmp_path / "r"
    args = ["eval", "workgym/toy-shop", "--model", "scripted/oracle", "--split", "dev"]
    result = runner.invoke(app, [*args, "--out", str(out), "--no-progress", "--executor", "ray"])
    assert result.exit_code == 0, result.output
    assert len(keys(out)) == len(ToyShop().taskset.split("dev"))
    bad = runner.invoke(app, [*args, "--out", str(tmp_path / "x"), "--address", "auto"])
    assert bad.exit_code == 2 and "--executor ray" in bad.output
