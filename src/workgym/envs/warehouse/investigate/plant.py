"""Planted copies: one DuckDB file per investigation task, written with SQL only.

The copy is made inside one DuckDB session: the snapshot is ATTACHed read-only, the task's file
is ATTACHed, and every table is rebuilt with CREATE TABLE AS (the fact table from the planted
SELECT, in time order, so inserted rows sit among the originals). Column and table comments are
carried over. Unplanted tasks get a copy made the same way, so no file layout, row order or
fingerprint tells them apart: every copy also drops its own sliver of fact rows by a salted
hash (`Jitter`), which changes no metric beyond noise but makes each database's row count and
checksum unique.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from workgym.core.environment import DataCheck
from workgym.envs.warehouse.investigate.frame import Frame
from workgym.envs.warehouse.investigate.manifest import Jitter, Manifest
from workgym.envs.warehouse.investigate.mechanisms import HASH_SCALE
from workgym.envs.warehouse.source.duck import qi, ql
from workgym.envs.warehouse.source.snapshot import table_checksum

PLANTS_DIR = "plants"
SOURCE = "s"  # catalog name of the attached snapshot
JITTER_RATE = 0.005


def jittered(frame: Frame, jitter: Jitter) -> str:
    """The fact table minus the copy's sliver, as a parenthesised relation."""
    cols = ", ".join(f"j.{qi(c)}" for c in frame.columns)
    keep = round(jitter.rate * HASH_SCALE)
    return (
        f"(SELECT * FROM {SOURCE}.main.{qi(frame.fact)} AS j "
        f"WHERE (hash({int(jitter.salt)}::BIGINT, {cols}) % {HASH_SCALE}) >= {keep})"
    )


def attach_snapshot(con: Any, snapshot: Path) -> None:
    con.execute(f"ATTACH {ql(str(snapshot))} AS {SOURCE} (READ_ONLY)")
    con.execute(f"USE {SOURCE}")


def _tables(con: Any) -> list[tuple[str, str | None]]:
    return [
        (str(name), comment)
        for name, comment in con.execute(
            "SELECT table_name, comment FROM duckdb_tables() "
            f"WHERE database_name = {ql(SOURCE)} AND schema_name = 'main' ORDER BY table_name"
        ).fetchall()
    ]


def _column_comments(con: Any) -> list[tuple[str, str, str]]:
    return [
        (str(t), str(c), str(comment))
        for t, c, comment in con.execute(
            "SELECT table_name, column_name, comment FROM duckdb_columns() "
            f"WHERE database_name = {ql(SOURCE)} AND schema_name = 'main' "
            "AND comment IS NOT NULL AND comment <> '' ORDER BY table_name, column_index"
        ).fetchall()
    ]


def digest_of(con: Any, catalog: str) -> str:
    """sha256 over every table's row count and row-hash checksum (order-independent)."""
    found: dict[str, list[object]] = {}
    tables = con.execute(
        "SELECT table_name FROM duckdb_tables() "
        f"WHERE database_name = {ql(catalog)} AND schema_name = 'main' ORDER BY table_name"
    ).fetchall()
    for (name,) in tables:
        cols = [
            str(c)
            for (c,) in con.execute(
                "SELECT column_name FROM duckdb_columns() WHERE database_name = "
                f"{ql(catalog)} AND table_name = {ql(name)} ORDER BY column_index"
            ).fetchall()
        ]
        found[str(name)] = list(table_checksum(con, f"{catalog}.main.{qi(name)}", cols))
    text = json.dumps(found, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def write_copy(con: Any, path: Path, frame: Frame, fact_select: str) -> str:
    """Write `path`: every snapshot table, the fact table from `fact_select`, comments kept.
    Returns the copy's digest (recorded in the manifest, so a changed file is detectable)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    for stale in (tmp, Path(str(tmp) + ".wal"), path, Path(str(path) + ".wal")):
        stale.unlink(missing_ok=True)
    con.execute(f"ATTACH {ql(str(tmp))} AS d")
    con.execute("BEGIN TRANSACTION")  # one commit for the whole copy, not one per statement
    try:
        order = ", ".join(f"f.{qi(c)}" for c in frame.columns)
        for name, comment in _tables(con):
            target = f"d.main.{qi(name)}"
            if name == frame.fact:
                con.execute(
                    f"CREATE TABLE {target} AS SELECT * FROM ({fact_select}) AS f "
                    f"ORDER BY f.{qi(frame.time_column)}, hash({order})"
                )
            else:
                con.execute(f"CREATE TABLE {target} AS SELECT * FROM {SOURCE}.main.{qi(name)}")
            if comment:
                con.execute(f"COMMENT ON TABLE {target} IS {ql(comment)}")
        for table, column, comment in _column_comments(con):
            con.execute(f"COMMENT ON COLUMN d.main.{qi(table)}.{qi(column)} IS {ql(comment)}")
    except BaseException:
        con.execute("ROLLBACK")
        con.execute("DETACH d")
        raise
    con.execute("COMMIT")
    try:
        digest = digest_of(con, "d")
    finally:
        con.execute("DETACH d")
    os.replace(tmp, path)
    return digest


def clear_plants(out_dir: Path) -> None:
    """Remove planted copies left by an earlier generation into the same directory."""
    folder = out_dir / PLANTS_DIR
    if not folder.is_dir():
        return
    for item in folder.iterdir():
        if item.suffix in (".duckdb", ".tmp", ".wal", ".json") or item.name.endswith(".tmp.wal"):
            item.unlink()


def verify_copies(env_dir: Path, manifests: list[Manifest]) -> DataCheck:
    """Recompute each task database's digest and compare it with its manifest's: a copy edited,
    swapped or lost after generation would change what the conclusions are scored against."""
    import duckdb

    problems: list[str] = []
    paths = {m.database: m.digest for m in manifests}
    for relative, expected in sorted(paths.items()):
        path = env_dir / relative
        if not path.exists():
            problems.append(f"{relative}: missing (regenerate the environment)")
            continue
        con = duckdb.connect()
        try:
            con.execute(f"ATTACH {ql(str(path))} AS d (READ_ONLY)")
            found = digest_of(con, "d")
        except duckdb.Error as exc:
            problems.append(f"{relative}: unreadable ({type(exc).__name__}: {exc})")
            continue
        finally:
            con.close()
        if expected and found != expected:
            problems.append(
                f"{relative}: changed since generation (digest {found[:12]}, "
                f"manifest {expected[:12]}); regenerate the environment"
            )
    return DataCheck(checked=len(paths), problems=problems)
