"""The agent's tools: list/describe, run_sql's caps and budget, and read-only on three engines."""

from __future__ import annotations

import json
import os
import sqlite3
import uuid
from pathlib import Path

import pytest

from workgym.core.errors import ToolError
from workgym.envs.warehouse.runtime.tools import (
    OUTPUT_CHARS,
    WarehouseState,
    describe,
    fit_rows,
    query,
)
from workgym.envs.warehouse.schema.card import SchemaCard
from workgym.verifiers.pg_reader import reader_role_sql

# Each must be refused by run_sql (and by the SQL verifier, see test_warehouse_env).
FORBIDDEN = {
    "delete": "DELETE FROM {t}",
    "update": "UPDATE {t} SET {c} = NULL",
    "drop": "DROP TABLE {t}",
    "delete_in_cte": "WITH d AS (DELETE FROM {t} RETURNING *) SELECT * FROM {t}",
    "insert": "INSERT INTO {t} SELECT * FROM {t}",
    "attach": "ATTACH ':memory:' AS other",
    "copy": "COPY (SELECT 1) TO '/tmp/workgym-probe.csv'",
    "pragma": "PRAGMA table_info('{t}')",
    "file_read": "SELECT * FROM read_csv_auto('/etc/passwd')",
    "file_read_text": "SELECT * FROM read_text('/etc/hostname')",
    "two_statements": "SELECT 1; SELECT 2",
    "select_then_delete": "SELECT * FROM {t}; DELETE FROM {t}",
}


def state_for(nyc_dir: Path, nyc_card: SchemaCard, **kw: object) -> WarehouseState:
    return WarehouseState(database=nyc_dir / "snapshot.duckdb", card=nyc_card, **kw)  # type: ignore[arg-type]


def test_run_sql_returns_rows_and_caps(nyc_dir: Path, nyc_card: SchemaCard) -> None:
    state = state_for(nyc_dir, nyc_card)
    out = query(state, "SELECT carrier, count(*) AS n FROM flights GROUP BY 1 ORDER BY 2 DESC", 3)
    assert out["columns"] == ["carrier", "n"] and out["rows"][0] == ["UA", 58665]
    assert out["row_count"] == 3 and out["truncated"] is True and out["elapsed_s"] >= 0
    wide = query(state, "SELECT * FROM flights", 200)
    assert wide["truncated"] and len(json.dumps(wide)) < OUTPUT_CHARS + 400
    assert query(state, "SELECT time_hour FROM flights LIMIT 1", 1)["rows"] == [
        ["2013-01-01 10:00:00"]
    ]
    with pytest.raises(ToolError, match="max_rows must be between 1 and 200"):
        query(state, "SELECT 1", 0)


def test_run_sql_errors_are_text_and_the_budget_is_per_episode(
    nyc_dir: Path, nyc_card: SchemaCard
) -> None:
    state = state_for(nyc_dir, nyc_card, query_budget=2)
    with pytest.raises(ToolError, match=r"error: .*no_such_table"):
        query(state, "SELECT * FROM no_such_table")
    query(state, "SELECT 1")
    with pytest.raises(ToolError, match="query budget spent \\(2 queries"):
        query(state, "SELECT 1")
    fresh = state_for(nyc_dir, nyc_card, query_budget=2)
    assert query(fresh, "SELECT 1")["queries_left"] == 1


def test_fit_rows_keeps_whole_rows() -> None:
    rows = [[i, "x" * 50] for i in range(200)]
    kept, cut = fit_rows(["i", "s"], rows, budget=1000)
    assert cut and 0 < len(kept) < 20 and kept == rows[: len(kept)]
    assert fit_rows(["i"], [[1]], budget=1000) == ([[1]], False)


