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
import shutil
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


def _checksum(con: Any, catalog: str, table: str) -> list[object]:
    """[row count, row-hash checksum] of one table of `catalog`."""
    cols = [
        str(c)
        for (c,) in con.execute(
            "SELECT column_name FROM duckdb_columns() WHERE database_name = "
            f"{ql(catalog)} AND table_name = {ql(table)} ORDER BY column_index"
        ).fetchall()
    ]
    return list(table_checksum(con, f"{catalog}.main.{qi(table)}", cols))


def _checksums(con: Any, catalog: str) -> dict[str, list[object]]:
    tables = con.execute(
        "SELECT table_name FROM duckdb_tables() "
        f"WHERE database_name = {ql(catalog)} AND schema_name = 'main' ORDER BY table_name"
    ).fetchall()
    return {str(name): _checksum(con, catalog, str(name)) for (name,) in tables}


def _digest(found: dict[str, list[object]]) -> str:
    text = json.dumps(found, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def digest_of(con: Any, catalog: str) -> str:
    """sha256 over every table's row count and row-hash checksum (order-independent)."""
    return _digest(_checksums(con, catalog))


def _unlink_db(path: Path) -> None:
    path.unlink(missing_ok=True)
    Path(str(path) + ".wal").unlink(missing_ok=True)


class Copier:
    """Writes task copies of the snapshot attached to `con`, each with its own fact table.

    Every table but the fact is the same in every copy of a frame, and on a large warehouse they
    are most of the bytes (TPC-H's orders, partsupp, customer): rebuilding them per task spent
    most of generation's time. So each fact table gets one template file holding the other
    tables and their comments, written and checksummed once; a copy is the template's bytes
    plus the fact table, and its digest reuses the template's checksums. The file's contents
    are what a full rebuild writes, so `verify_copies` recomputes the same digest.
    """

    def __init__(self, con: Any, folder: Path) -> None:
        self.con = con
        self.folder = folder
        self.tables = _tables(con)
        self.column_comments = _column_comments(con)
        self._templates: dict[str, tuple[Path, dict[str, list[object]]]] = {}

    def _fill(self, catalog: str, tables: dict[str, str]) -> None:
        """Create each table (name -> SELECT) in `catalog` with the snapshot's comments on it,
        in one transaction (one commit for the file, not one per statement)."""
        con = self.con
        con.execute("BEGIN TRANSACTION")
        try:
            for name, comment in self.tables:
                if name not in tables:
                    continue
                target = f"{catalog}.main.{qi(name)}"
                con.execute(f"CREATE TABLE {target} AS {tables[name]}")
                if comment:
                    con.execute(f"COMMENT ON TABLE {target} IS {ql(comment)}")
            for table, column, comment in self.column_comments:
                if table in tables:
                    target = f"{catalog}.main.{qi(table)}.{qi(column)}"
                    con.execute(f"COMMENT ON COLUMN {target} IS {ql(comment)}")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        con.execute("COMMIT")

    def _template(self, fact: str) -> tuple[Path, dict[str, list[object]]]:
        if fact not in self._templates:
            self.folder.mkdir(parents=True, exist_ok=True)
            path = self.folder / f"_template{len(self._templates)}.tmp"  # clear_plants removes it
            _unlink_db(path)
            others = {
                n: f"SELECT * FROM {SOURCE}.main.{qi(n)}" for n, _ in self.tables if n != fact
            }
            self.con.execute(f"ATTACH {ql(str(path))} AS t")
            try:
                self._fill("t", others)
                checksums = _checksums(self.con, "t")
            finally:
                self.con.execute("DETACH t")
            self._templates[fact] = (path, checksums)
        return self._templates[fact]

    def write(self, path: Path, frame: Frame, fact_select: str) -> str:
        """Write `path`: the snapshot with its fact table from `fact_select`, comments kept.
        Returns the copy's digest (recorded in the manifest, so a changed file is detectable)."""
        template, checksums = self._template(frame.fact)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        _unlink_db(tmp)
        _unlink_db(path)
        shutil.copyfile(template, tmp)
        order = ", ".join(f"f.{qi(c)}" for c in frame.columns)
        fact = (
            f"SELECT * FROM ({fact_select}) AS f ORDER BY f.{qi(frame.time_column)}, hash({order})"
        )
        self.con.execute(f"ATTACH {ql(str(tmp))} AS d")
        try:
            self._fill("d", {frame.fact: fact})
            found = {**checksums, frame.fact: _checksum(self.con, "d", frame.fact)}
        except BaseException:
            self.con.execute("DETACH d")
            _unlink_db(tmp)
            raise
        self.con.execute("DETACH d")
        os.replace(tmp, path)
        return _digest(found)

    def close(self) -> None:
        """Remove the templates (they are not task data)."""
        for path, _ in self._templates.values():
            _unlink_db(path)
        self._templates.clear()


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
