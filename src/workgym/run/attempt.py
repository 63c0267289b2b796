"""One attempt: a task played once for a run, with the run's seeds and symmetric retries.

Every executor (the asyncio pool, Ray workers) and the TRL rollout play episodes through
`attempt`, so retries, seeds and the error record are the same wherever an episode runs.
"""

from __future__ import annotations

import asyncio
import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from workgym.core.episode import Episode
from workgym.core.errors import ModelError
from workgym.run.policy import run_episode

if TYPE_CHECKING:
    from workgym.core.environment import Environment
    from workgym.core.tasks import Task
    from workgym.run.policy import Policy


def episode_seed(run_seed: int, task_id: str, epoch: int) -> int:
    """The seed of one (task, epoch) of a run: two arms with one run seed see the same seeds."""
    digest = hashlib.sha256(f"{run_seed}|{task_id}|{epoch}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


@dataclass(frozen=True, kw_only=True)
class AttemptSpec:
    """What one attempt needs; the split is always the task's own (also for a run over "all").
    Keyword-only, like `Job`: its ints and float side by side are easy to pass out of order."""

    env: Environment
    """The environment the task belongs to."""
    policy: Policy
    """What acts."""
    task: Task
    """The task to play."""
    epoch: int = 0
    """Which repetition of the task within the run."""
    run_seed: int = 0
    """The run's seed; the episode's seed derives from it (`episode_seed`)."""
    max_retries: int = 2
    """Retries of a retryable `ModelError`, the same in every arm."""
    retry_backoff_s: float = 0.5
    """Seconds before the first retry; doubled before each next one."""

    @property
    def seed(self) -> int:
        return episode_seed(self.run_seed, self.task.id, self.epoch)

    @property
    def split(self) -> str:
        return self.env.taskset.split_of(self.task)


async def attempt(spec: AttemptSpec) -> Episode:
    """One episode with symmetric retries of infrastructure errors; never raises for those.

    A non-retryable `ModelError` (a wrong key) propagates and stops the run.
    """
    seed, split = spec.seed, spec.split
    last_error = ""
    for tried in range(spec.max_retries + 1):
        try:
            return await run_episode(
                spec.env, spec.task, spec.policy, seed=seed, epoch=spec.epoch, split=split
            )
        except ModelError as exc:
            if not exc.retryable:
                raise
            last_error = f"model error after {tried + 1} attempts: {exc}"
            if tried < spec.max_retries:
                await asyncio.sleep(spec.retry_backoff_s * 2**tried)
        except Exception as exc:  # an environment or framework bug: record it, keep running
            last_error = f"{type(exc).__name__}: {exc}"
            break
    return errored(spec, last_error)


def errored(spec: AttemptSpec, error: str) -> Episode:
    """The record of an attempt that produced no episode: counted as a failure, kept visible."""
    env, policy, task = spec.env, spec.policy, spec.task
    return Episode(
        task_id=task.id,
        family=task.family,
        split=spec.split,
        epoch=spec.epoch,
        seed=spec.seed,
        model=policy.model_name,
        policy_hash=policy.hash,
        env_id=env.id,
        env_hash=env.content_hash(),
        outcome="error",
        error=error,
    )
