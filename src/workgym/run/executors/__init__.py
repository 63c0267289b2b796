"""Where a run's episodes execute. `asyncio` (the default) lives in workgym.run.runner itself, so
the common path has no indirection; others are `workgym.executors` entry points: `ray` (extra
`[ray]`) spreads episodes over a Ray cluster, and a package can declare its own.

Whatever the executor, the driver process is the only writer of episodes.jsonl.
"""

from __future__ import annotations

from typing import Protocol

from workgym.core.registry import Registry
from workgym.run.executors.executor import Executor, Job, OnceRecorder, Record

__all__ = [
    "EXECUTORS",
    "Executor",
    "ExecutorFactory",
    "Job",
    "OnceRecorder",
    "Record",
    "resolve_executor",
]


class ExecutorFactory(Protocol):
    """What a `workgym.executors` entry point names: builds the executor for a cluster."""

    def __call__(self, address: str | None = None, *, workers: int | None = None) -> Executor: ...


EXECUTORS: Registry[ExecutorFactory] = Registry(
    "executor", "workgym.executors", hint="asyncio is the default and needs no --address"
)


def resolve_executor(
    executor: str | Executor, *, address: str | None = None, workers: int | None = None
) -> Executor:
    """An executor object for a name (`ray`) or the object itself; asyncio is the runner's own."""
    if not isinstance(executor, str):
        return executor
    return EXECUTORS.load(executor)(address, workers=workers)
