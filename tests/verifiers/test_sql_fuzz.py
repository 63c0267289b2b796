"""The test suite of fuzzed databases separates gold queries from their neighbours on a small
nycflights-like warehouse, while correct rewrites of the gold still pass."""

from __future__ import annotations

import time
from pathlib import Path

import duckdb
import pytest
import sqlv_fixtures as fx

from workgym.verifiers.sql import GoldCache, SqlAnswerSpec, verify_sql
from workgym.verifiers.sql_exec import execute_sql, hold_open
from workgym.verifiers.sql_fuzz import FuzzSuite, build_suite, distinguishes, suite_report
from workgym.verifiers.sql_fuzz_variants import COPY_BLOCK_SIZE
from workgym.verifiers.sql_neighbours import neighbours

flights_db = fx.flights_db
UNORDERED, ORDERED = SqlAnswerSpec(), SqlAnswerSpec(ordered=True)

# Realistic gold queries, each with correct rewrites that must pass (FN guard).
CASES = {
    "filter": (
        "SELECT count(*) FROM flights WHERE dep_delay > 60 AND origin = 'JFK'",
        UNORDERED,
        [
            "SELECT count(1) AS n FROM flights WHERE NOT dep_delay <= 60 AND 'JFK' = origin",
            "WITH j AS (SELECT * FROM flights WHERE origin IN ('JFK'))"
            " SELECT count(dep_delay) FROM j WHERE dep_delay > 60",
        ],
    ),
    "topk": (
        "SELECT carrier, count(*) AS n FROM flights WHERE month = 7"
        " GROUP BY carrier ORDER BY n DESC, carrier LIMIT 3",
        ORDERED,
        [
            "SELECT count(*) AS flights, carrier FROM flights WHERE month IN (7)"
            " GROUP BY 2 ORDER BY 1 DESC, 2 LIMIT 3",
        ],
    ),
    "join": (
        "SELECT a.name, avg(f.arr_delay) AS d FROM flights f JOIN airlines a"
        " ON f.carrier = a.carrier WHERE f.distance >= 1000 GROUP BY a.name",
        UNORDERED,
        [
            "SELECT name, AVG(arr_delay) FROM airlines JOIN flights USING (carrier)"
            " WHERE distance > 999 GROUP BY name",
            "SELECT a.name, sum(f.arr_delay) / count(f.arr_delay) FROM airlines a, flights f"
            " WHERE a.carrier = f.carrier AND f.distance >= 1000 GROUP BY 1",
        ],
    ),
    "anti_join": (
        "SELECT f.dest, count(*) AS n FROM flights f LEFT JOIN airports p ON f.dest = p.faa"
        " WHERE p.faa IS NULL GROUP BY f.dest",
        UNORDERED,
        [
            "SELECT dest, count(*) FROM flights f WHERE NOT EXISTS"
            " (SELECT 1 FROM airports a WHERE a.faa = f.dest) GROUP BY dest",
        ],
    ),
}


@pytest.fixture(scope="module")
def suites(flights_db: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, FuzzSuite]:
    cache = tmp_path_factory.mktemp("fuzz-cache")
    return {
        name: build_suite(flights_db, gold, cache_dir=cache, spec=spec)
        for name, (gold, spec, _) in CASES.items()
    }


@pytest.mark.parametrize("name", CASES)
def test_suite_has_five_copies_and_a_non_empty_gold(
    name: str, suites: dict[str, FuzzSuite], flights_db: Path
) -> None:
    suite = suites[name]
    assert len(suite.paths) >= 5 and all(Path(p).is_file() for p in suite.paths)
    assert suite.databases[0] == str(flights_db)
    assert any(n > 0 for n in suite.gold_rows) and suite.fallback is None
    # Each copy is a real DuckDB file the read-only executor opens, with the gold's answer.
    for path, rows in zip(suite.paths, suite.gold_rows, strict=True):
        result = execute_sql(suite.gold_sql, path, max_rows=10_000)
        assert result.ok and len(result.rows) == rows
        # small storage blocks: a copy of two dozen rows a table is not 256 KB a table
        con = duckdb.connect(path, read_only=True)
        try:
            assert con.execute("SELECT block_size FROM pragma_database_size()").fetchone() == (
                COPY_BLOCK_SIZE,
            )
        finally:
            con.close()


@pytest.mark.parametrize("name", CASES)
def test_gold_and_correct_rewrites_pass_on_every_copy(
    name: str, suites: dict[str, FuzzSuite]
) -> None:
    gold, spec, rewrites = CASES[name]
    for candidate in [gold, *rewrites]:
        verdict = verify_sql(candidate, gold, spec, suites[name].databases)
        assert verdict.success, (candidate, verdict.evidence)


@pytest.mark.parametrize("name", CASES)
def test_caught_neighbours_are_really_distinguished(
    name: str, suites: dict[str, FuzzSuite]
) -> None:
    suite = suites[name]
    gold, spec, _ = CASES[name]
    cache = GoldCache()
    with hold_open(suite.databases):
        for nb, caught, bad in zip(suite.neighbours, suite.caught, suite.invalid, strict=True):
            if not bad:
                assert distinguishes(gold, nb.sql, suite.databases, spec, cache) == caught, nb


