"""Review findings on `pg_plan_bound` (decision 0105): literal date series are bounded, only the
aggregates that build a value are charged their rows, and a never-analyzed table is counted
once, not on every query. Needs PostgreSQL (WORKGYM_TEST_PG); temp tables, which autovacuum
never analyzes, stand for never-analyzed ones."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
import sqlv_fixtures as fx

from workgym.verifiers.pg_plan_bound import plan_problem
from workgym.verifiers.sql_exec import execute_sql

flights_db, pg_reader = fx.flights_db, fx.pg_reader
ROWS = 100_000  # 100 MB of repeat('x', 1000) in one string_agg: over the 64 MB limit


@pytest.fixture
def con() -> Iterator[Any]:
    dsn = os.environ.get("WORKGYM_TEST_PG")
    if not dsn:
        pytest.skip("no PostgreSQL: set WORKGYM_TEST_PG=postgresql://user:pw@127.0.0.1:5432/db")
    psycopg = pytest.importorskip("psycopg", reason="psycopg 3 not installed")
    try:
        connection = psycopg.connect(dsn, connect_timeout=3)
    except psycopg.Error as err:
        pytest.skip(f"PostgreSQL at WORKGYM_TEST_PG is not reachable: {err}")
    connection.execute(
        f"CREATE TEMP TABLE big AS SELECT g AS i, g::text AS s FROM generate_series(1, {ROWS}) g"
    )
    connection.execute("CREATE TEMP TABLE small AS SELECT i, s FROM big LIMIT 10")
    try:
        yield connection
    finally:
        connection.close()


class Counting:
    """The connection, counting the `count(*)` statements the bound runs itself."""

    def __init__(self, con: Any) -> None:
        self.con = con
        self.counts = 0

    def execute(self, sql: str, *args: Any) -> Any:
        self.counts += sql.startswith("SELECT count(*) FROM")
        return self.con.execute(sql, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.con, name)


def test_a_literal_date_series_over_a_small_range_passes(con: Any) -> None:
    year = "generate_series('2020-01-01'::date, '2020-12-31', '1 day')"
    assert plan_problem(con, f"SELECT string_agg(d::text, ',') FROM {year} d") is None
    assert plan_problem(con, f"SELECT array_agg(x) FROM (SELECT {year} AS x) t") is None
    months = "generate_series(timestamp '2020-12-31', timestamp '2020-01-01', interval '-1 month')"
    assert plan_problem(con, f"SELECT json_agg(d) FROM {months} d") is None
    # twenty years of minutes is 11 million rows: bounded, and over the limit
    minutes = "generate_series('2000-01-01'::timestamp, '2020-12-31', '1 minute')"
    big = plan_problem(con, f"SELECT string_agg(d::text, ',') FROM {minutes} d")
    assert big is not None and "MB of rows could feed string_agg" in big
    # bounds that are not literals are still refused, since the planner would guess 1,000 rows
    now = plan_problem(
        con, "SELECT string_agg(d::text, ',') FROM generate_series('2020-01-01'::date, now(),"
        " '1 day') d"
    )  # fmt: skip
    assert now is not None and "not literal numbers, dates or timestamps" in now
    # a step sqlglot cannot parse (it asserts) is a one-line refusal, not an escaped error
    odd = "generate_series('2020-01-01'::date, '2020-12-31', '1 month -3 days')"
    refused = plan_problem(con, f"SELECT string_agg(d::text, ',') FROM {odd} d")
    assert refused is not None and "could not be parsed to bound them" in refused


def test_a_date_series_runs_through_run_sql(pg_reader: str) -> None:
    sql = (
        "SELECT string_agg(to_char(d, 'MM-DD'), ',') FROM generate_series('2020-01-01'::date,"
        " '2020-01-31', '1 day') d"
    )
    result = execute_sql(sql, pg_reader, engine="postgres")
    assert result.ok, result
    assert result.rows[0][0].startswith("01-01,01-02") and result.rows[0][0].endswith("01-31")


def test_only_the_aggregates_that_build_a_value_are_charged(con: Any) -> None:
    builder = "string_agg(repeat('x', 1000), ',')"
    assert "could feed string_agg" in str(plan_problem(con, f"SELECT {builder} FROM big"))
    beside = [
        f"SELECT count(*), (SELECT {builder} FROM small) FROM big",
        f"SELECT count(*) OVER (), (SELECT {builder} FROM small) FROM big",
        f"SELECT sum(i), max(s), (SELECT {builder} FROM small) FROM big",
        f"SELECT (SELECT count(*) FROM big), (SELECT {builder} FROM small)",
    ]
    for sql in beside:
        assert plan_problem(con, sql) is None, sql
    array = "SELECT ARRAY(SELECT repeat('x', 1000) FROM big)"
    assert "could feed ARRAY(subquery)" in str(plan_problem(con, array))


def test_a_never_analyzed_table_is_counted_once(con: Any) -> None:
    counting = Counting(con)
    for agg in ("string_agg(s, ',')", "array_agg(s)", "json_agg(i)"):
        assert plan_problem(counting, f"SELECT {agg} FROM big") is None
    assert counting.counts == 1
    fits = "SELECT string_agg(repeat('x', 400), ',') FROM big"  # 100,000 x 416 bytes: 40 MB
    assert plan_problem(counting, fits) is None and counting.counts == 1
    con.execute(f"INSERT INTO big SELECT g, g::text FROM generate_series(1, {ROWS}) g")
    refused = plan_problem(counting, fits)
    assert counting.counts == 2  # its size changed: counted again, and the new rows count
    mb = 2 * ROWS * (400 + len(",") + 16) / 2**20  # both loads x (value, separator, overhead)
    assert refused is not None and f"up to {mb:,.0f} MB of rows could feed string_agg" in refused
