"""Run a policy over a split for K epochs, concurrently, into a resumable run directory.

Episodes are I/O-bound, so one event loop with a bounded pool of workers carries them. Each
(task, epoch) gets a seed derived from the run seed, so two arms of a comparison see the same
seeds, and infrastructure errors are retried the same way in every arm.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console

from workgym.core.environment import Environment
from workgym.core.episode import Episode
from workgym.core.loading import load
from workgym.run.attempt import attempt
from workgym.run.executors.executor import Job
from workgym.run.options import EvalOptions
from workgym.run.policy import Agent, Policy, make_policy
from workgym.run.progress import ProgressBar
from workgym.run.rundir import RunDir, RunSpec
from workgym.run.sample import stratified_sample
from workgym.run.summary import Summary, summarize

if TYPE_CHECKING:
    pass


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


def ended(episode: Episode) -> str:
    """How one episode ended, for a progress line: `F1-003 truncated: repeat_limit (...)`."""
    why: str = episode.outcome
    if episode.truncation:
        why += f": {episode.truncation}"
        if episode.truncation_detail:
            why += f" ({episode.truncation_detail})"
    elif episode.error:
        why += f": {episode.error[:80]}"
    elif episode.outcome == "terminated":
        why = "submitted" if episode.submitted else "stopped without an answer"
    return f"{episode.task_id} {why}, reward {episode.reward:.2f}"


def _say(line: str) -> None:
    Console(stderr=True, soft_wrap=True).print(line, markup=False, highlight=False)


async def eval_async(
    env: Environment | str | Path,
    model: Agent | str | None = None,
    *,
    split: str = "dev",
    epochs: int = 1,
    out: str | Path | None = None,
    options: EvalOptions | None = None,
) -> Run:
    """Evaluate a policy (or a model with a default policy) on a split; resumes `out`.

    `options.forced` names the gates a caller overrode (e.g. ``["admission"]`` for an
    environment that has not passed `workgym check`); it is written into run.json so the
    override stays visible. `executor="ray"` (with an optional Ray `address`) plays the episodes
    on a Ray cluster while this process still writes the run directory; see
    workgym.run.executors. `options.retry_errors` also re-runs episodes whose current line
    ended in an error (an endpoint that was down): the old line is marked superseded
    (run.rundir), never counted twice.
    """
    o = options or EvalOptions()
    if o.address is not None and o.executor == "asyncio":
        raise ValueError("address is for executor='ray'; pass executor='ray' or drop address")
    environment = env if isinstance(env, Environment) else load(env)
    policy = o.policy
    if policy is None:
        if model is None:
            raise ValueError("give a model (e.g. 'openai/<name>') or a Policy")
        policy = make_policy(
            model,
            system_prompt=o.system_prompt,
            playbook=o.playbook,
            sampling=o.sampling,
            base_url=o.base_url,
            api_key=o.api_key,
        )
    if o.run_limits is not None:
        policy.run_limits = o.run_limits
    if epochs < 1 or o.concurrency < 1:
        raise ValueError("epochs and concurrency must be at least 1")
    tasks = environment.taskset.split(split)
    if o.sample is not None:
        tasks = stratified_sample(tasks, o.sample, o.seed)
    if o.limit is not None:
        tasks = tasks[: o.limit]
    spec = RunSpec.for_run(
        environment,
        policy,
        split=split,
        epochs=epochs,
        seed=o.seed,
        n_tasks=len(tasks),
        env_ref=None if isinstance(env, Environment) else str(env),
        forced=o.forced,
        sample=o.sample,
        run_limits=o.run_limits,
    )
    run_dir = RunDir.open(out or default_out(environment, policy, split), spec)
    done = run_dir.finished()
    retry = run_dir.errored() if o.retry_errors else {}
    todo = [(t, e) for e in range(epochs) for t in tasks if (t.id, e) not in done.difference(retry)]
    total = len(tasks) * epochs
    job = Job(
        env=environment,
        policy=policy,
        split=split,
        run_seed=o.seed,
        todo=todo,
        concurrency=o.concurrency,
        max_retries=o.max_retries,
        retry_backoff_s=o.retry_backoff_s,
    )
    label = o.label or f"eval {environment.id}"
    if o.progress and done and todo:
        _say(f"resuming {run_dir.path}: {total - len(todo)}/{total} episodes done")
    elif o.progress and done:
        _say(f"already complete: {run_dir.path} holds all {total} episodes; nothing to run")
    try:
        with environment.warm(), ProgressBar(o.progress, total, total - len(todo), label) as bar:

            def record(episode: Episode) -> None:  # this process stays the only writer
                old = retry.pop((episode.task_id, episode.epoch), None)
                if old is not None:
                    run_dir.supersede(old, episode.task_id, episode.epoch, "--retry-errors")
                run_dir.append(episode)
                bar.advance(episode.outcome == "error", ended(episode))

            if o.executor == "asyncio":
                await _drive(job, record)
            else:
                from workgym.run.executors import resolve_executor

                await resolve_executor(o.executor, address=o.address).run(job, record)
    except (KeyboardInterrupt, asyncio.CancelledError):
        if o.progress:  # the CLI's default; a library caller without progress handles it itself
            kept = len(run_dir.finished())
            _say(
                f"interrupted: {kept}/{total} episodes are kept in {run_dir.path}; "
                "re-run the same command to resume"
            )
        raise
    finally:
        run_dir.close()
    return Run(run_dir)


async def _drive(job: Job, record: Callable[[Episode], None]) -> None:
    """The default executor: a bounded pool of workers on this event loop."""
    items = iter(job.todo)

    async def worker() -> None:
        for task, epoch in items:  # one shared iterator: each item is taken exactly once
            record(await attempt(job.spec(task, epoch)))
            # A test double never waits on I/O, so without this the loop never runs and Ctrl-C
            # (asyncio.run cancels the main task from the loop) would wait for the whole run.
            await asyncio.sleep(0)

    workers = [asyncio.create_task(worker()) for _ in range(min(job.concurrency, len(job.todo)))]
    try:
        await asyncio.gather(*workers)
    except BaseException:
        for w in workers:
            w.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
        raise


def eval(
    env: Environment | str | Path,
    model: Any = None,
    *,
    split: str = "dev",
    epochs: int = 1,
    out: str | Path | None = None,
    options: EvalOptions | None = None,
    **fields: Any,
) -> Run:
    """Synchronous `eval_async` for scripts; inside an event loop, await `eval_async`.

    The options may also be given as keyword arguments (`concurrency=4, progress=False`).
    """
    if fields:
        if options is not None:
            raise ValueError("give options= or option keyword arguments, not both")
        options = EvalOptions.of(**fields)
    return asyncio.run(eval_async(env, model, split=split, epochs=epochs, out=out, options=options))
