"""SQLite files, read through the standard library with `mode=ro` (never created, never written).

DuckDB's sqlite scanner is an extension that is not available offline, so rows are streamed with
`sqlite3` into DuckDB memory. SQLite is dynamically typed: a column declared INTEGER may hold
text. The snapshot type therefore follows the storage classes the column *actually* holds:
only integers -> BIGINT; integers and reals -> DOUBLE; any text mixed with numbers -> VARCHAR
(kept as the dirty text it is); blobs -> skipped. Text in a column declared DATE or DATETIME
becomes DATE or TIMESTAMP only when every value parses (timestamps normalised to UTC by SQLite's
own `strftime`); otherwise it stays text, where the profile flags it as dates-in-text.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path
from urllib.request import pathname2url

from workgym.envs.warehouse.source.contract import (
    ForeignKeyInfo,
    RawColumn,
    RawTable,
    Source,
    SourceError,
)
from workgym.envs.warehouse.source.duck import qi
from workgym.envs.warehouse.source.rowload import load_rows

_TS_EXPR = "strftime('%Y-%m-%d %H:%M:%f', {c})"
_BATCH = 50_000


class SqliteSource(Source):
    """A SQLite database file opened read-only."""

    kind = "sqlite"

    def __init__(self, url: str, path: Path, only: Sequence[str] | None) -> None:
        super().__init__(url, only)
        self.path = path
        uri = f"file:{pathname2url(str(path.resolve()))}?mode=ro"
        try:
            self._db = sqlite3.connect(uri, uri=True)
            self._db.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.Error as e:
            self.con.close()
            raise SourceError(
                f"cannot read {path} as SQLite ({e}); check that it is a SQLite database file"
            ) from e
        self.con.execute("ATTACH ':memory:' AS src")
        self._exprs: dict[str, list[str]] = {}
        self._loaded: set[str] = set()

    def _close(self) -> None:
        self._db.close()

    def _list_raw(self) -> list[RawTable]:
        out: list[RawTable] = []
        for name, kind in self._db.execute(
            "SELECT name, type FROM sqlite_master WHERE type IN ('table', 'view') "
            "AND name NOT LIKE 'sqlite_%' ORDER BY name"
        ).fetchall():
            if self._only is not None and name not in self._only:
                out.append(RawTable(name=name, columns=[], kind=kind))  # out of scope: no scan
            else:
                out.append(self._describe(name, kind))
        return out

    def _describe(self, name: str, kind: str) -> RawTable:
        info = self._db.execute(f"PRAGMA table_info({qi(name)})").fetchall()
        declared = [(str(r[1]), str(r[2] or "")) for r in info]
        pk = tuple(str(r[1]) for r in sorted((r for r in info if r[5]), key=lambda r: r[5]))
        types, exprs = self._decide_types(name, declared)
        self._exprs[name] = exprs
        cols = [
            RawColumn(c, d or "(none)", t, None, "" if t else "column holds BLOB values")
            for (c, d), t in zip(declared, types, strict=True)
        ]
        raw = RawTable(name=name, columns=cols, kind=kind, primary_key=pk)
        if kind == "table":
            raw.unique = self._unique(name)
            raw.foreign_keys = self._foreign_keys(name, pk)
        return raw

    def _decide_types(
        self, table: str, declared: list[tuple[str, str]]
    ) -> tuple[list[str | None], list[str]]:
        parts: list[str] = []
        for col, _ in declared:
            c = qi(col)
            for cls in ("integer", "real", "text", "blob"):
                parts.append(f"coalesce(sum(typeof({c}) = '{cls}'), 0)")
            parts.append(f"coalesce(sum(date({c}) IS NOT NULL AND date({c}) = {c}), 0)")
            parts.append(f"coalesce(sum({_TS_EXPR.format(c=c)} IS NOT NULL), 0)")
        if not parts:
            return [], []
        row = self._db.execute(f"SELECT {', '.join(parts)} FROM {qi(table)}").fetchone()
        types: list[str | None] = []
        exprs: list[str] = []
        for i, (col, decl) in enumerate(declared):
            n_int, n_real, n_text, n_blob, n_date, n_ts = row[i * 6 : i * 6 + 6]
            dtype, expr = _choose(decl.upper(), n_int, n_real, n_text, n_blob, n_date, n_ts)
            types.append(dtype)
            exprs.append(expr.format(c=qi(col)))
        return types, exprs

    def _unique(self, table: str) -> list[tuple[str, ...]]:
        out: list[tuple[str, ...]] = []
        for row in self._db.execute(f"PRAGMA index_list({qi(table)})").fetchall():
            index, unique, origin, partial = row[1], row[2], row[3], row[4]
            if unique and origin == "u" and not partial:
                cols = self._db.execute(f"PRAGMA index_info({qi(index)})").fetchall()
                out.append(tuple(str(c[2]) for c in sorted(cols)))
        return out

    def _foreign_keys(self, table: str, pk: tuple[str, ...]) -> list[ForeignKeyInfo]:
        groups: dict[int, list[tuple[str, str, str | None]]] = {}
        for row in self._db.execute(f"PRAGMA foreign_key_list({qi(table)})").fetchall():
            groups.setdefault(row[0], []).append((str(row[2]), str(row[3]), row[4]))
        out = []
        for _, items in sorted(groups.items()):
            ref = items[0][0]
            if any(to is None for _, _, to in items):  # references the target's primary key
                ref_pk = [
                    str(r[1])
                    for r in sorted(
                        (r for r in self._db.execute(f"PRAGMA table_info({qi(ref)})") if r[5]),
                        key=lambda r: r[5],
                    )
                ]
                to_cols = tuple(ref_pk)
            else:
                to_cols = tuple(str(to) for _, _, to in items)
            out.append(ForeignKeyInfo(tuple(frm for _, frm, _ in items), ref, to_cols))
        return out

    def _count_rows(self, raw: RawTable) -> int:
        row = self._db.execute(f"SELECT count(*) FROM {qi(raw.name)}").fetchone()
        return int(row[0]) if row else 0

    def _relation(self, raw: RawTable) -> str:
        target = f"src.main.{qi(raw.name)}"
        if raw.name not in self._loaded:
            keep = [(i, c) for i, c in enumerate(raw.columns) if c.duck_type]
            exprs = ", ".join(self._exprs[raw.name][i] for i, _ in keep) or "NULL"
            cur = self._db.execute(f"SELECT {exprs} FROM {qi(raw.name)}")
            load_rows(
                self.con, target, [(c.name, str(c.duck_type)) for _, c in keep], _batches(cur)
            )
            self._loaded.add(raw.name)
        return target


def _batches(cur: sqlite3.Cursor) -> Iterator[list[tuple[object, ...]]]:
    while rows := cur.fetchmany(_BATCH):
        yield rows


def _choose(
    decl: str, n_int: int, n_real: int, n_text: int, n_blob: int, n_date: int, n_ts: int
) -> tuple[str | None, str]:
    """Snapshot type and select expression from the storage classes a column holds."""
    if n_blob:
        return None, "{c}"
    if n_text:
        if n_int or n_real:
            return "VARCHAR", "{c}"
        if "DATE" in decl and "TIME" not in decl and n_date == n_text:
            return "DATE", "{c}"
        if ("DATE" in decl or "TIMESTAMP" in decl) and n_ts == n_text:
            return "TIMESTAMP", _TS_EXPR
        return "VARCHAR", "{c}"
    if n_real:
        return "DOUBLE", "{c}"
    if n_int:
        return "BIGINT", "{c}"
    # Only NULLs: fall back to SQLite's affinity rules on the declared type.
    if "INT" in decl:
        return "BIGINT", "{c}"
    if any(k in decl for k in ("REAL", "FLOA", "DOUB")):
        return "DOUBLE", "{c}"
    return "VARCHAR", "{c}"
