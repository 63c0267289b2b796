"""Read-only proof #2: with the parser guard bypassed, each engine session itself refuses to write,
attach, copy, change settings or read files; timeouts and row caps are statuses, never rows."""

from __future__ import annotations

import datetime as dt
import time
from pathlib import Path

import pytest
import sqlv_fixtures as fx
from sqlv_fixtures import file_digest, pg_checksum

from workgym.verifiers.sql_exec import execute_sql

flights_db, flights_sqlite, pg_reader = fx.flights_db, fx.flights_sqlite, fx.pg_reader


def _target(engine: str, request: pytest.FixtureRequest) -> Path | str:
    """The flights database of `engine` (PostgreSQL only when a server is configured)."""
    fixture = {"duckdb": "flights_db", "sqlite": "flights_sqlite", "postgres": "pg_reader"}
    target: Path | str = request.getfixturevalue(fixture[engine])
    return target


REFUSED = ("forbidden", "error")

# The refusal matrix, written for each engine's own syntax, run with guard=False.
DUCKDB_MATRIX = [
    "DELETE FROM flights",
    "UPDATE flights SET dep_delay = 0",
    "DROP TABLE flights",
    "WITH x AS (DELETE FROM flights RETURNING *) SELECT * FROM x",
    "CREATE TABLE copy_of_flights AS SELECT * FROM flights",
    "ATTACH '/tmp/wg_sqlv_other.duckdb' AS o",
    "ATTACH ':memory:' AS m",
    "COPY flights TO '/tmp/wg_sqlv_out.csv'",
    "EXPORT DATABASE '/tmp/wg_sqlv_export'",
    "PRAGMA enable_profiling",
    "PRAGMA threads = 1",
    "SET TimeZone = 'America/New_York'",
    "SET enable_external_access = true",
    "INSTALL httpfs",
    "LOAD httpfs",
    "SELECT * FROM read_csv('/etc/passwd')",
    "SELECT * FROM read_text('/etc/passwd')",
    "SELECT * FROM '/etc/passwd'",
    "SELECT * FROM glob('/etc/*')",
    "SELECT 1; DELETE FROM flights",
    "BEGIN",
    "CHECKPOINT",
]
SQLITE_MATRIX = [
    "DELETE FROM flights",
    "UPDATE flights SET dep_delay = 0",
    "DROP TABLE flights",
    "WITH x AS (DELETE FROM flights RETURNING *) SELECT * FROM x",
    "CREATE TEMP TABLE t AS SELECT 1",
    "ATTACH '/tmp/wg_sqlv_other.sqlite' AS o",
    "PRAGMA table_info(flights)",
    "PRAGMA user_version = 7",
    "SELECT * FROM pragma_table_info('flights')",
    "SELECT load_extension('/tmp/evil')",
    "SELECT 1; DELETE FROM flights",
    "BEGIN IMMEDIATE",
    "VACUUM",
]
POSTGRES_MATRIX = [
    "DELETE FROM flights",
    "UPDATE flights SET dep_delay = 0",
    "DROP TABLE flights",
    "WITH x AS (DELETE FROM flights RETURNING *) SELECT * FROM x",
    "CREATE TABLE copy_of_flights AS SELECT * FROM flights",
    "SELECT * INTO copy_of_flights FROM flights",
    "ATTACH 'x' AS y",
    "COPY flights TO '/tmp/wg_sqlv_out.csv'",
    "COPY flights FROM STDIN",
    "PRAGMA table_info(flights)",
    "SELECT pg_read_file('/etc/passwd')",
    "SELECT lo_import('/etc/passwd')",
    "SELECT 1; DELETE FROM flights",
    "COMMIT; DELETE FROM flights",
    "SELECT * FROM flights FOR UPDATE",
    "SET TRANSACTION READ WRITE",
]


