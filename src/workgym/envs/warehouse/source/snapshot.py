"""Copy the tables in scope into `snapshot.duckdb`, with a manifest and a content fingerprint.

Reference SQL, planting and episodes all run on the snapshot, never on the source, so the
snapshot must be reproducible and self-describing:

- Large tables are hash-sampled: a row is kept when `hash(seed, key columns)` (the declared primary
  key, else every column) falls below `row_cap / rows` of the hash range. The same rows are kept
  on every run, and a row's fate does not depend on the order the source returns rows in.
- The fingerprint holds, per table, the row count, a content checksum computed in SQL (sum of the
  row hashes, so order-independent) and the column list; two snapshots of an unchanged source
  have equal fingerprints.
- `snapshot.json` keeps what the DuckDB file cannot: source types, declared keys, comments the
  source had, sampling, and the columns and tables that were skipped and why.

`source_checksum(url)` hashes a source from outside (file bytes before it is opened, then table
checksums) so a test can prove that snapshotting never wrote to it.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import duckdb
from pydantic import BaseModel, Field

from workgym.envs.warehouse.source.contract import Source, SourceError, TableInfo
from workgym.envs.warehouse.source.duck import connect, qi, ql
from workgym.envs.warehouse.source.sources import open_source, source_files

SNAPSHOT_FILE = "snapshot.duckdb"
MANIFEST_FILE = "snapshot.json"
_HASH_SPACE = 2**64


class SnapshotColumn(BaseModel):
    name: str
    type: str
    family: str
    source_type: str
    comment: str | None = None


class SnapshotForeignKey(BaseModel):
    columns: list[str]
    ref_table: str
    ref_columns: list[str]


class SnapshotTable(BaseModel):
    """One copied table: its schema as declared by the source, and its fingerprint entry."""

    name: str
    kind: str = "table"
    comment: str | None = None
    columns: list[SnapshotColumn]
    primary_key: list[str] = Field(default_factory=list)
    unique: list[list[str]] = Field(default_factory=list)
    foreign_keys: list[SnapshotForeignKey] = Field(default_factory=list)
    source_rows: int
    rows: int
    sample_fraction: float | None = None
    checksum: str


class SnapshotManifest(BaseModel):
    """Everything about a snapshot that downstream steps need besides the data."""

    version: int = 1
    source: str  # URL with any password redacted
    seed: int = 0
    row_cap: int | None = None
    tables: list[SnapshotTable]
    issues: list[str] = Field(default_factory=list)

    def table(self, name: str) -> SnapshotTable:
        for t in self.tables:
            if t.name == name:
                return t
        raise KeyError(f"no table {name!r} in snapshot; have {[t.name for t in self.tables]}")

    def fingerprint(self) -> dict[str, dict[str, Any]]:
        """Per table: rows, checksum, columns ("name TYPE")."""
        return {
            t.name: {
                "rows": t.rows,
                "checksum": t.checksum,
                "columns": [f"{c.name} {c.type}" for c in t.columns],
            }
            for t in self.tables
        }

    def digest(self) -> str:
        """sha256 of the canonical fingerprint: names a snapshot's content in one string."""
        text = json.dumps(self.fingerprint(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()

    def save(self, path: str | Path) -> None:
        Path(path).write_text(self.model_dump_json(indent=2) + "\n")

    @classmethod
    def load(cls, path: str | Path) -> SnapshotManifest:
        return cls.model_validate_json(Path(path).read_text())


def table_checksum(
    con: duckdb.DuckDBPyConnection, relation: str, columns: Sequence[str]
) -> tuple[int, str]:
    """(row count, sum of row hashes as text) of a relation; independent of row order."""
    cols = ", ".join(qi(c) for c in columns)
    row = con.execute(f"SELECT count(*), coalesce(sum(hash({cols})), 0) FROM {relation}").fetchone()
    assert row is not None
    return int(row[0]), str(row[1])


def build_snapshot(
    url: str,
    out_dir: str | Path,
    *,
    tables: Sequence[str] | None = None,
    row_cap: int | None = None,
    seed: int = 0,
) -> SnapshotManifest:
    """Snapshot `url` into `out_dir/snapshot.duckdb` (+ `snapshot.json`); return the manifest."""
    if row_cap is not None and row_cap < 1:
        raise ValueError(f"row_cap must be a positive number of rows, got {row_cap}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    final, tmp = out / SNAPSHOT_FILE, out / (SNAPSHOT_FILE + ".tmp")
    if any(p.resolve() in (final.resolve(), tmp.resolve()) for p in source_files(url)):
        raise SourceError(f"{url} is the snapshot file in {out}; choose another output directory")
    for stale in (tmp, Path(str(tmp) + ".wal")):
        stale.unlink(missing_ok=True)
    try:
        with open_source(url, tables) as src:
            infos = src.tables()
            in_scope = {t.name: {c.name for c in t.columns} for t in infos}
            src.con.execute(f"ATTACH {ql(str(tmp))} AS snap")
            try:
                copied = [_copy(src, t, in_scope, row_cap, seed) for t in infos]
            finally:
                src.con.execute("DETACH snap")
            issues = [str(i) for i in src.issues]
        os.replace(tmp, final)
    finally:
        for stale in (tmp, Path(str(tmp) + ".wal")):
            stale.unlink(missing_ok=True)
    manifest = SnapshotManifest(
        source=src.url, seed=seed, row_cap=row_cap, tables=copied, issues=issues
    )
    manifest.save(out / MANIFEST_FILE)
    return manifest


def _copy(
    src: Source,
    info: TableInfo,
    in_scope: dict[str, set[str]],
    row_cap: int | None,
    seed: int,
) -> SnapshotTable:
    target = f"snap.main.{qi(info.name)}"
    select = src.select_sql(info.name)
    fraction: float | None = None
    if row_cap is not None and info.rows > row_cap:
        fraction = row_cap / info.rows
        keys = info.primary_key or tuple(c.name for c in info.columns)
        threshold = min(int(fraction * _HASH_SPACE), _HASH_SPACE - 1)
        hashed = ", ".join(qi(k) for k in keys)
        select = (
            f"SELECT * FROM ({select}) "
            f"WHERE hash({int(seed)}::BIGINT, {hashed}) < {threshold}::UBIGINT"
        )
    src.con.execute(f"CREATE TABLE {target} AS {select}")
    if info.comment:
        src.con.execute(f"COMMENT ON TABLE {target} IS {ql(info.comment)}")
    for c in info.columns:
        if c.comment:
            src.con.execute(f"COMMENT ON COLUMN {target}.{qi(c.name)} IS {ql(c.comment)}")
    rows, checksum = table_checksum(src.con, target, [c.name for c in info.columns])
    fks = [
        SnapshotForeignKey(
            columns=list(f.columns), ref_table=f.ref_table, ref_columns=list(f.ref_columns)
        )
        for f in info.foreign_keys
        if f.ref_table in in_scope and set(f.ref_columns) <= in_scope[f.ref_table]
    ]
    return SnapshotTable(
        name=info.name,
        kind=info.kind,
        comment=info.comment,
        columns=[
            SnapshotColumn(
                name=c.name,
                type=c.type,
                family=c.family,
                source_type=c.source_type,
                comment=c.comment,
            )
            for c in info.columns
        ],
        primary_key=list(info.primary_key),
        unique=[list(u) for u in info.unique],
        foreign_keys=fks,
        source_rows=info.rows,
        rows=rows,
        sample_fraction=fraction,
        checksum=checksum,
    )


def open_snapshot(out_dir: str | Path) -> duckdb.DuckDBPyConnection:
    """A read-only, UTC-pinned session on a snapshot directory's DuckDB file."""
    path = Path(out_dir) / SNAPSHOT_FILE
    if not path.exists():
        raise FileNotFoundError(f"no {SNAPSHOT_FILE} in {out_dir}; run build_snapshot first")
    return connect(path, read_only=True)


def source_checksum(url: str, tables: Sequence[str] | None = None) -> dict[str, Any]:
    """sha256 of a file source's bytes (taken before opening it) and per-table checksums."""
    files = {str(p): _sha256(p) for p in source_files(url)}
    with open_source(url, tables) as src:
        table_sums = {}
        for info in src.tables():
            rel = f"({src.select_sql(info.name)})"
            rows, checksum = table_checksum(src.con, rel, [c.name for c in info.columns])
            table_sums[info.name] = {"rows": rows, "checksum": checksum}
    return {"files": files, "tables": table_sums}


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
