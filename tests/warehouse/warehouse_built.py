"""A small DuckDB database from SQL, snapshotted and profiled, and the context families draw in:
what the known-answer tests of the blind rounds (decisions 0184, 0196, 0197) each start from."""

from __future__ import annotations

import random
from pathlib import Path

import duckdb

from workgym.envs.warehouse.generate.families import Context
from workgym.envs.warehouse.generate.families.validate import Runner
from workgym.envs.warehouse.generate.phrasing import Lexicon
from workgym.envs.warehouse.schema.card import SchemaCard
from workgym.envs.warehouse.schema.profile import profile_snapshot
from workgym.envs.warehouse.source.snapshot import build_snapshot


def built(root: Path, name: str, sql: str) -> tuple[SchemaCard, Path]:
    """The card and the snapshot file of a database `sql` builds under `root`."""
    con = duckdb.connect(str(root / f"{name}.duckdb"))
    con.execute(sql)
    con.close()
    build_snapshot(f"duckdb:///{root / f'{name}.duckdb'}", root / "snap")
    return profile_snapshot(root / "snap"), root / "snap" / "snapshot.duckdb"


def family_context(card: SchemaCard, db: Path) -> Context:
    """What a family sees, with a fixed seed and read-only lookups on `db`."""
    return Context(card=card, lexicon=Lexicon(card), rng=random.Random(0), lookup=Runner(db).rows)