def test_neighbours_of_the_acceptance_list_are_caught(suites: dict[str, FuzzSuite]) -> None:
    """>= for >, INNER for LEFT (and back), a dropped predicate, LIMIT changed."""
    wanted = {
        "filter": {"strictness", "drop_predicate", "literal"},
        "topk": {"limit", "order", "drop_predicate"},
        "join": {"strictness", "join", "drop_predicate"},
        "anti_join": {"join", "is_null", "drop_predicate"},
    }
    for name, kinds in wanted.items():
        suite = suites[name]
        for kind in kinds:
            of_kind = [
                c for nb, c in zip(suite.neighbours, suite.caught, strict=True) if nb.kind == kind
            ]
            assert of_kind and all(of_kind), (name, kind, suite_report(suite))


def test_catch_rate_over_realistic_queries(suites: dict[str, FuzzSuite]) -> None:
    caught = sum(sum(s.caught) for s in suites.values())
    valid = sum(sum(not bad for bad in s.invalid) for s in suites.values())
    assert valid >= 15 and caught / valid >= 0.9


def test_distinct_is_caught_when_the_gold_keeps_duplicates(
    flights_db: Path, tmp_path: Path
) -> None:
    gold = "SELECT origin, dest FROM flights WHERE distance < 800 AND month <= 3"
    suite = build_suite(flights_db, gold, cache_dir=tmp_path)
    distinct = "SELECT DISTINCT origin, dest FROM flights WHERE distance < 800 AND month <= 3"
    assert distinguishes(gold, distinct, suite.databases)


def test_precomputed_gold_literals_and_gold_ids_fail_on_the_suite(
    flights_db: Path, tmp_path: Path
) -> None:
    gold = "SELECT tailnum FROM planes WHERE seats >= 300 ORDER BY tailnum"
    suite = build_suite(flights_db, gold, cache_dir=tmp_path, spec=ORDERED)
    real = execute_sql(gold, flights_db, max_rows=1_000)
    ids = ", ".join(f"'{row[0]}'" for row in real.rows)
    literals = " UNION ALL ".join(f"SELECT '{row[0]}' AS tailnum" for row in real.rows)
    for cheat in (
        f"SELECT tailnum FROM planes WHERE tailnum IN ({ids}) ORDER BY tailnum",
        f"SELECT * FROM ({literals}) ORDER BY tailnum",
    ):
        assert verify_sql(cheat, gold, ORDERED, [flights_db]).success  # the real DB alone
        assert not verify_sql(cheat, gold, ORDERED, suite.databases).success


def test_tie_dependent_gold_copies_are_rejected(flights_db: Path, tmp_path: Path) -> None:
    gold = "SELECT carrier FROM flights GROUP BY carrier ORDER BY count(*) DESC LIMIT 1"
    suite = build_suite(flights_db, gold, cache_dir=tmp_path, spec=ORDERED)
    assert suite.rejected_unstable >= 1
    for path in suite.paths:  # the kept copies give the gold one clear answer
        assert verify_sql(gold, gold, ORDERED, [path]).success


def test_suites_are_cached_next_to_the_database(flights_db: Path, tmp_path: Path) -> None:
    gold = CASES["filter"][0]
    first = build_suite(flights_db, gold, cache_dir=tmp_path)
    stamps = [Path(p).stat().st_mtime_ns for p in first.paths]
    start = time.perf_counter()
    again = build_suite(flights_db, gold, cache_dir=tmp_path)
    assert time.perf_counter() - start < 0.5
    assert again.paths == first.paths
    assert [Path(p).stat().st_mtime_ns for p in again.paths] == stamps
    other_seed = build_suite(flights_db, gold, cache_dir=tmp_path, seed=1)
    assert Path(other_seed.paths[0]).parent != Path(first.paths[0]).parent


def test_gold_empty_everywhere_falls_back_and_says_so(flights_db: Path, tmp_path: Path) -> None:
    gold = "SELECT * FROM flights WHERE dep_delay > 10 AND dep_delay < 5"
    suite = build_suite(flights_db, gold, cache_dir=tmp_path)
    assert suite.fallback is not None and "empty on every fuzzed copy" in suite.fallback
    assert "empty there too" in suite.fallback
    assert len(suite.paths) >= 5 and not any(suite.gold_rows)


def test_broken_gold_is_refused_with_a_clear_message(flights_db: Path, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="fix the gold first"):
        build_suite(flights_db, "SELECT nope FROM flights", cache_dir=tmp_path)


def test_neighbours_cover_the_mutation_kinds() -> None:
    gold = (
        "SELECT f.origin, count(DISTINCT f.tailnum) AS n, min(f.distance) FROM flights f"
        " JOIN planes p ON f.tailnum = p.tailnum WHERE f.dep_delay >= 5 AND p.year IS NULL"
        " GROUP BY f.origin ORDER BY n DESC LIMIT 2"
    )
    kinds = {nb.kind for nb in neighbours(gold)}
    assert kinds >= {
        "strictness", "join", "drop_predicate", "limit", "order",
        "count_distinct", "is_null", "min_max", "literal",
    }  # fmt: skip
    assert all(nb.sql != gold for nb in neighbours(gold))
