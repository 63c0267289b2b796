"""The copier: a task copy from a per-fact template holds what a full rebuild would."""

from __future__ import annotations

from pathlib import Path

import pytest

from workgym.envs.warehouse.investigate.frame import Frame
from workgym.envs.warehouse.investigate.plant import Copier, attach_snapshot, digest_of
from workgym.envs.warehouse.source.duck import connect


@pytest.fixture()
def snapshot(tmp_path: Path) -> Path:
    path = tmp_path / "snapshot.duckdb"
    con = connect(path)
    con.execute("CREATE TABLE sales (sold_at TIMESTAMP, shop INTEGER, amount DOUBLE)")
    con.execute(
        "INSERT INTO sales SELECT TIMESTAMP '2024-01-01' + INTERVAL (i) HOUR, i % 3, i * 1.5 "
        "FROM range(500) t(i)"
    )
    con.execute("CREATE TABLE shops AS SELECT i AS shop, 'shop ' || i AS name FROM range(3) t(i)")
    con.execute("COMMENT ON TABLE sales IS 'one row per sale'")
    con.execute("COMMENT ON COLUMN sales.amount IS 'in euros'")
    con.execute("COMMENT ON TABLE shops IS 'the shops'")
    con.execute("COMMENT ON COLUMN shops.name IS 'as signposted'")
    con.close()
    return path


FRAME = Frame(
    fact="sales",
    time_column="sold_at",
    time_is_timestamp=True,
    dims=["shop"],
    measures=["amount"],
    columns=["sold_at", "shop", "amount"],
)


def _comments(path: Path) -> list[tuple[object, ...]]:
    con = connect(path, read_only=True)
    try:
        tables = con.execute(
            "SELECT table_name, comment FROM duckdb_tables() ORDER BY table_name"
        ).fetchall()
        columns = con.execute(
            "SELECT table_name, column_name, comment FROM duckdb_columns() "
            "WHERE comment IS NOT NULL ORDER BY table_name, column_name"
        ).fetchall()
    finally:
        con.close()
    return [*tables, *columns]


def test_copies_keep_every_table_and_comment_and_their_digest_matches_the_file(
    snapshot: Path, tmp_path: Path
) -> None:
    con = connect()
    attach_snapshot(con, snapshot)
    folder = tmp_path / "plants"
    copier = Copier(con, folder)
    try:
        a = copier.write(folder / "a.duckdb", FRAME, "SELECT * FROM s.main.sales WHERE shop <> 1")
        b = copier.write(folder / "b.duckdb", FRAME, "SELECT * FROM s.main.sales")
    finally:
        copier.close()
        con.close()
    assert a != b  # the fact tables differ, so the digests do
    assert sorted(p.name for p in folder.iterdir()) == ["a.duckdb", "b.duckdb"]  # no template
    expected = [
        ("sales", "one row per sale"),
        ("shops", "the shops"),
        ("sales", "amount", "in euros"),
        ("shops", "name", "as signposted"),
    ]
    for name, digest in (("a", a), ("b", b)):
        path = folder / f"{name}.duckdb"
        assert _comments(path) == expected
        check = connect()
        check.execute(f"ATTACH '{path}' AS d (READ_ONLY)")
        assert digest_of(check, "d") == digest  # what verify_copies recomputes
        counts = check.execute(
            "SELECT (SELECT count(*) FROM d.sales), (SELECT count(*) FROM d.shops)"
        ).fetchone()
        first = check.execute(
            "SELECT min(sold_at) = (SELECT sold_at FROM d.sales LIMIT 1) FROM d.sales"
        ).fetchone()
        assert first == (True,)  # the fact table is written in time order
        check.close()
        assert counts == ((333 if name == "a" else 500), 3)


def test_a_failed_fact_select_leaves_no_file(snapshot: Path, tmp_path: Path) -> None:
    import duckdb

    con = connect()
    attach_snapshot(con, snapshot)
    folder = tmp_path / "plants"
    copier = Copier(con, folder)
    try:
        with pytest.raises(duckdb.Error):
            copier.write(folder / "bad.duckdb", FRAME, "SELECT * FROM s.main.nowhere")
        good = copier.write(folder / "good.duckdb", FRAME, "SELECT * FROM s.main.sales")
    finally:
        copier.close()
        con.close()
    assert good and not (folder / "bad.duckdb").exists()
    assert sorted(p.name for p in folder.iterdir()) == ["good.duckdb"]
