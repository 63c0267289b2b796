"""One progress bar for every long loop (eval runs, guard attacks): done/total, rate, ETA, errors.

It is silent when disabled, so callers build it unconditionally and `advance` it per item.
"""

from __future__ import annotations

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.progress import Task as RichTask


def _speed_text(self: RichTask) -> str:
    return f"{self.speed:.1f} ep/s" if self.speed else "-- ep/s"


def _install_speed_text() -> None:
    """rich has no rate column that reads well for episodes; add one to its task's fields."""
    if not hasattr(RichTask, "speed_text"):
        RichTask.speed_text = property(_speed_text)  # type: ignore[attr-defined]


class ProgressBar:
    """A rich progress bar with done/total, rate, ETA and an error count; silent when off."""

    def __init__(self, enabled: bool, total: int, done: int, label: str) -> None:
        self.errors = 0
        self.bar: Progress | None = None
        if enabled:
            _install_speed_text()
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

    def __enter__(self) -> ProgressBar:
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
