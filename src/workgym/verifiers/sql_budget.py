"""Row and byte caps applied while a result streams in, not after it is all in memory.

One `SELECT repeat('x', 5000000) FROM range(200)` used to fill 2-4 GB of the worker before the
row cap cut it to nothing; in a rollout farm that is an outage. The executors hand rows to a
`ResultBudget` as they fetch them and stop at the first cap, so the worker holds at most about
`max_bytes` of Python values; the time limit covers the fetch. Sizes are estimates of what the
values cost as Python objects (text and bytes by length), which is what the caps are about.
"""

from __future__ import annotations

import time
from typing import Any

DEFAULT_MAX_BYTES = 32 * 2**20
_SCALAR_BYTES = 16


def value_bytes(value: Any) -> int:
    """About how many bytes `value` holds: text and binary by length, containers by content."""
    if isinstance(value, str | bytes | bytearray | memoryview):
        return len(value) + _SCALAR_BYTES
    if isinstance(value, list | tuple | set | frozenset):
        return _SCALAR_BYTES + sum(value_bytes(v) for v in value)
    if isinstance(value, dict):
        return _SCALAR_BYTES + sum(value_bytes(k) + value_bytes(v) for k, v in value.items())
    return _SCALAR_BYTES


class ResultBudget:
    """Collects fetched rows until `max_rows` rows or `max_bytes` bytes, or until `deadline`
    (time.monotonic) passes; `add` says whether to keep fetching."""

    def __init__(self, max_rows: int, max_bytes: int, deadline: float | None = None) -> None:
        self.max_rows = max_rows
        self.max_bytes = max_bytes
        self.deadline = deadline
        self.rows: list[tuple[Any, ...]] = []
        self.bytes = 0
        self.largest_row = 0
        self.truncated = False
        self.reason: str | None = None
        self.timed_out = False

    def add(self, row: Any) -> bool:
        """Keep `row` if it fits; False once a cap is reached (the row that broke it is dropped)."""
        if len(self.rows) >= self.max_rows:
            self._cut(f"the result has more than {self.max_rows} rows (the row cap)")
            return False
        size = sum(value_bytes(v) for v in row) + _SCALAR_BYTES
        self.largest_row = max(self.largest_row, size)
        if self.bytes + size > self.max_bytes:
            self._cut(
                f"the result passed {self.max_bytes // 1024} KiB after {len(self.rows)} rows "
                "(the size cap); select fewer or narrower columns"
            )
            return False
        self.rows.append(tuple(row))
        self.bytes += size
        if self.deadline is not None and time.monotonic() > self.deadline:
            self.timed_out = True
            return False
        return True

    def room(self) -> int:
        """How many rows the next fetch may ask for without risking much more than the cap: one
        until a row has been seen, then as many as fit four times over at the widest row seen."""
        if not self.rows:
            return 1
        left = self.max_bytes - self.bytes
        per_row = max(self.largest_row, 64)
        return max(1, min(2048, left // (4 * per_row), self.max_rows + 1 - len(self.rows)))

    def _cut(self, reason: str) -> None:
        self.truncated = True
        self.reason = reason

    def message(self) -> str | None:
        """The truncation message an agent reads, or None when the result is whole."""
        if not self.truncated:
            return None
        return f"result truncated to its first {len(self.rows)} rows: {self.reason}"
