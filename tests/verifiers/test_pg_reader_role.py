"""PostgreSQL: agent and verifier SQL run as a SELECT-only role (issue 18, item 3).

`query_to_xml('SELECT pg_terminate_backend(...)')` hid the kill in a string past the parser guard
and ended other sessions of the same role. Now the guard refuses it by name, the role cannot
execute it (pg_reader.sql, applied by `.ci/run`), and a role that could is refused outright.
"""

from __future__ import annotations

import os

import pytest
import sqlv_fixtures as fx

from workgym.verifiers.pg_reader import role_problems
from workgym.verifiers.sql_exec import execute_sql
from workgym.verifiers.sql_guard import check_read_only

pg_reader, flights_db = fx.pg_reader, fx.flights_db
KILL = (
    "SELECT query_to_xml('SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
    " WHERE usename = current_user AND pid <> pg_backend_pid()', true, false, '')"
)
HIDDEN = [
    KILL,
    "SELECT * FROM ts_stat('SELECT pg_terminate_backend(1)')",
    "SELECT set_config('statement_timeout', '0', false)",
    "SELECT pg_cancel_backend(1)",
]


@pytest.mark.parametrize("sql", HIDDEN)
def test_the_guard_refuses_string_executing_and_signal_functions(sql: str) -> None:
    verdict = check_read_only(sql, "postgres")
    assert not verdict.ok and verdict.kind == "forbidden"


@pytest.mark.parametrize("sql", HIDDEN)
def test_the_reader_role_alone_cannot_reach_them(pg_reader: str, sql: str) -> None:
    psycopg = pytest.importorskip("psycopg")
    with psycopg.connect(pg_reader, autocommit=True) as victim:
        result = execute_sql(sql, pg_reader, engine="postgres", guard=False)
        assert result.status == "forbidden" and "permission denied" in (result.error or "")
        assert victim.execute("SELECT 1").fetchone() == (1,)  # the other session lives


def test_the_reader_role_has_no_problems(pg_reader: str) -> None:
    psycopg = pytest.importorskip("psycopg")
    with psycopg.connect(pg_reader) as con:
        assert role_problems(con) == []
    assert execute_sql("SELECT count(*) FROM flights", pg_reader, engine="postgres").ok


def test_a_role_that_can_write_is_refused_before_any_query(pg_reader: str) -> None:
    admin = os.environ["WORKGYM_TEST_PG"]  # pg_reader skipped already when it is not set
    result = execute_sql("SELECT 1", admin, engine="postgres")
    assert result.status == "forbidden"
    assert "refusing to run agent SQL as this PostgreSQL role" in (result.error or "")
    assert "reader_role_sql" in (result.error or "")
