"""Finishers: what the run layer does to every episode once the driver has scored it.

The driver (`workgym.core.driver`) scores an episode and knows nothing else; cross-cutting work
on a finished episode is a finisher, a function of (environment, task, episode) that writes its
own typed fields of the record, composed here the way Gymnasium's `make()` composes its checker
and wrappers around an environment. The transcript audit is the default, and every producer of
episodes (runner, Gym facade, served sessions, trainers' rollouts, teams) finishes through
`finish_episode`, so every episode is audited exactly once (docs/guards.md).

The audit lives in `workgym.guards`, a layer above this one, so the default is named here by
its import path and resolved on first use, the way an entry point is (decision 0023).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from functools import cache
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from workgym.core.driver import EpisodeDriver
    from workgym.core.environment import Environment
    from workgym.core.episode import Episode
    from workgym.core.tasks import Task

Finisher = Callable[["Environment", "Task", "Episode"], None]

DEFAULT_FINISHERS = ("workgym.guards.audit:record_audit",)


def resolve(ref: str) -> Finisher:
    """`module:function` -> the function; a bad reference is a clear error, not a lost audit."""
    module, sep, name = ref.partition(":")
    if not sep:
        raise ValueError(f"finisher {ref!r} must be written module:function")
    return cast(Finisher, getattr(importlib.import_module(module), name))


@cache
def default_finishers() -> tuple[Finisher, ...]:
    return tuple(resolve(ref) for ref in DEFAULT_FINISHERS)


async def finish_episode(
    driver: EpisodeDriver, finishers: Sequence[Finisher] | None = None
) -> Episode:
    """Score the driver's episode, apply the finishers (the default ones when None), return it."""
    ep = await driver.finish()
    for finisher in default_finishers() if finishers is None else finishers:
        finisher(driver.env, driver.task, ep)
    ep.wall_time_s = driver.elapsed()
    return ep