@pytest.mark.parametrize("sql", DUCKDB_MATRIX)
def test_duckdb_session_refuses_without_the_guard(flights_db: Path, sql: str) -> None:
    before = file_digest(flights_db)
    result = execute_sql(sql, flights_db, guard=False)
    assert result.status in REFUSED, (sql, result)
    assert result.rows == [] and result.error
    assert file_digest(flights_db) == before
    assert not Path("/tmp/wg_sqlv_out.csv").exists()


def test_duckdb_readonly_pragmas_are_reads(flights_db: Path) -> None:
    # DuckDB rewrites a reading PRAGMA into a SELECT of a table function: the engine lets it
    # through (it cannot write); the guard still refuses it before any engine sees it.
    assert execute_sql("PRAGMA table_info('flights')", flights_db, guard=False).ok
    assert execute_sql("PRAGMA table_info('flights')", flights_db).status == "forbidden"


@pytest.mark.parametrize("sql", SQLITE_MATRIX)
def test_sqlite_session_refuses_without_the_guard(flights_sqlite: Path, sql: str) -> None:
    before = file_digest(flights_sqlite)
    result = execute_sql(sql, flights_sqlite, engine="sqlite", guard=False)
    assert result.status in REFUSED, (sql, result)
    assert result.rows == [] and result.error
    assert file_digest(flights_sqlite) == before


@pytest.mark.parametrize("sql", POSTGRES_MATRIX)
def test_postgres_session_refuses_without_the_guard(pg_reader: str, sql: str) -> None:
    before = pg_checksum(pg_reader)
    result = execute_sql(sql, pg_reader, engine="postgres", guard=False)
    if sql == "SET TRANSACTION READ WRITE":
        # Accepted as a session command, never committed: nothing it could enable runs.
        assert result.status == "forbidden" and "not a SELECT" in (result.error or "")
    else:
        assert result.status in REFUSED, (sql, result)
    assert result.rows == []
    assert pg_checksum(pg_reader) == before


def test_postgres_role_alone_cannot_write(pg_reader: str) -> None:
    """Third layer: even in a read-write transaction the role has no write privilege."""
    import psycopg

    with psycopg.connect(pg_reader) as con:
        con.execute("SET default_transaction_read_only = off")  # the role's default is on
        con.commit()
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            con.execute("DELETE FROM flights")


@pytest.mark.parametrize("engine", ["duckdb", "sqlite", "postgres"])
def test_a_plain_select_runs_on_every_engine(
    engine: str, flights_db: Path, flights_sqlite: Path, request: pytest.FixtureRequest
) -> None:
    db = request.getfixturevalue("pg_reader") if engine == "postgres" else None
    target = {"duckdb": flights_db, "sqlite": flights_sqlite}.get(engine, db)
    assert target is not None
    sql = "SELECT origin, count(*) AS n FROM flights GROUP BY origin ORDER BY origin"
    result = execute_sql(sql, target, engine=engine)  # type: ignore[arg-type]
    assert result.ok and result.columns == ["origin", "n"]
    assert [r[0] for r in result.rows] == ["EWR", "JFK", "LGA"]
    assert sum(r[1] for r in result.rows) == 2000
    assert not result.truncated and result.elapsed_s > 0


CARTESIAN = "SELECT count(*) FROM flights a, flights b, flights c"


@pytest.mark.parametrize("engine", ["duckdb", "sqlite", "postgres"])
def test_cartesian_product_times_out_as_a_status(
    engine: str, request: pytest.FixtureRequest
) -> None:
    target = _target(engine, request)
    start = time.perf_counter()
    result = execute_sql(CARTESIAN, target, engine=engine, timeout_s=0.5)  # type: ignore[arg-type]
    assert result.status == "timeout" and result.rows == []
    assert "0.5 s" in (result.error or "")
    assert time.perf_counter() - start < 5


