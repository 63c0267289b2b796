"""An anti-join gold whose fuzzed copies keep the real data's verdicts (issue 40, decision 0162).

On TPC-DS, `workgym check` failed one probe cell: `sql-in-gold-ids` (the gold's filter replaced
by `WHERE key IN (the real answer's keys)`) passed the suite of an F6 task, "households with
buying potential 0-500 and no customer with salutation 'Sir' and preferred flag 'Y'". Such
customers are rare, and every copy either lacked them or kept them next to the households they
exclude in the real data, so on every copy the gold and the pasted keys agreed. This fixture
has the same shape: 20 such customers, each attached to a 0-500 household, and other columns
with NULLs (so the `nulls` copy competes for a place in the suite). On main before the fix,
seeds 1 and 3 built suites the pasted keys passed.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from workgym.verifiers.sql import SqlAnswerSpec
from workgym.verifiers.sql_exec import execute_sql
from workgym.verifiers.sql_fuzz import build_suite, distinguishes
from workgym.verifiers.sql_neighbours import pasted_keys

HOUSEHOLDS_SQL = """
CREATE TABLE households AS SELECT i AS hh_id,
  (['0-500', '501-1000', '1001-5000', '5001-10000', '>10000', 'Unknown'])[1 + i % 6] AS potential,
  i % 7 AS dep_count FROM range(1, 601) t(i);
CREATE TABLE customers AS SELECT i AS c_id,
  CASE WHEN i % 97 = 0 THEN 6 * (i // 97) WHEN i % 29 = 5 THEN NULL
       ELSE 1 + (i * 7919) % 600 END AS hh_id,
  CASE WHEN i % 97 = 0 THEN 'Sir' WHEN i % 37 = 3 THEN NULL
       ELSE (['Mr.', 'Mrs.', 'Ms.', 'Dr.'])[1 + i % 4] END AS salutation,
  CASE WHEN i % 97 = 0 THEN 'Y' ELSE 'N' END AS preferred
  FROM range(1, 2001) t(i);
"""
GOLD = (
    "SELECT r.hh_id FROM households AS r WHERE NOT EXISTS (SELECT 1 FROM customers AS t "
    "WHERE t.hh_id = r.hh_id AND t.salutation = 'Sir' AND t.preferred = 'Y') "
    "AND r.potential = '0-500' ORDER BY r.hh_id"
)
ORDERED = SqlAnswerSpec(ordered=True)


@pytest.fixture(scope="module")
def households_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("antijoin") / "households.duckdb"
    con = duckdb.connect(str(path))
    con.execute(HOUSEHOLDS_SQL)
    con.close()
    return path


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_pasted_answer_keys_fail_on_the_suite(
    households_db: Path, tmp_path: Path, seed: int
) -> None:
    real = execute_sql(GOLD, households_db, timeout_s=30, max_rows=10_000)
    assert real.ok and 0 < len(real.rows) < 100  # most 0-500 households qualify, not all
    keys = ", ".join(str(r[0]) for r in real.rows)
    pasted = f"SELECT r.hh_id FROM households AS r WHERE r.hh_id IN ({keys}) ORDER BY r.hh_id"
    suite = build_suite(households_db, GOLD, cache_dir=tmp_path, seed=seed, spec=ORDERED)
    assert distinguishes(GOLD, pasted, suite.databases, ORDERED), suite.strategies
    index = [nb.kind for nb in suite.neighbours].index("pasted_keys")
    assert suite.caught[index] and suite.fallback is None


def test_pasted_keys_neighbour_replaces_only_the_filter() -> None:
    nb = pasted_keys(GOLD, [12, 6, None, 18])
    assert nb is not None and nb.kind == "pasted_keys"
    assert "WHERE r.hh_id IN (6, 12, 18) ORDER BY r.hh_id" in nb.sql
    assert "EXISTS" not in nb.sql
    assert pasted_keys("SELECT count(*) FROM households", [600]) is None  # no filter
    assert pasted_keys(GOLD, []) is None  # nothing to paste
