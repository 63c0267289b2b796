"""Warm sessions keep a file's DuckDB instance loaded for the block and never serve a stale or
unpinned one: a replaced file is reopened, the caps hold, nothing stays open afterwards."""

from __future__ import annotations

import os
from pathlib import Path

import duckdb

from workgym.verifiers.duckdb_warm import held_files, warm_sessions
from workgym.verifiers.sql_exec import execute_sql


def make_db(path: Path, value: int, rows: int = 10) -> Path:
    con = duckdb.connect(str(path))
    con.execute(f"CREATE TABLE t AS SELECT {value} AS v FROM range({rows})")
    con.close()
    return path


def first(path: Path) -> object:
    result = execute_sql("SELECT max(v) FROM t", path, engine="duckdb")
    assert result.ok, result.error
    return result.rows[0][0]


def test_a_file_stays_loaded_inside_the_block_and_is_released_after(tmp_path: Path) -> None:
    db = make_db(tmp_path / "a.duckdb", 1)
    with warm_sessions():
        assert first(db) == 1 and held_files() == 1
        assert first(db) == 1 and held_files() == 1  # the same instance, not a second one
        with warm_sessions():  # nested blocks share the pool
            assert first(db) == 1 and held_files() == 1
        assert held_files() == 1
    assert held_files() == 0
    con = duckdb.connect(str(db))  # no lock left: this process may write it again
    con.execute("INSERT INTO t VALUES (5)")
    con.close()
    assert first(db) == 5


def test_a_replaced_file_is_reopened_not_served_from_the_old_instance(tmp_path: Path) -> None:
    db = make_db(tmp_path / "a.duckdb", 1)
    with warm_sessions():
        assert first(db) == 1
        os.replace(make_db(tmp_path / "b.duckdb", 2), db)
        assert first(db) == 2 and held_files() == 1


def test_warm_sessions_stay_pinned_and_read_only(tmp_path: Path) -> None:
    db = make_db(tmp_path / "a.duckdb", 1)
    (tmp_path / "secret.csv").write_text("x\n1\n")
    with warm_sessions():
        assert first(db) == 1
        assert execute_sql("SELECT current_setting('TimeZone')", db).rows == [("UTC",)]
        for sql in (
            f"SELECT * FROM read_csv('{tmp_path / 'secret.csv'}')",
            "SET TimeZone = 'America/New_York'",
            "CREATE TABLE u AS SELECT 1",
        ):
            assert not execute_sql(sql, db).ok, sql


def test_the_pool_holds_at_most_its_files_and_bytes(tmp_path: Path) -> None:
    dbs = [make_db(tmp_path / f"{i}.duckdb", i) for i in range(3)]
    with warm_sessions(limit=2):
        assert [first(db) for db in dbs] == [0, 1, 2] and held_files() == 2
    with warm_sessions(max_bytes=dbs[0].stat().st_size - 1):  # too large to hold: still served
        assert first(dbs[0]) == 0 and held_files() == 0
    missing = tmp_path / "missing.duckdb"
    with warm_sessions():
        assert execute_sql("SELECT 1", missing).status == "error" and held_files() == 0
