"""The read-only source contract: what every warehouse looks like to the snapshot step.

Each source exposes its tables as relations inside a private in-memory DuckDB session (`con`),
attached under the catalog `src`. DuckDB files are attached READ_ONLY; SQLite and PostgreSQL
tables are streamed into memory through read-only connections; the built-in data sets are
generated there. The snapshot step then copies from those relations, so it is the same code for
every kind of source and never holds a writable handle on the source.

Columns whose types cannot be profiled, and tables without rows, are skipped and reported as
`issues` instead of failing the whole run; a source with nothing left raises `SourceError`.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import ClassVar
from urllib.parse import urlsplit, urlunsplit

from workgym.envs.warehouse.source.duck import connect, qi
from workgym.envs.warehouse.source.typemap import Mapped, Unsupported, map_duckdb_type


class SourceError(Exception):
    """A source cannot be read; the message is one line and says what to do."""


@dataclass(frozen=True)
class ForeignKeyInfo:
    """A foreign key declared by the source."""

    columns: tuple[str, ...]
    ref_table: str
    ref_columns: tuple[str, ...]


@dataclass(frozen=True)
class ColumnInfo:
    """One column as it will appear in the snapshot."""

    name: str
    type: str  # DuckDB type in the snapshot
    family: str
    source_type: str
    comment: str | None = None
    expr: str = ""  # SQL over the source relation that yields the snapshot value


@dataclass(frozen=True)
class TableInfo:
    """One table in scope: supported columns, row count, declared keys."""

    name: str
    kind: str  # "table" | "view"
    rows: int
    columns: tuple[ColumnInfo, ...]
    comment: str | None = None
    primary_key: tuple[str, ...] = ()
    unique: tuple[tuple[str, ...], ...] = ()
    foreign_keys: tuple[ForeignKeyInfo, ...] = ()


@dataclass(frozen=True)
class Issue:
    """Something left out of the snapshot, and why."""

    table: str
    column: str | None
    reason: str

    def __str__(self) -> str:
        where = self.table if self.column is None else f"{self.table}.{self.column}"
        return f"{where}: {self.reason}"


@dataclass
class RawColumn:
    """A column as a source subclass reports it; `duck_type` is None when it cannot be loaded."""

    name: str
    source_type: str
    duck_type: str | None
    comment: str | None = None
    reason: str = ""


@dataclass
class RawTable:
    """A table as a source subclass reports it, before filtering."""

    name: str
    columns: list[RawColumn]
    kind: str = "table"
    comment: str | None = None
    primary_key: tuple[str, ...] = ()
    unique: list[tuple[str, ...]] = field(default_factory=list)
    foreign_keys: list[ForeignKeyInfo] = field(default_factory=list)


def redact_url(url: str) -> str:
    """The URL with any password replaced, safe to write into manifests and logs."""
    parts = urlsplit(url)
    if parts.password is None:
        return re.sub(r"(password=)[^&]*", r"\1***", url)
    host = parts.netloc.rsplit("@", 1)[1]
    netloc = f"{parts.username}:***@{host}"
    return urlunsplit(parts._replace(netloc=netloc))


class Source(ABC):
    """A warehouse opened read-only. Use as a context manager; `close()` releases everything."""

    kind: ClassVar[str] = "source"

    def __init__(self, url: str, only: Sequence[str] | None = None) -> None:
        self.url = redact_url(url)
        self.con = connect()
        self._only = list(only) if only is not None else None
        self._tables: dict[str, TableInfo] | None = None
        self._raw: dict[str, RawTable] = {}
        self.issues: list[Issue] = []

    # -- what a subclass provides -------------------------------------------------------------
    @abstractmethod
    def _list_raw(self) -> list[RawTable]:
        """Every table and view in the source's schema, with declared keys."""

    @abstractmethod
    def _relation(self, raw: RawTable) -> str:
        """A relation in `self.con` holding the table (loaded on first use)."""

    def _count_rows(self, raw: RawTable) -> int:
        row = self.con.execute(f"SELECT count(*) FROM {self._relation(raw)}").fetchone()
        return int(row[0]) if row else 0

    def _close(self) -> None:
        """Release subclass resources (connections to the source)."""
        return None

    def _where(self) -> str:
        """How to name the source in messages."""
        return self.url

    # -- the public contract ------------------------------------------------------------------
    def tables(self) -> list[TableInfo]:
        """The tables in scope that have supported columns and rows, in name order."""
        if self._tables is None:
            self._tables = self._discover()
        return list(self._tables.values())

    def table(self, name: str) -> TableInfo:
        self.tables()
        assert self._tables is not None
        if name not in self._tables:
            raise SourceError(f"no table {name!r} in {self._where()}; have {sorted(self._tables)}")
        return self._tables[name]

    def select_sql(self, name: str) -> str:
        """SELECT producing the snapshot form of table `name` (supported columns, cast)."""
        info = self.table(name)
        cols = ", ".join(f"{c.expr} AS {qi(c.name)}" for c in info.columns)
        return f"SELECT {cols} FROM {self._relation(self._raw[name])}"

    def close(self) -> None:
        try:
            self._close()
        finally:
            self.con.close()

    def __enter__(self) -> Source:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- shared filtering ---------------------------------------------------------------------
    def _discover(self) -> dict[str, TableInfo]:
        raws = {r.name: r for r in self._list_raw()}
        if not raws:
            raise SourceError(
                f"{self._where()} has no tables; check the path/database and schema (?schema=NAME)"
            )
        names = sorted(raws)
        if self._only is not None:
            missing = [n for n in self._only if n not in raws]
            if missing:
                raise SourceError(
                    f"tables {missing} not found in {self._where()}; available: {names}"
                )
            names = sorted(set(self._only))
        self._raw = {n: raws[n] for n in names}
        out: dict[str, TableInfo] = {}
        for name in names:
            info = self._admit(raws[name])
            if info is not None:
                out[name] = info
        if not out:
            reasons = "; ".join(str(i) for i in self.issues) or "no tables"
            raise SourceError(f"{self._where()} has no usable tables ({reasons}); pick others")
        return out

    def _admit(self, raw: RawTable) -> TableInfo | None:
        cols: list[ColumnInfo] = []
        for rc in raw.columns:
            mapped = map_duckdb_type(rc.duck_type) if rc.duck_type else Unsupported(rc.reason)
            if isinstance(mapped, Unsupported):
                self.issues.append(Issue(raw.name, rc.name, f"skipped column: {mapped.reason}"))
                continue
            cols.append(_column(rc, mapped))
        if not cols:
            self.issues.append(Issue(raw.name, None, "skipped table: no supported columns"))
            return None
        rows = self._count_rows(raw)
        if rows == 0:
            self.issues.append(Issue(raw.name, None, "skipped table: it has no rows"))
            return None
        kept = {c.name for c in cols}

        def ok(columns: Sequence[str]) -> bool:
            return bool(columns) and all(c in kept for c in columns)

        return TableInfo(
            name=raw.name,
            kind=raw.kind,
            rows=rows,
            columns=tuple(cols),
            comment=raw.comment,
            primary_key=raw.primary_key if ok(raw.primary_key) else (),
            unique=tuple(u for u in raw.unique if ok(u)),
            foreign_keys=tuple(f for f in raw.foreign_keys if ok(f.columns)),
        )


def _column(rc: RawColumn, mapped: Mapped) -> ColumnInfo:
    expr = f"CAST({qi(rc.name)} AS {mapped.type})" if mapped.cast else qi(rc.name)
    return ColumnInfo(
        name=rc.name,
        type=mapped.type,
        family=mapped.family,
        source_type=rc.source_type,
        comment=rc.comment,
        expr=expr,
    )
