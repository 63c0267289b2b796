"""PostgreSQL through psycopg 3 (the `[postgres]` extra), imported only when such a URL is used.

The session is read-only twice over: `default_transaction_read_only=on` for the connection and
psycopg's `read_only` flag for every transaction. One REPEATABLE READ transaction spans the whole
copy, so all tables come from the same point in time. Every value is selected as text in the
server's ISO formats (timestamptz converted to UTC first) and cast to its DuckDB type on arrival,
which avoids any driver-side type adaptation.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

from workgym.envs.warehouse.source.contract import (
    ForeignKeyInfo,
    RawColumn,
    RawTable,
    Source,
    SourceError,
)
from workgym.envs.warehouse.source.duck import qi
from workgym.envs.warehouse.source.rowload import load_rows

_BATCH = 50_000
_OPTIONS = (
    "-c default_transaction_read_only=on -c TimeZone=UTC -c DateStyle=ISO,YMD "
    "-c IntervalStyle=postgres -c extra_float_digits=1"
)
_SIMPLE = {
    "int2": "SMALLINT", "int4": "INTEGER", "int8": "BIGINT", "oid": "BIGINT",
    "float4": "FLOAT", "float8": "DOUBLE", "bool": "BOOLEAN", "uuid": "UUID",
    "date": "DATE", "time": "TIME", "timestamp": "TIMESTAMP",
    "text": "VARCHAR", "varchar": "VARCHAR", "bpchar": "VARCHAR", "char": "VARCHAR",
    "name": "VARCHAR", "citext": "VARCHAR", "json": "VARCHAR", "jsonb": "VARCHAR",
    "xml": "VARCHAR", "inet": "VARCHAR", "cidr": "VARCHAR", "macaddr": "VARCHAR",
}  # fmt: skip
_INTERVAL = (
    "(extract(year from {c}) * 12 + extract(month from {c}))::text || ' months ' || "
    "extract(day from {c})::text || ' days ' || (extract(hour from {c}) * 3600 + "
    "extract(minute from {c}) * 60 + extract(second from {c}))::text || ' seconds'"
)
_COLUMNS_SQL = """
SELECT c.relname, c.relkind, obj_description(c.oid, 'pg_class'), a.attname::text,
       format_type(a.atttypid, a.atttypmod), coalesce(bt.typname, t.typname)::text,
       coalesce(bt.typtype, t.typtype)::text, col_description(c.oid, a.attnum)
FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace
JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
JOIN pg_type t ON t.oid = a.atttypid
LEFT JOIN pg_type bt ON t.typtype = 'd' AND bt.oid = t.typbasetype
WHERE n.nspname = %s AND c.relkind IN ('r', 'p', 'v', 'm', 'f') AND NOT c.relispartition
ORDER BY c.relname, a.attnum
"""
_KEYS_SQL = """
SELECT cl.relname::text, con.contype::text,
  ARRAY(SELECT a.attname::text FROM unnest(con.conkey) WITH ORDINALITY k(n, i)
        JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.n ORDER BY k.i),
  fcl.relname::text, fn.nspname::text,
  ARRAY(SELECT a.attname::text FROM unnest(con.confkey) WITH ORDINALITY k(n, i)
        JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.n ORDER BY k.i)
