"""Snapshots: reproducible copies with fingerprints; the source is never written."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from workgym.envs.warehouse.source.snapshot import (
    SnapshotManifest,
    build_snapshot,
    open_snapshot,
    source_checksum,
)

TPCH = "builtin:tpch?sf=0.01"


def test_snapshot_is_deterministic(tmp_path: Path) -> None:
    a = build_snapshot(TPCH, tmp_path / "a")
    b = build_snapshot(TPCH, tmp_path / "b")
    assert a.fingerprint() == b.fingerprint()
    assert a.digest() == b.digest()
    assert a == SnapshotManifest.load(tmp_path / "a" / "snapshot.json")
    lineitem = a.fingerprint()["lineitem"]
    assert lineitem["rows"] == 60175 and lineitem["columns"][0] == "l_orderkey BIGINT"


def test_hash_sampling_is_deterministic_and_seeded(tmp_path: Path) -> None:
    kw = {"tables": ["lineitem", "orders", "nation"], "row_cap": 10_000}
    a = build_snapshot(TPCH, tmp_path / "a", **kw)  # type: ignore[arg-type]
    b = build_snapshot(TPCH, tmp_path / "b", **kw)  # type: ignore[arg-type]
    c = build_snapshot(TPCH, tmp_path / "c", seed=7, **kw)  # type: ignore[arg-type]
    assert a.fingerprint() == b.fingerprint()
    line = a.table("lineitem")
    assert line.source_rows == 60175 and line.sample_fraction == pytest.approx(10_000 / 60175)
    assert 9_000 < line.rows < 11_000
    assert a.table("nation").sample_fraction is None and a.table("nation").rows == 25
    assert c.table("lineitem").checksum != line.checksum  # another seed keeps other rows
    assert [t.name for t in a.tables] == ["lineitem", "nation", "orders"]


def test_snapshot_pins_utc_and_keeps_comments(duck_file: Path, tmp_path: Path) -> None:
    manifest = build_snapshot(f"duckdb://{duck_file}", tmp_path)
    assert any("customers.tags" in i for i in manifest.issues)
    orders = manifest.table("orders")
    assert orders.foreign_keys[0].ref_table == "customers"
    assert {c.name: c.source_type for c in orders.columns}["placed"] == "TIMESTAMP WITH TIME ZONE"
    con = open_snapshot(tmp_path)
    try:
        assert con.execute("SELECT current_setting('TimeZone')").fetchone() == ("UTC",)
        comment = con.execute(
            "SELECT comment FROM duckdb_columns() "
            "WHERE table_name = 'orders' AND column_name = 'amount'"
        ).fetchone()
        assert comment == ("Order amount in USD",)
        first = con.execute("SELECT CAST(placed AS VARCHAR) FROM orders ORDER BY order_id LIMIT 1")
        assert first.fetchone() == ("2024-03-10 13:00:00",)
    finally:
        con.close()


@pytest.mark.parametrize("kind", ["duckdb", "sqlite"])
def test_source_unchanged_after_snapshot(
    kind: str, duck_file: Path, sqlite_file: Path, tmp_path: Path
) -> None:
    path = duck_file if kind == "duckdb" else sqlite_file
    url = f"{kind}://{path}"
    raw_before = hashlib.sha256(path.read_bytes()).hexdigest()
    mtime_before = path.stat().st_mtime_ns
    before = source_checksum(url)
    build_snapshot(url, tmp_path / "snap", row_cap=50)
    after = source_checksum(url)
    assert before == after
    assert before["files"][str(path)] == raw_before
    assert hashlib.sha256(path.read_bytes()).hexdigest() == raw_before
    assert path.stat().st_mtime_ns == mtime_before
    expected = {"customers", "orders"} if kind == "duckdb" else {"sales", "stores"}
    assert expected <= set(before["tables"])
