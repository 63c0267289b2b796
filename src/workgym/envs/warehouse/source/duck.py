"""DuckDB sessions and SQL quoting shared by every warehouse module.

One helper opens every session so that the UTC pin cannot be forgotten: the same query must give
the same answer whether it runs while snapshotting, profiling, planting or in an episode.
"""

from __future__ import annotations

from pathlib import Path

import duckdb


def connect(
    path: str | Path | None = None, *, read_only: bool = False
) -> duckdb.DuckDBPyConnection:
    """Open a DuckDB session (in memory when `path` is None) with TimeZone pinned to UTC."""
    con = duckdb.connect(":memory:" if path is None else str(path), read_only=read_only)
    con.execute("SET TimeZone = 'UTC'")
    return con


def qi(name: str) -> str:
    """Quote an SQL identifier."""
    return '"' + name.replace('"', '""') + '"'


def ql(text: str) -> str:
    """Quote an SQL string literal."""
    return "'" + text.replace("'", "''") + "'"