FROM pg_constraint con
JOIN pg_class cl ON cl.oid = con.conrelid
JOIN pg_namespace n ON n.oid = cl.relnamespace
LEFT JOIN pg_class fcl ON fcl.oid = con.confrelid
LEFT JOIN pg_namespace fn ON fn.oid = fcl.relnamespace
WHERE n.nspname = %s AND con.contype IN ('p', 'u', 'f')
ORDER BY cl.relname, con.conname
"""


class PostgresSource(Source):
    """One schema of a PostgreSQL database (default `public`, or `?schema=NAME`)."""

    kind = "postgresql"

    def __init__(self, url: str, only: Sequence[str] | None) -> None:
        super().__init__(url, only)
        try:
            import psycopg
        except ImportError as e:
            self.con.close()
            raise SourceError(
                "postgresql:// URLs need psycopg 3: pip install 'workgym[postgres]'"
            ) from e
        conninfo, self.schema, where = _split_url(url)
        self._where_text = where
        try:
            self._pg = psycopg.connect(conninfo, connect_timeout=5, options=_OPTIONS)
            self._pg.read_only = True
            self._pg.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
        except psycopg.Error as e:
            self.con.close()
            raise SourceError(_explain(str(e), where)) from e
        self.con.execute("ATTACH ':memory:' AS src")
        self._exprs: dict[str, list[str]] = {}
        self._loaded: set[str] = set()

    def _where(self) -> str:
        return f"{self._where_text} (schema {self.schema!r})"

    def _close(self) -> None:
        self._pg.close()

    def _fetch(self, sql: str, args: Sequence[object] = ()) -> list[tuple[Any, ...]]:
        with self._pg.cursor() as cur:
            cur.execute(sql, args)
            return cur.fetchall()

    def _list_raw(self) -> list[RawTable]:
        tables: dict[str, RawTable] = {}
        for rel, relkind, tcomment, col, fmt, typname, typtype, ccomment in self._fetch(
            _COLUMNS_SQL, [self.schema]
        ):
            raw = tables.get(rel)
            if raw is None:
                kind = "view" if relkind in ("v", "m") else "table"
                raw = tables[rel] = RawTable(name=rel, columns=[], kind=kind, comment=tcomment)
                self._exprs[rel] = []
            dtype, expr = _map_type(typname, typtype, fmt)
            reason = "" if dtype else f"PostgreSQL type {fmt} is not supported"
            raw.columns.append(RawColumn(col, fmt, dtype, ccomment, reason))
            self._exprs[rel].append(expr.format(c=qi(col)))
        for rel, contype, cols, ref, ref_schema, ref_cols in self._fetch(_KEYS_SQL, [self.schema]):
            raw = tables.get(rel)
            if raw is None:
                continue
            if contype == "p":
                raw.primary_key = tuple(cols)
            elif contype == "u":
                raw.unique.append(tuple(cols))
            elif ref_schema == self.schema:
                raw.foreign_keys.append(ForeignKeyInfo(tuple(cols), ref, tuple(ref_cols)))
        return list(tables.values())

    def _count_rows(self, raw: RawTable) -> int:
        rows = self._fetch(f"SELECT count(*) FROM {qi(self.schema)}.{qi(raw.name)}")
        return int(rows[0][0])

    def _relation(self, raw: RawTable) -> str:
        target = f"src.main.{qi(raw.name)}"
        if raw.name not in self._loaded:
            keep = [(i, c) for i, c in enumerate(raw.columns) if c.duck_type]
            exprs = ", ".join(self._exprs[raw.name][i] for i, _ in keep) or "NULL"
            sql = f"SELECT {exprs} FROM {qi(self.schema)}.{qi(raw.name)}"
            with self._pg.cursor(name="workgym_copy") as cur:
                cur.execute(sql)
                load_rows(
                    self.con, target, [(c.name, str(c.duck_type)) for _, c in keep], _batches(cur)
                )
            self._loaded.add(raw.name)
        return target


def _batches(cur: Any) -> Iterator[list[tuple[Any, ...]]]:
    while rows := cur.fetchmany(_BATCH):
        yield rows


def _map_type(typname: str, typtype: str, formatted: str) -> tuple[str | None, str]:
    """DuckDB type and the text-producing select expression for one PostgreSQL column."""
    if typname in _SIMPLE:
        return _SIMPLE[typname], "{c}::text"
    if typtype == "e":  # enum
        return "VARCHAR", "{c}::text"
    if typname == "timestamptz":
        return "TIMESTAMP", "({c} AT TIME ZONE 'UTC')::text"
    if typname == "numeric":
        m = re.search(r"numeric\((\d+),(\d+)\)", formatted)
        if m and int(m.group(1)) <= 38:
            return f"DECIMAL({m.group(1)},{m.group(2)})", "{c}::text"
        return "DOUBLE", "{c}::text"
    if typname == "money":
        return "DECIMAL(38,2)", "{c}::numeric::text"
    if typname == "interval":
        return "INTERVAL", _INTERVAL
    return None, "{c}"


def _split_url(url: str) -> tuple[str, str, str]:
    """(conninfo for libpq without our own params, schema, host:port/db for messages)."""
    parts = urlsplit(url)
    params = parse_qsl(parts.query)
    schema = next((v for k, v in params if k == "schema"), "public")
    rest = [(k, v) for k, v in params if k != "schema"]
    try:
        port = parts.port or 5432
    except ValueError as e:
        raise SourceError(f"bad port in {url!r}: write postgresql://user:pass@host:5432/db") from e
    db = unquote(parts.path.lstrip("/")) or "(default database)"
    where = f"postgresql://{parts.hostname or 'localhost'}:{port}/{db}"
    scheme = "postgresql"
    conninfo = urlunsplit((scheme, parts.netloc, parts.path, urlencode(rest), ""))
    return conninfo, schema, where


def _explain(message: str, where: str) -> str:
    """Turn a libpq connection error into one line that says what to do."""
    text = " ".join(message.split())
    low = text.lower()
    if "password authentication failed" in low or "no password supplied" in low:
        return f"{where} rejected the credentials ({text}); fix user/password in the URL"
    if "role" in low and "does not exist" in low:
        return f"{where} has no such user ({text}); fix the user in the URL"
    if "database" in low and "does not exist" in low:
        return f"{where}: database does not exist ({text}); name an existing database in the URL"
    if "pg_hba.conf" in low:
        return f"{where} refused this client ({text}); allow it in pg_hba.conf or change user"
    return f"cannot reach PostgreSQL at {where} ({text}); start the server or fix host/port"
