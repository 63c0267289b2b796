"""PostgreSQL sources, against a real server named by WORKGYM_TEST_PG (skipped without one).

Example: WORKGYM_TEST_PG=postgresql://postgres:postgres@127.0.0.1:5432/postgres
Each test run creates its own schema and drops it afterwards.
"""

from __future__ import annotations

import datetime as dt
import os
import uuid
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest

from workgym.envs.warehouse.source.snapshot import build_snapshot, source_checksum
from workgym.envs.warehouse.source.sources import SourceError, open_source

PG_URL = os.environ.get("WORKGYM_TEST_PG", "")

SETUP = """
CREATE TYPE {s}.mood AS ENUM ('calm', 'busy');
CREATE TABLE {s}.stores (store_id integer PRIMARY KEY, name text UNIQUE NOT NULL);
COMMENT ON TABLE {s}.stores IS 'Physical stores';
CREATE TABLE {s}.visits (
  visit_id bigint PRIMARY KEY,
  store_id integer REFERENCES {s}.stores(store_id),
  at timestamptz, local_day date, spend numeric(10,2), ratio double precision,
  stay interval, mood {s}.mood, extra jsonb, ok boolean, raw bytea, tags int[]);
COMMENT ON COLUMN {s}.visits.spend IS 'Amount spent in USD';
CREATE TABLE {s}.empty_table (x integer);
INSERT INTO {s}.stores VALUES (1, 'North'), (2, 'South');
INSERT INTO {s}.visits
SELECT i, 1 + i % 2, timestamptz '2024-03-10 01:30:00-05' + i * interval '1 hour',
       date '2024-03-10' + i, (i * 1.25)::numeric(10,2), i / 3.0,
       make_interval(mins => i, secs => 0.5),
       CASE WHEN i % 2 = 0 THEN 'calm' ELSE 'busy' END::{s}.mood,
       jsonb_build_object('i', i), i % 2 = 0, '\\x00', ARRAY[i]
FROM generate_series(1, 50) AS g(i);
"""


def _connect() -> Any:
    psycopg = pytest.importorskip("psycopg")
    if not PG_URL:
        pytest.skip("set WORKGYM_TEST_PG=postgresql://user:pass@host:port/db to run")
    try:
        return psycopg.connect(PG_URL, connect_timeout=3, autocommit=True)
    except psycopg.Error as e:
        pytest.skip(f"no PostgreSQL reachable at WORKGYM_TEST_PG: {' '.join(str(e).split())}")


@pytest.fixture(scope="module")
def pg_url() -> Iterator[str]:
    conn = _connect()
    schema = f"wg_test_{uuid.uuid4().hex[:8]}"
    conn.execute(f"CREATE SCHEMA {schema}")
    try:
        for statement in SETUP.format(s=schema).split(";\n"):
            if statement.strip():
                conn.execute(statement)
        sep = "&" if "?" in PG_URL else "?"
        yield f"{PG_URL}{sep}schema={schema}"
    finally:
        conn.execute(f"DROP SCHEMA {schema} CASCADE")
        conn.close()


def test_postgres_types_keys_and_skips(pg_url: str) -> None:
    with open_source(pg_url) as src:
        assert [t.name for t in src.tables()] == ["stores", "visits"]
        visits = src.table("visits")
        types = {c.name: c.type for c in visits.columns}
        assert types == {
            "visit_id": "BIGINT",
            "store_id": "INTEGER",
            "at": "TIMESTAMP",
            "local_day": "DATE",
            "spend": "DECIMAL(10,2)",
            "ratio": "DOUBLE",
            "stay": "INTERVAL",
            "mood": "VARCHAR",
            "extra": "VARCHAR",
            "ok": "BOOLEAN",
        }
        assert visits.primary_key == ("visit_id",)
        assert visits.foreign_keys[0].ref_table == "stores"
        assert {c.name: c.comment for c in visits.columns}["spend"] == "Amount spent in USD"
        assert src.table("stores").comment == "Physical stores"
        assert src.table("stores").unique == (("name",),)
        issues = {str(i).split(":")[0] for i in src.issues}
        assert issues == {"visits.raw", "visits.tags", "empty_table"}
        row = src.con.execute(
            f"SELECT * FROM ({src.select_sql('visits')}) WHERE visit_id = 3"
        ).fetchone()
    assert row == (
        3,
        2,
        dt.datetime(2024, 3, 10, 9, 30),  # 01:30-05 + 3h, in UTC
        dt.date(2024, 3, 13),
        Decimal("3.75"),
        1.0,
        dt.timedelta(minutes=3, microseconds=500000),
        "busy",
        '{"i": 3}',
        False,
    )


def test_postgres_snapshot_leaves_source_unchanged(pg_url: str, tmp_path: Path) -> None:
    before = source_checksum(pg_url)
    a = build_snapshot(pg_url, tmp_path / "a")
    b = build_snapshot(pg_url, tmp_path / "b")
    assert a.fingerprint() == b.fingerprint()
    assert source_checksum(pg_url) == before
    assert a.table("visits").rows == 50 and "postgres" in a.source


def test_postgres_session_is_read_only(pg_url: str) -> None:
    import psycopg

    with open_source(pg_url) as src:
        src.tables()
        with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
            src._pg.execute("CREATE TABLE should_fail (x integer)")  # type: ignore[attr-defined]


def test_postgres_wrong_credentials(pg_url: str) -> None:
    parts = urlsplit(PG_URL)
    netloc = f"workgym_no_such_user:wrong@{parts.hostname}:{parts.port or 5432}"
    bad = urlunsplit(parts._replace(netloc=netloc))
    with pytest.raises(SourceError) as info:
        open_source(bad)
    message = str(info.value)
    assert "\n" not in message and "user" in message and "wrong" not in message
