"""Run a policy over a split for K epochs, concurrently, into a resumable run directory.

Episodes are I/O-bound, so one event loop with a bounded pool of workers carries them. Each
(task, epoch) gets a seed derived from the run seed, so two arms of a comparison see the same
seeds, and infrastructure errors are retried the same way in every arm.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from workgym.core.environment import Environment
from workgym.core.episode import Episode
from workgym.core.errors import ModelError
from workgym.core.loading import load
from workgym.core.model import Model, Sampling
from workgym.core.task_aware import TaskAwareModel
from workgym.core.tasks import Task
from workgym.run.executors.executor import Job
from workgym.run.policy import Policy, run_episode
from workgym.run.rundir import RunDir, RunSpec
from workgym.run.summary import Summary, summarize

if TYPE_CHECKING:
    from workgym.run.executors.executor import Executor


def episode_seed(run_seed: int, task_id: str, epoch: int) -> int:
    digest = hashlib.sha256(f"{run_seed}|{task_id}|{epoch}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


def default_out(env: Environment, policy: Policy, split: str) -> Path:
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{policy.model_name}-{split}-{policy.hash[:8]}")
    return Path("runs") / re.sub(r"[^A-Za-z0-9_.-]+", "_", env.id or "env") / slug


class Run:
    """A finished (or resumed-and-finished) run: a directory and its summary."""

    def __init__(self, run_dir: RunDir) -> None:
        self.dir = run_dir
        self.path = run_dir.path
        self.spec = run_dir.spec

    def summary(self) -> Summary:
        return summarize(
            self.dir.records(),
            epochs=self.spec.epochs,
            run=str(self.path),
            env_id=self.spec.env_id,
            model=str(self.spec.policy.get("model", "")),
            split=self.spec.split,
        )

    def episodes(self) -> Iterator[Episode]:
        return self.dir.episodes()


class _Progress:
    """A rich progress bar with done/total, rate, ETA and an error count; silent when off."""

    def __init__(self, enabled: bool, total: int, done: int, label: str) -> None:
        self.errors = 0
        self.bar: Progress | None = None
        if enabled:
            self.bar = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.speed_text}"),
                TimeElapsedColumn(),
                TimeRemainingColumn(),
                TextColumn("errors {task.fields[errors]}"),
                console=Console(stderr=True),
                transient=False,
            )
            self.task_id = self.bar.add_task(label, total=total, completed=done, errors=0)

    def __enter__(self) -> _Progress:
        if self.bar is not None:
            self.bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()

    def advance(self, error: bool) -> None:
        self.errors += error
        if self.bar is not None:
            self.bar.update(self.task_id, advance=1, errors=self.errors)


# rich has no rate column that reads well for episodes; add it to the task's text fields.
def _install_speed_text() -> None:
    from rich.progress import Task as RichTask

    if not hasattr(RichTask, "speed_text"):

        def speed_text(self: RichTask) -> str:
            return f"{self.speed:.1f} ep/s" if self.speed else "-- ep/s"

        RichTask.speed_text = property(speed_text)  # type: ignore[attr-defined]


async def eval_async(
    env: Environment | str | Path,
    model: Model | TaskAwareModel | str | None = None,
    *,
    policy: Policy | None = None,
    split: str = "dev",
    epochs: int = 1,
    concurrency: int = 8,
    out: str | Path | None = None,
    seed: int = 0,
    limit: int | None = None,
    max_retries: int = 2,
    retry_backoff_s: float = 0.5,
    progress: bool = True,
    base_url: str | None = None,
    api_key: str | None = None,
    sampling: Sampling | None = None,
    system_prompt: str = "",
    playbook: str | None = None,
    forced: list[str] | None = None,
    executor: str | Executor = "asyncio",
    address: str | None = None,
) -> Run:
    """Evaluate a policy (or a model with a default policy) on a split; resumes `out`.

    `forced` names the gates a caller overrode (e.g. ``["admission"]`` for an environment that
    has not passed `workgym check`); it is written into run.json so the override stays visible.
    `executor="ray"` (with an optional Ray `address`) plays the episodes on a Ray cluster while
    this process still writes the run directory; see workgym.run.executors.
    """
    if address is not None and executor == "asyncio":
        raise ValueError("address is for executor='ray'; pass executor='ray' or drop address")
    environment = env if isinstance(env, Environment) else load(env)
    if policy is None:
        if model is None:
            raise ValueError("give a model (e.g. 'openai/<name>') or a Policy")
        policy = Policy(
            model,
            system_prompt=system_prompt,
            playbook=playbook,
            sampling=sampling,
            base_url=base_url,
            api_key=api_key,
        )
    if epochs < 1 or concurrency < 1:
        raise ValueError("epochs and concurrency must be at least 1")
    tasks = environment.taskset.split(split)
    if limit is not None:
        tasks = tasks[:limit]
    spec = RunSpec(
        env_id=environment.id,
        env_version=environment.version,
        env_hash=environment.content_hash(),
        env_ref=str(env if not isinstance(env, Environment) else environment.root or env.id),
        policy=policy.describe(),
        policy_hash=policy.hash,
        split=split,
        epochs=epochs,
        seed=seed,
        n_tasks=len(tasks),
        limits=environment.limits.model_dump(),
        split_spec=environment.taskset.split_spec.model_dump(),
        forced=sorted(forced or []),
    )
    run_dir = RunDir.open(out or default_out(environment, policy, split), spec)
    done = run_dir.finished()
    todo = [(t, e) for e in range(epochs) for t in tasks if (t.id, e) not in done]
    total = len(tasks) * epochs
    _install_speed_text()
    job = Job(environment, policy, split, seed, todo, concurrency, max_retries, retry_backoff_s)
    try:
        with _Progress(progress, total, total - len(todo), f"eval {environment.id}") as bar:

            def record(episode: Episode) -> None:  # this process stays the only writer
                run_dir.append(episode)
                bar.advance(episode.outcome == "error")

            if executor == "asyncio":
                await _drive(job, record)
            else:
                from workgym.run.executors import resolve_executor

                await resolve_executor(executor, address=address).run(job, record)
    finally:
        run_dir.close()
    return Run(run_dir)


async def _drive(job: Job, record: Callable[[Episode], None]) -> None:
    """The default executor: a bounded pool of workers on this event loop."""
    items = iter(job.todo)

    async def worker() -> None:
        for task, epoch in items:  # one shared iterator: each item is taken exactly once
            record(
                await _attempt(
                    job.env,
                    job.policy,
                    task,
                    epoch,
                    job.split,
                    job.run_seed,
                    job.max_retries,
                    job.retry_backoff_s,
                )
            )

    workers = [asyncio.create_task(worker()) for _ in range(min(job.concurrency, len(job.todo)))]
    try:
        await asyncio.gather(*workers)
    except BaseException:
        for w in workers:
            w.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
        raise


async def _attempt(
    env: Environment,
    policy: Policy,
    task: Task,
    epoch: int,
    split: str,
    run_seed: int,
    max_retries: int,
    retry_backoff_s: float,
) -> Episode:
    """One episode with symmetric retries of infrastructure errors; never raises for those."""
    seed = episode_seed(run_seed, task.id, epoch)
    split = env.taskset.split_of(task)  # the task's own split, also when the run covers "all"
    last_error = ""
    for attempt in range(max_retries + 1):
        try:
            return await run_episode(env, task, policy, seed=seed, epoch=epoch, split=split)
        except ModelError as exc:
            if not exc.retryable:
                raise
            last_error = f"model error after {attempt + 1} attempts: {exc}"
            if attempt < max_retries:
                await asyncio.sleep(retry_backoff_s * 2**attempt)
        except Exception as exc:  # an environment or framework bug: record it, keep running
            last_error = f"{type(exc).__name__}: {exc}"
            break
    return _errored(env, policy, task, epoch, split, seed, last_error)


def _errored(
    env: Environment, policy: Policy, task: Task, epoch: int, split: str, seed: int, error: str
) -> Episode:
    return Episode(
        task_id=task.id,
        family=task.family,
        split=split,
        epoch=epoch,
        seed=seed,
        model=policy.model_name,
        policy_hash=policy.hash,
        env_id=env.id,
        env_hash=env.content_hash(),
        outcome="error",
        error=error,
    )


def eval(env: Environment | str | Path, model: Any = None, **kwargs: Any) -> Run:
    """Synchronous `eval_async` for scripts; inside an event loop, await `eval_async`."""
    return asyncio.run(eval_async(env, model, **kwargs))
