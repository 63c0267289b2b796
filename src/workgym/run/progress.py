"""One progress display for every long loop (eval runs, guard attacks): done/total, rate, ETA,
errors, on a terminal and off one.

On a terminal it is a rich bar. Off a terminal (a log file, CI, `> run.log`) a bar draws nothing
useful, and a run of a real model on CPU once printed nothing for 15 minutes; there it prints
plain lines instead: one per finished item (in a run of more than EVERY_ITEM items at most one
every `min_gap_s`, so a 6000-episode run of a test double does not flood the log), and a
heartbeat every `heartbeat_s` while nothing finishes, so a slow run is visibly alive. The rate
is items finished in this process over the wall time since it started (rich's own estimate
looks at a short window only, and once showed `4/4 195.5 ep/s` after 16 minutes, when all four
episodes ended within a second of each other).

It is silent when disabled, so callers build it unconditionally and `advance` it per item.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import TextIO

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

HEARTBEAT_S = 30.0
"""Off a terminal, the longest silence while a run is alive."""
MIN_GAP_S = 10.0
"""Off a terminal, in a run of more than EVERY_ITEM items, the shortest gap between two
per-item lines (the last item always prints)."""
EVERY_ITEM = 200
"""Off a terminal, a run of at most this many items prints a line for every one of them (with
how it ended): four episodes of a slow model that end in the same second each get their line."""


def clock(seconds: float) -> str:
    """`1:05:09` or `4:09`: elapsed and remaining time as a person reads it."""
    s = round(seconds)
    h, rest = divmod(s, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


class Rate:
    """Items finished in this process over wall time since it started, and the ETA it implies."""

    def __init__(self, total: int, done: int) -> None:
        self.total = total
        self.done = done
        self.started = time.monotonic()
        self.fresh = 0  # finished in this process (a resumed run's earlier items do not count)

    def advance(self) -> None:
        self.done += 1
        self.fresh += 1

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def per_second(self) -> float | None:
        elapsed = self.elapsed()
        return self.fresh / elapsed if self.fresh and elapsed > 0 else None

    def text(self) -> str:
        rate = self.per_second()
        if rate is None:
            return "-- ep/s"
        return f"{rate:.2f} ep/s" if rate >= 0.1 else f"{60 * rate:.2f} ep/min"

    def eta(self) -> str:
        rate = self.per_second()
        left = self.total - self.done
        if left <= 0:
            return "0:00"
        return "--" if rate is None else clock(left / rate)


class ProgressBar:
    """done/total, rate, ETA and an error count; a rich bar on a terminal, lines off one."""

    def __init__(
        self,
        enabled: bool,
        total: int,
        done: int,
        label: str,
        *,
        stream: TextIO | None = None,
        heartbeat_s: float = HEARTBEAT_S,
        min_gap_s: float = MIN_GAP_S,
    ) -> None:
        self.errors = 0
        self.label = label
        self.enabled = enabled
        self.rate = Rate(total, done)
        self.bar: Progress | None = None
        self.stream = stream or sys.stderr
        self.heartbeat_s = heartbeat_s
        self.min_gap_s = min_gap_s
        self._last_line = 0.0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._beat: threading.Thread | None = None
        console = Console(stderr=True, file=stream)
        self.lines = enabled and not console.is_terminal
        if enabled and not self.lines:
            self.bar = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[rate]}"),
                TimeElapsedColumn(),
                TextColumn("eta {task.fields[eta]}"),
                TextColumn("errors {task.fields[errors]}"),
                console=console,
                transient=False,
            )
            self.task_id = self.bar.add_task(
                label, total=total, completed=done, errors=0, rate="-- ep/s", eta="--"
            )

    def __enter__(self) -> ProgressBar:
        if self.bar is not None:
            self.bar.start()
        if self.lines:
            self._line("started")
            self._beat = threading.Thread(target=self._heartbeat, daemon=True)
            self._beat.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()
        if self._beat is not None:
            self._stop.set()
            self._beat.join()
            self._beat = None

    def _line(self, note: str = "") -> None:
        r = self.rate
        text = (
            f"{self.label}: {r.done}/{r.total} {r.text()} elapsed {clock(r.elapsed())} "
            f"eta {r.eta()} errors {self.errors}" + (f" | {note}" if note else "")
        )
        with self._lock:
            self._last_line = time.monotonic()
            print(text, file=self.stream, flush=True)

    def _heartbeat(self) -> None:
        while not self._stop.wait(1.0 if self.heartbeat_s > 1.0 else self.heartbeat_s / 2):
            if time.monotonic() - self._last_line >= self.heartbeat_s:
                self._line("still running")

    def advance(self, error: bool, note: str = "") -> None:
        """One item finished; `note` (e.g. how an episode ended) goes on the line off a terminal."""
        self.errors += error
        self.rate.advance()
        if self.bar is not None:
            self.bar.update(
                self.task_id,
                advance=1,
                errors=self.errors,
                rate=self.rate.text(),
                eta=self.rate.eta(),
            )
        elif self.lines:
            last = self.rate.done >= self.rate.total
            few = self.rate.total <= EVERY_ITEM
            if few or last or time.monotonic() - self._last_line >= self.min_gap_s:
                self._line(note)
