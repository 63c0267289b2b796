"""SQL verifier fixtures: a small nycflights-like warehouse built in code, in DuckDB and SQLite,
and a PostgreSQL schema with a SELECT-only role when a server is reachable.

A plain module (not a conftest) so that it cannot collide with other areas' fixtures in
tests/verifiers; test files import the fixtures they use from here.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest

from workgym.verifiers.pg_reader import reader_role_sql

# Orphans on purpose: dest SJU/BQN are not airports, tailnums N180AA..N199AA are not planes.
FLIGHTS_SQL = """
CREATE TABLE airlines AS SELECT * FROM (VALUES
  ('AA', 'American Airlines Inc.'), ('B6', 'JetBlue Airways'), ('DL', 'Delta Air Lines Inc.'),
  ('EV', 'ExpressJet Airlines Inc.'), ('UA', 'United Air Lines Inc.'),
  ('WN', 'Southwest Airlines Co.'), ('MQ', 'Envoy Air'), ('US', 'US Airways Inc.')
) t(carrier, name);
CREATE TABLE airports AS SELECT * FROM (VALUES
  ('JFK', 'John F Kennedy Intl', -5), ('LGA', 'La Guardia', -5), ('EWR', 'Newark Liberty Intl', -5),
  ('ATL', 'Hartsfield Jackson Atlanta Intl', -5), ('ORD', 'Chicago Ohare Intl', -6),
  ('LAX', 'Los Angeles Intl', -8), ('SFO', 'San Francisco Intl', -8),
  ('BOS', 'General Edward Lawrence Logan Intl', -5), ('MIA', 'Miami Intl', -5)
) t(faa, name, tz);
CREATE TABLE planes AS
  SELECT 'N' || lpad(i::VARCHAR, 3, '0') || 'AA' AS tailnum, 1990 + i % 25 AS year,
         50 + (i * 37) % 300 AS seats
  FROM range(180) t(i);
CREATE TABLE flights AS
  SELECT 2013 AS year, 1 + (i * 7) % 12 AS month, 1 + (i * 13) % 28 AS day,
         ['AA','B6','DL','EV','UA','WN','MQ','US'][1 + (hash(i, 1) % 8)::INTEGER] AS carrier,
         ['JFK','LGA','EWR'][1 + (hash(i, 2) % 3)::INTEGER] AS origin,
         ['ATL','ORD','LAX','SFO','BOS','MIA','SJU','BQN'][1 + (hash(i, 3) % 8)::INTEGER] AS dest,
         CASE WHEN i % 97 = 0 THEN NULL
              ELSE 'N' || lpad((hash(i, 4) % 200)::VARCHAR, 3, '0') || 'AA' END AS tailnum,
         CASE WHEN hash(i, 5) % 40 = 0 THEN NULL
              ELSE (hash(i, 6) % 180)::DOUBLE - 20 END AS dep_delay,
         [760, 733, 2475, 2586, 187, 1089, 1598, 1576][1 + (hash(i, 3) % 8)::INTEGER] AS distance
  FROM range({n}) t(i);
ALTER TABLE flights ADD COLUMN arr_delay DOUBLE;
UPDATE flights SET arr_delay = dep_delay + (hash(month, day, carrier) % 30)::DOUBLE - 15;
"""


def build_flights(path: Path, n: int = 2000) -> Path:
    con = duckdb.connect(str(path))
    con.execute(FLIGHTS_SQL.format(n=n))
    con.close()
    return path


@pytest.fixture(scope="session")
def flights_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_flights(tmp_path_factory.mktemp("sqlv") / "flights.duckdb")


def _rows(path: Path, table: str) -> tuple[list[str], list[tuple[Any, ...]]]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        cur = con.execute(f"SELECT * FROM {table}")
        return [d[0] for d in cur.description], cur.fetchall()
    finally:
        con.close()


@pytest.fixture(scope="session")
def flights_sqlite(flights_db: Path) -> Path:
    path = flights_db.with_suffix(".sqlite")
    con = sqlite3.connect(path)
    for table in ("airlines", "airports", "planes", "flights"):
        cols, rows = _rows(flights_db, table)
        con.execute(f"CREATE TABLE {table} ({', '.join(cols)})")
        con.executemany(f"INSERT INTO {table} VALUES ({', '.join('?' * len(cols))})", rows)
    con.commit()
    con.close()
    return path


@pytest.fixture(scope="session")
def pg_reader(flights_db: Path) -> Iterator[str]:
    """DSN of a SELECT-only role on a fresh schema holding the flights tables.

    Needs a server at WORKGYM_TEST_PG whose user may create roles and schemas.
    """
    admin = os.environ.get("WORKGYM_TEST_PG")
    if not admin:
        pytest.skip("no PostgreSQL: set WORKGYM_TEST_PG=postgresql://user:pw@127.0.0.1:5432/db")
    psycopg = pytest.importorskip("psycopg", reason="psycopg 3 not installed")
    try:
        con = psycopg.connect(admin, autocommit=True, connect_timeout=3)
    except psycopg.Error as err:
        pytest.skip(f"PostgreSQL at WORKGYM_TEST_PG is not reachable: {err}")
    tag = uuid.uuid4().hex[:8]
    schema, role, password = f"wg_sqlv_{tag}", f"wg_sqlv_reader_{tag}", uuid.uuid4().hex
    con.execute(f"CREATE SCHEMA {schema}")
    for table, types in (
        ("airlines", "carrier text, name text"),
        ("airports", "faa text, name text, tz integer"),
        ("planes", "tailnum text, year integer, seats integer"),
        (
            "flights",
            "year integer, month integer, day integer, carrier text, origin text,"
            " dest text, tailnum text, dep_delay double precision, distance integer,"
            " arr_delay double precision",
        ),
    ):
        cols, rows = _rows(flights_db, table)
        con.execute(f"CREATE TABLE {schema}.{table} ({types})")
        with con.cursor().copy(f"COPY {schema}.{table} ({', '.join(cols)}) FROM STDIN") as cp:
            for row in rows:
                cp.write_row(row)
    for statement in reader_role_sql(role, password, schema):
        con.execute(statement)
    info = con.info
    dsn = f"postgresql://{role}:{password}@{info.host}:{info.port}/{info.dbname}"
    try:
        yield dsn
    finally:
        con.execute(f"DROP SCHEMA {schema} CASCADE")
        con.execute(f"DROP ROLE {role}")
        con.close()


def pg_checksum(dsn: str) -> tuple[int, int]:
    """Row count and content hash of flights as the reader sees it."""
    import psycopg

    with psycopg.connect(dsn) as con:
        row = con.execute("SELECT count(*), sum(hashtext(f::text)) FROM flights f").fetchone()
    assert row is not None
    return int(row[0]), int(row[1])


def file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
