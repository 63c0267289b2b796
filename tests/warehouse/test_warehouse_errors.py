"""Bad input gives one line that says what is wrong and what to do."""

from __future__ import annotations

import sys
from pathlib import Path

import duckdb
import pytest

from workgym.envs.warehouse.source.snapshot import build_snapshot
from workgym.envs.warehouse.source.sources import SourceError, open_source


def _error(url: str, tables: list[str] | None = None) -> str:
    with pytest.raises(SourceError) as info:
        open_source(url, tables).tables()
    message = str(info.value)
    assert "\n" not in message
    return message


def test_unknown_scheme_lists_the_url_forms() -> None:
    for url in ("mysql://u@h/db", "/data/shop.duckdb", "builtin:northwind"):
        message = _error(url)
        assert "builtin:nycflights13" in message and "tpch" in message


def test_missing_file(tmp_path: Path) -> None:
    for scheme in ("duckdb", "sqlite"):
        message = _error(f"{scheme}://{tmp_path}/nope.db")
        assert message.startswith(f"no such file: {tmp_path}/nope.db")
        assert "check the path" in message
    assert "three slashes" in _error("duckdb://")


def test_file_of_the_wrong_kind(tmp_path: Path, sqlite_file: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("hello\n" * 100)
    assert "as a DuckDB database" in _error(f"duckdb://{text}")
    assert "as a DuckDB database" in _error(f"duckdb://{sqlite_file}")
    assert "check that it is a SQLite database file" in _error(f"sqlite://{text}")
    assert "is not a file" in _error(f"duckdb://{tmp_path}")


def test_empty_schema_and_empty_tables(tmp_path: Path, duck_file: Path) -> None:
    empty = tmp_path / "empty.duckdb"
    duckdb.connect(str(empty)).close()
    assert "has no tables" in _error(f"duckdb://{empty}")
    assert "?schema=NAME" in _error(f"duckdb://{duck_file}?schema=nope")
    hollow = tmp_path / "hollow.duckdb"
    con = duckdb.connect(str(hollow))
    con.execute("CREATE TABLE t (x INTEGER)")
    con.close()
    message = _error(f"duckdb://{hollow}")
    assert "no usable tables (t: skipped table: it has no rows)" in message


def test_unknown_table_in_allowlist(duck_file: Path) -> None:
    message = _error(f"duckdb://{duck_file}", ["orders", "invoices"])
    assert "['invoices'] not found" in message and "'orders'" in message


def test_snapshot_refuses_to_overwrite_its_source(tmp_path: Path) -> None:
    build_snapshot("builtin:tpch?sf=0.01", tmp_path, tables=["region"])
    with pytest.raises(SourceError, match="choose another output directory"):
        build_snapshot(f"duckdb://{tmp_path}/snapshot.duckdb", tmp_path)
    assert (tmp_path / "snapshot.duckdb").exists()


def test_bad_tpch_scale_factor() -> None:
    assert "use builtin:tpch?sf=0.1" in _error("builtin:tpch?sf=big")
    assert "use builtin:tpch?sf=0.1" in _error("builtin:tpch?sf=0")


def test_postgres_unreachable_host() -> None:
    pytest.importorskip("psycopg")
    message = _error("postgresql://someone:secret@127.0.0.1:1/shop")
    assert message.startswith("cannot reach PostgreSQL at postgresql://127.0.0.1:1/shop")
    assert "start the server" in message and "secret" not in message


def test_postgres_without_psycopg(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "psycopg", None)
    assert "pip install 'workgym[postgres]'" in _error("postgresql://u@127.0.0.1:1/db")
