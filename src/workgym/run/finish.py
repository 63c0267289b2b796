"""Finishers: what the run layer does to every episode once the driver has scored it.

The driver (`workgym.core.driver`) scores an episode and knows nothing else; cross-cutting work
on a finished episode is a finisher, a function of (environment, task, episode) that writes its
own typed fields of the record, composed here the way Gymnasium's `make()` composes its checker
and wrappers around an environment. Every producer of episodes (runner, Gym facade, served
sessions, trainers' rollouts, teams) finishes through `finish_episode`, so every episode gets
every default finisher exactly once (docs/guards.md).

The default finishers are the `workgym.finishers` entry points of every installed distribution,
applied in name order: workgym declares the transcript audit (`audit`, in `workgym.guards`, a
layer above this one, so it is found through the registry, never imported here), and a package
adds its own the same way. An install that declares none is stale metadata, and an error: a lost
audit must never pass silently.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache
from typing import TYPE_CHECKING

from workgym.core.errors import ConfigError
from workgym.core.registry import Registry

if TYPE_CHECKING:
    from workgym.core.driver import EpisodeDriver
    from workgym.core.environment import Environment
    from workgym.core.episode import Episode
    from workgym.core.tasks import Task

Finisher = Callable[["Environment", "Task", "Episode"], None]

FINISHERS: Registry[Finisher] = Registry(
    "finisher",
    "workgym.finishers",
    hint="declare yours in the `workgym.finishers` entry-point group of your package",
)


@cache
def default_finishers() -> tuple[Finisher, ...]:
    """Every declared finisher, loaded, in name order (loaded once per process)."""
    stale = FINISHERS.stale_install()
    if stale:
        raise ConfigError(f"no default finishers (the transcript audit among them): {stale}")
    found = []
    for name in FINISHERS.names():
        finisher = FINISHERS.load(name)
        if not callable(finisher):
            raise ConfigError(
                f"finisher {name!r} ({FINISHERS.entries()[name].source}) is not a function of "
                "(environment, task, episode); point its entry point at one"
            )
        found.append(finisher)
    return tuple(found)


async def finish_episode(
    driver: EpisodeDriver, finishers: Sequence[Finisher] | None = None
) -> Episode:
    """Score the driver's episode, apply the finishers (the default ones when None), return it."""
    ep = await driver.finish()
    for finisher in default_finishers() if finishers is None else finishers:
        finisher(driver.env, driver.task, ep)
    ep.wall_time_s = driver.elapsed()
    return ep
