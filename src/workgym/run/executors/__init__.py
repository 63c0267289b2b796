"""Where a run's episodes execute. `asyncio` (the default) lives in workgym.run.runner itself, so
the common path has no indirection; `ray` (extra `[ray]`) spreads episodes over a Ray cluster.

Whatever the executor, the driver process is the only writer of episodes.jsonl.
"""

from __future__ import annotations

from workgym.core.errors import ConfigError
from workgym.run.executors.executor import Executor, Job, OnceRecorder, Record

__all__ = ["EXECUTORS", "Executor", "Job", "OnceRecorder", "Record", "resolve_executor"]

EXECUTORS = ("asyncio", "ray")


def resolve_executor(
    executor: str | Executor, *, address: str | None = None, workers: int | None = None
) -> Executor:
    """An executor object for a name (`ray`) or the object itself; asyncio is the runner's own."""
    if not isinstance(executor, str):
        return executor
    if executor == "ray":
        from workgym.run.executors.ray_executor import RayExecutor

        return RayExecutor(address, workers=workers)
    raise ConfigError(
        f"unknown executor {executor!r}: use one of {', '.join(EXECUTORS)} "
        "(asyncio is the default and needs no --address)"
    )
