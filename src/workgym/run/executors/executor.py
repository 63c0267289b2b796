"""The executor seam: what the runner hands an executor, and what an executor hands back.

The runner owns the run directory (one writer, append-only) and the resume logic; an executor
only decides *where* episodes run. It receives the still-unfinished (task, epoch) pairs and calls
`record` once per finished episode, in the driver process. Keeping the writer in the driver is
what makes a distributed run resumable exactly like a local one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from workgym.run.attempt import AttemptSpec

if TYPE_CHECKING:
    from workgym.core.environment import Environment
    from workgym.core.episode import Episode
    from workgym.core.tasks import Task
    from workgym.run.policy import Policy

Record = Callable[["Episode"], None]


@dataclass(frozen=True, kw_only=True)
class Job:
    """Everything an executor needs to play the unfinished part of one run; keyword-only, since
    three ints and a float side by side are easy to pass in the wrong order."""

    env: Environment
    policy: Policy
    split: str
    run_seed: int
    todo: list[tuple[Task, int]]
    concurrency: int = 8
    max_retries: int = 2
    retry_backoff_s: float = 0.5

    def spec(self, task: Task, epoch: int) -> AttemptSpec:
        """The attempt of one (task, epoch) of this job."""
        return AttemptSpec(
            env=self.env,
            policy=self.policy,
            task=task,
            epoch=epoch,
            run_seed=self.run_seed,
            max_retries=self.max_retries,
            retry_backoff_s=self.retry_backoff_s,
        )


@runtime_checkable
class Executor(Protocol):
    """Runs a job's episodes somewhere and reports each finished one through `record`."""

    name: str

    async def run(self, job: Job, record: Record) -> None: ...


@dataclass
class OnceRecorder:
    """Driver-side dedupe: each (task, epoch) is recorded at most once per run.

    Distributed engines retry work whose worker died, which is at-least-once execution; this
    turns it into exactly-once *recording*. Late duplicates are counted, never written.
    """

    record: Record
    seen: set[tuple[str, int]] = field(default_factory=set)
    duplicates: int = 0

    def __call__(self, episode: Episode) -> None:
        key = (episode.task_id, episode.epoch)
        if key in self.seen:
            self.duplicates += 1
            return
        self.seen.add(key)
        self.record(episode)
