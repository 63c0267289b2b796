"""Warm DuckDB sessions: one idle pinned session per file, kept while a batch of queries runs.

Every query still gets a fresh connection (sql_exec), but connecting to a file whose database
instance is already open costs about 0.6 ms, against about 12 ms to load it again (a fuzzed copy
of nycflights13). A check scores 400 tasks three times, many against a suite of six copies, so
the loads were the largest part of its time. Inside `warm_sessions()` the first query on a file
leaves its instance open for the next one; leaving the outermost block closes them all, so no
file stays locked once the batch is done (a later writer in this process would be refused).

A file replaced while warm (another inode, size or mtime) is reopened, never served from the
instance of the old file; at most `limit` files and `max_bytes` of them are held, the least
recently used closed first, and a file larger than `max_bytes` alone is never held.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

# Every instance held costs its own caches beside its file's pages, so the count bounds RSS as
# much as the bytes do: at 256 files and 2 GiB a check peaked at 2.0 GB (nycflights13, many
# small fuzzed copies) and 1.8 GB (TPC-DS sf=0.1); at 32 and 512 MiB, 1.3 and 1.2 GB, for about
# 10-12 s more a check: files are reopened more often (bench/warehouse.py --check, decision 0176).
DEFAULT_LIMIT = 32
DEFAULT_MAX_BYTES = 512 << 20

Identity = tuple[int, int, int]  # inode, size, mtime (ns): a file replaced is another file


class _Pool:
    def __init__(self, limit: int, max_bytes: int) -> None:
        self.limit = limit
        self.max_bytes = max_bytes
        self.bytes = 0
        self.held: OrderedDict[str, tuple[Identity, Any]] = OrderedDict()

    def ensure(self, path: str | Path, opener: Callable[[str | Path], Any]) -> bool:
        key = os.path.abspath(path)
        try:
            st = os.stat(key)
        except OSError:
            return False  # the query's own connect reports the missing file
        ident = (st.st_ino, st.st_size, st.st_mtime_ns)
        found = self.held.get(key)
        if found is not None and found[0] == ident:
            self.held.move_to_end(key)
            return True
        if found is not None:
            self._close(key)
        if st.st_size > self.max_bytes:
            return False
        while self.held and (
            len(self.held) >= self.limit or self.bytes + st.st_size > self.max_bytes
        ):
            self._close(next(iter(self.held)))
        try:
            self.held[key] = (ident, opener(key))
        except Exception:  # not a DuckDB file, or locked: the query itself says so
            return False
        self.bytes += st.st_size
        return True

    def _close(self, key: str) -> None:
        ident, con = self.held.pop(key)
        self.bytes -= ident[1]
        with contextlib.suppress(Exception):
            con.close()

    def close_all(self) -> None:
        while self.held:
            self._close(next(iter(self.held)))


_lock = threading.Lock()
_pool: _Pool | None = None
_depth = 0


def ensure_warm(path: str | Path, opener: Callable[[str | Path], Any]) -> bool:
    """Inside `warm_sessions()`, keep an idle session of `opener(path)` for later queries; True
    when one is held (a connection to `path` then joins the instance `opener` configured)."""
    if _pool is None:
        return False
    with _lock:
        return _pool is not None and _pool.ensure(path, opener)


def held_files() -> int:
    """How many files are held warm now (0 outside `warm_sessions()`)."""
    with _lock:
        return len(_pool.held) if _pool is not None else 0


@contextlib.contextmanager
def warm_sessions(limit: int = DEFAULT_LIMIT, max_bytes: int = DEFAULT_MAX_BYTES) -> Iterator[None]:
    """Hold DuckDB instances open across queries for the block; nested blocks share one pool,
    closed when the outermost exits."""
    global _pool, _depth
    with _lock:
        if _pool is None:
            _pool = _Pool(limit, max_bytes)
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _pool is not None:
                _pool.close_all()
                _pool = None