@pytest.mark.parametrize("engine", ["duckdb", "sqlite", "postgres"])
def test_row_cap_fetches_one_more_and_flags_truncation(
    engine: str, request: pytest.FixtureRequest
) -> None:
    target = _target(engine, request)
    sql = "SELECT a.month, b.day FROM flights a, flights b"
    result = execute_sql(sql, target, engine=engine, max_rows=100)  # type: ignore[arg-type]
    assert result.ok and result.truncated and len(result.rows) == 100
    exact = execute_sql("SELECT * FROM airlines", target, engine=engine, max_rows=8)  # type: ignore[arg-type]
    assert exact.ok and not exact.truncated and len(exact.rows) == 8


HUGE_ROWS = {  # 200 rows of 5 MB (issue 18, item 2), in each engine's words
    "duckdb": "SELECT repeat('x',5000000) FROM range(200)",
    "sqlite": "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < 200)"
    " SELECT replace(hex(zeroblob(2500000)), '0', 'x') FROM r",
    "postgres": "SELECT repeat('x',5000000) FROM generate_series(1, 200)",
}


@pytest.mark.parametrize("engine", ["duckdb", "sqlite", "postgres"])
def test_huge_rows_stop_at_the_byte_cap_with_a_message(
    engine: str, request: pytest.FixtureRequest
) -> None:
    target = _target(engine, request)
    result = execute_sql(
        HUGE_ROWS[engine],
        target,  # type: ignore[arg-type]
        engine=engine,  # type: ignore[arg-type]
        max_rows=200,
        max_bytes=12 * 2**20,
    )
    assert result.ok and result.truncated and len(result.rows) == 2  # 2 x 5 MB fit in 12 MiB
    assert result.note and "size cap" in result.note and "first 2 rows" in result.note
    small = execute_sql("SELECT carrier FROM airlines", target, engine=engine, max_bytes=10**6)  # type: ignore[arg-type]
    assert small.ok and not small.truncated and small.note is None and small.rows


def test_errors_are_statuses_not_rows(flights_db: Path, flights_sqlite: Path) -> None:
    for engine, db in (("duckdb", flights_db), ("sqlite", flights_sqlite)):
        result = execute_sql("SELECT no_such_column FROM flights", db, engine=engine)  # type: ignore[arg-type]
        assert result.status == "error" and result.rows == [] and result.error
        assert "\n" not in result.error


def test_guard_refusal_comes_back_before_the_engine(flights_db: Path) -> None:
    result = execute_sql("WITH x AS (DELETE FROM flights RETURNING *) SELECT 1", flights_db)
    assert result.status == "forbidden"
    assert result.error == "only one read-only SELECT is allowed: found DELETE inside a CTE"
    assert execute_sql("SELEC 1", flights_db).status == "parse_error"


def test_duckdb_sessions_are_pinned_to_utc_and_locked(flights_db: Path) -> None:
    sql = (
        "SELECT current_setting('TimeZone'), current_setting('lock_configuration'),"
        " current_setting('enable_external_access'), TIMESTAMPTZ '2013-01-01 00:00:00+00'"
    )
    for _ in range(2):  # a second fresh session sees the same pins
        result = execute_sql(sql, flights_db)
        assert result.ok
        tz, locked, external, stamp = result.rows[0]
        assert tz in ("UTC", "Etc/UTC") and locked is True and external is False
        assert stamp.utcoffset() == dt.timedelta(0)


def test_missing_database_is_a_clear_error(tmp_path: Path) -> None:
    for engine in ("duckdb", "sqlite"):
        result = execute_sql("SELECT 1", tmp_path / "nope.db", engine=engine)  # type: ignore[arg-type]
        assert result.status == "error" and "nope.db" in (result.error or "")
    assert not (tmp_path / "nope.db").exists()


def test_bad_limits_are_refused(flights_db: Path) -> None:
    with pytest.raises(ValueError, match="timeout_s"):
        execute_sql("SELECT 1", flights_db, timeout_s=0)