def test_describe_table_shows_inferred_parts_unless_hard(
    nyc_dir: Path, nyc_card: SchemaCard
) -> None:
    flights = nyc_card.table("flights")
    normal = describe(state_for(nyc_dir, nyc_card), flights)
    refs = {f["references"]: f for f in normal["foreign_keys"]}
    assert refs["planes(tailnum)"]["source"] == "inferred"
    assert 0.8 <= refs["planes(tailnum)"]["confidence"] < 0.85
    assert len(normal["sample_rows"]) == 5 and len(normal["sample_rows"][0]) == 19
    dep = next(c for c in normal["columns"] if c["name"] == "dep_delay")
    assert dep["null_rate"] == pytest.approx(8255 / 336776, abs=1e-4) and dep["role"] == "measure"
    weather = describe(state_for(nyc_dir, nyc_card), nyc_card.table("weather"))
    assert any("almost unique" in k.get("note", "") for k in weather["keys"])
    hard = describe(state_for(nyc_dir, nyc_card, hard=True), flights)
    assert hard["foreign_keys"] == [] and hard["keys"] == []
    assert "role" not in hard and all("role" not in c for c in hard["columns"])
    assert len(hard["sample_rows"]) == 5


@pytest.mark.parametrize("name", sorted(FORBIDDEN))
def test_run_sql_refuses_writes_and_side_doors_on_duckdb(
    name: str, nyc_dir: Path, nyc_card: SchemaCard
) -> None:
    state = state_for(nyc_dir, nyc_card)
    with pytest.raises(ToolError, match=r"forbidden|parse_error"):
        query(state, FORBIDDEN[name].format(t="airlines", c="name"))
    assert query(state, "SELECT count(*) FROM airlines")["rows"] == [[16]]


def test_run_sql_refuses_on_sqlite(tmp_path: Path, nyc_card: SchemaCard) -> None:
    path = tmp_path / "ro.db"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE airlines (carrier TEXT PRIMARY KEY, name TEXT)")
    db.execute("INSERT INTO airlines VALUES ('UA', 'United Air Lines Inc.')")
    db.commit()
    db.close()
    before = path.read_bytes()
    state = WarehouseState(database=path, card=nyc_card, engine="sqlite")
    assert query(state, "SELECT name FROM airlines")["rows"] == [["United Air Lines Inc."]]
    for name, sql in FORBIDDEN.items():
        with pytest.raises(ToolError, match=r"forbidden|parse_error"):
            query(state, sql.format(t="airlines", c="name"))
        assert path.read_bytes() == before, name


def test_run_sql_refuses_on_postgres(nyc_card: SchemaCard) -> None:
    url = os.environ.get("WORKGYM_TEST_PG", "")
    psycopg = pytest.importorskip("psycopg")
    if not url:
        pytest.skip("set WORKGYM_TEST_PG=postgresql://user:pass@host:port/db to run")
    try:
        con = psycopg.connect(url, autocommit=True, connect_timeout=3)
    except psycopg.Error as exc:
        pytest.skip(f"no PostgreSQL at WORKGYM_TEST_PG ({' '.join(str(exc).split())})")
    tag = uuid.uuid4().hex[:8]
    schema, role, password = f"wg_tools_{tag}", f"wg_tools_reader_{tag}", uuid.uuid4().hex
    con.execute(f"CREATE SCHEMA {schema}")
    con.execute(f"CREATE TABLE {schema}.wg_tools_airlines (carrier text, name text)")
    con.execute(f"INSERT INTO {schema}.wg_tools_airlines VALUES ('UA', 'United')")
    for statement in reader_role_sql(role, password, schema):
        con.execute(statement)
    info = con.info
    reader = f"postgresql://{role}:{password}@{info.host}:{info.port}/{info.dbname}"
    try:
        state = WarehouseState(database=reader, card=nyc_card, engine="postgres")
        assert query(state, "SELECT count(*) FROM wg_tools_airlines")["rows"] == [[1]]
        for name, sql in FORBIDDEN.items():
            with pytest.raises(ToolError, match=r"forbidden|parse_error"):
                query(state, sql.format(t="wg_tools_airlines", c="name"))
            rows = con.execute(f"SELECT count(*) FROM {schema}.wg_tools_airlines").fetchone()
            assert rows == (1,), name
        admin = WarehouseState(database=url, card=nyc_card, engine="postgres")
        with pytest.raises(ToolError, match="SELECT-only role"):
            query(admin, "SELECT 1")
    finally:
        con.execute(f"DROP SCHEMA {schema} CASCADE")
        con.execute(f"DROP ROLE {role}")
        con.close()
