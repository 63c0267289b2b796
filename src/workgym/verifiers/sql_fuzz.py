"""The test suite of fuzzed databases: small copies of the warehouse that separate the gold query
from its neighbours (docs/decisions/0013-verifiers-sql-readonly-and-fuzz-suite.md).

A candidate that matches the gold on the real database may still be wrong: `>=` for `>` agrees
when no row sits on the boundary, LEFT for INNER agrees when no row is an orphan. So next to the
real database we keep >= 5 small DuckDB copies built from real sampled rows and then pushed
towards those cases: rows on and around each literal, orphans, duplicates, NULLs, ties. Every
copy is built in memory, kept only when the gold gives the same answer with the rows in reverse
order (no tie-dependent gold), and copies are then chosen greedily by how many neighbour queries
(`sql_neighbours`) they catch, with at least one giving the gold a non-empty result when any can.
The chosen copies are written as DuckDB files into a cache directory, keyed by the gold, the seed
and the database's identity, so a later call reuses them.

Fallback (documented in docs/decisions): when no copy gives a non-empty gold result, a larger
sample of rows satisfying the gold's own filters is tried; if the gold is still empty everywhere,
the suite says so in `fallback` and the real database remains the only non-empty check.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from workgym.core.missing_extra import missing

try:
    import duckdb
except ImportError as exc:
    raise missing(exc, "warehouse", "SQL verification") from exc

from workgym.verifiers.sql import GoldCache, SqlAnswerSpec, resolve_order_keys, verify_sql
from workgym.verifiers.sql_compare import compare_results
from workgym.verifiers.sql_exec import execute_sql, open_duckdb
from workgym.verifiers.sql_fuzz_variants import STRATEGIES, Stage
from workgym.verifiers.sql_neighbours import Neighbour, neighbours, pasted_keys
from workgym.verifiers.sql_query_facts import query_facts

# 2: the winners strategy and a copy that changes the answer; 3: the pasted-keys neighbour and
# boundary rows that did not hold the value before (decision 0162)
FUZZ_VERSION = "3"
QUERY_TIMEOUT_S = 5.0
QUERY_MAX_ROWS = 10_000


class FuzzSuite(BaseModel):
    """The fuzzed copies for one gold query, and how well they separate its neighbours."""

    gold_sql: str
    source: str
    paths: list[str] = Field(default_factory=list)
    strategies: list[str] = Field(default_factory=list)
    gold_rows: list[int] = Field(default_factory=list)  # gold result size on each copy
    neighbours: list[Neighbour] = Field(default_factory=list)
    caught: list[bool] = Field(default_factory=list)  # per neighbour, on the chosen copies
    invalid: list[bool] = Field(default_factory=list)  # neighbour failed on every copy
    rejected_unstable: int = 0
    fallback: str | None = None
    build_s: float = 0.0

    @property
    def databases(self) -> list[str]:
        """The real database followed by the fuzzed copies: what `verify_sql` should get."""
        return [self.source, *self.paths]

    @property
    def catch_rate(self) -> float:
        valid = [c for c, bad in zip(self.caught, self.invalid, strict=True) if not bad]
        return sum(valid) / len(valid) if valid else 1.0


def _schema(con: Any) -> dict[str, dict[str, str]]:
    rows = con.execute(
        "SELECT table_name, column_name, data_type FROM duckdb_columns()"
        " WHERE database_name = current_database() AND schema_name = 'main'"
        " ORDER BY table_name, column_index"
    ).fetchall()
    schema: dict[str, dict[str, str]] = {}
    for table, column, dtype in rows:
        schema.setdefault(table.lower(), {})[column.lower()] = dtype
    return schema


def _run(con: Any, catalog: str, sql: str) -> tuple[list[str], list[tuple[Any, ...]]] | None:
    con.execute(f"USE {catalog}")
    timer = threading.Timer(QUERY_TIMEOUT_S, con.interrupt)
    timer.start()
    try:
        cur = con.execute(sql)
        columns = [d[0] for d in cur.description or []]
        rows = cur.fetchmany(QUERY_MAX_ROWS + 1)
        return (columns, rows) if len(rows) <= QUERY_MAX_ROWS else None
    except duckdb.Error:
        return None
    finally:
        timer.cancel()


def _tie_at_limit(con: Any, catalog: str, gold_sql: str) -> bool:
    """Does the row just past the gold's LIMIT tie with the last row kept, on the ORDER BY keys?

    Reversing the rows catches most tie-dependent golds, but a parallel aggregate can order ties
    differently from one run to the next, so the tie is also looked for directly.
    """
    import sqlglot
    from sqlglot import exp

    try:
        tree = sqlglot.parse_one(gold_sql, read="duckdb")
    except sqlglot.errors.ParseError:
        return False
    order, limit = tree.args.get("order"), tree.args.get("limit")
    if not isinstance(tree, exp.Select) or order is None or limit is None:
        return False
    try:
        n = int(limit.expression.name)
    except (AttributeError, ValueError):
        return False
    keys = []
    for o in order.expressions:
        key = o.this
        if isinstance(key, exp.Literal) and key.is_int:  # ORDER BY 2: the second output column
            position = int(key.name) - 1
            if not 0 <= position < len(tree.expressions):
                return False
            key = tree.expressions[position].unalias()
        keys.append(key.copy())
    probe = tree.copy()
    for i, key in enumerate(keys):
        probe = probe.select(exp.alias_(key, f"__tie_key_{i}"), append=True)
    probe = probe.limit(n + 1)
    result = _run(con, catalog, probe.sql(dialect="duckdb"))
    if result is None or len(result[1]) <= n or n == 0:
        return False
    width = len(keys)
    return result[1][n - 1][-width:] == result[1][n][-width:]


def _same(
    gold: tuple[list[str], list[Any]],
    other: tuple[list[str], list[Any]] | None,
    spec: SqlAnswerSpec,
    keys: list[int],
) -> bool:
    if other is None:
        return False
    return compare_results(gold[0], gold[1], other[0], other[1], spec, keys).match


class _Copy:
    def __init__(self, catalog: str, strategy: str, gold: tuple[list[str], list[Any]]):
        self.catalog = catalog
        self.strategy = strategy
        self.gold = gold
        self.catches: set[int] = set()
        self.ran: set[int] = set()
        self.changes_answer = False  # the gold's answer here differs from the real database's


def _evaluate(
    stage: Stage,
    gold_sql: str,
    spec: SqlAnswerSpec,
    nbs: list[Neighbour],
    plan: Sequence[tuple[str, int]],
    enough: int,
    real: tuple[list[str], list[Any]] | None = None,
) -> tuple[list[_Copy], int]:
    """Build and score copies in plan order; stop early once `enough` stable copies exist, one
    has a non-empty gold, one changes the real answer (`real`), and the last three caught no
    neighbour the others missed."""
    copies: list[_Copy] = []
    unstable = 0
    stale = 0
    for strategy, seed in plan:
        changed = real is None or any(c.changes_answer for c in copies)
        if len(copies) >= enough and stale >= 3 and any(c.gold[1] for c in copies) and changed:
            break
        catalog = stage.variant(strategy, seed)
        if catalog is None:
            continue
        gold = _run(stage.con, catalog, gold_sql)
        reverse = stage.reversed_copy(catalog)
        keys = resolve_order_keys(spec, gold[0], gold_sql) if gold else []
        if (
            gold is None
            or not _same(gold, _run(stage.con, reverse, gold_sql), spec, keys)
            or _tie_at_limit(stage.con, catalog, gold_sql)
        ):
            unstable += 1
            continue
        copy = _Copy(catalog, strategy, gold)
        copy.changes_answer = real is not None and not _same(real, gold, spec, keys)
        for index, nb in enumerate(nbs):
            result = _run(stage.con, catalog, nb.sql)
            if result is not None:
                copy.ran.add(index)
            if not _same(gold, result, spec, keys):
                copy.catches.add(index)
        seen = set().union(*(c.catches for c in copies)) if copies else set()
        stale = stale + 1 if copy.catches <= seen else 0
        copies.append(copy)
    return copies, unstable


def _select(copies: list[_Copy], valid: set[int], min_copies: int, max_copies: int) -> list[_Copy]:
    """Greedy set cover of the neighbours, then fill up to `min_copies` with diverse copies.

    The first pick gives the gold a non-empty answer that differs from the real database's when
    a copy can: a query that pastes the real answer as a literal then fails on it."""
    chosen: list[_Copy] = []
    covered: set[int] = set()
    nonempty = [c for c in copies if c.gold[1]]
    if nonempty:
        first = max(nonempty, key=lambda c: (c.changes_answer, len(c.catches & valid)))
        chosen.append(first)
        covered |= first.catches
    if not any(c.changes_answer for c in chosen):
        changing = [c for c in copies if c.changes_answer]
        if changing:
            best = max(changing, key=lambda c: len(c.catches & valid))
            chosen.append(best)
            covered |= best.catches
    while len(chosen) < max_copies:
        rest = [c for c in copies if c not in chosen]
        if not rest:
            break
        best = max(rest, key=lambda c: len((c.catches & valid) - covered))
        gain = len((best.catches & valid) - covered)
        if gain == 0 and len(chosen) >= min_copies:
            break
        if gain == 0:
            used = {c.strategy for c in chosen}
            best = max(rest, key=lambda c: (c.strategy not in used, bool(c.gold[1]), -len(chosen)))
        chosen.append(best)
        covered |= best.catches
    return chosen


def _fingerprint(path: Path) -> str:
    stat = path.stat()
    return f"{path.resolve()}:{stat.st_size}:{stat.st_mtime_ns}"


def _key(gold_sql: str, spec: SqlAnswerSpec, seed: int, fingerprint: str, extra: str) -> str:
    parts = [FUZZ_VERSION, gold_sql, spec.model_dump_json(), str(seed), fingerprint, extra]
    text = "\n".join(parts)
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def _load(folder: Path, source: Path) -> FuzzSuite | None:
    meta = folder / "suite.json"
    if not meta.is_file():
        return None
    suite = FuzzSuite.model_validate_json(meta.read_text())
    suite.paths = [str(folder / Path(p).name) for p in suite.paths]
    suite.source = str(source)
    return suite if all(Path(p).is_file() for p in suite.paths) else None


def _write(stage: Stage, chosen: list[_Copy], suite: FuzzSuite, folder: Path) -> FuzzSuite:
    tmp = folder.parent / f".tmp-{folder.name}-{os.getpid()}-{threading.get_ident()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    names = [f"copy_{n:02d}_{copy.strategy}.duckdb" for n, copy in enumerate(chosen)]
    stage.write([(copy.catalog, tmp / name) for copy, name in zip(chosen, names, strict=True)])
    suite.paths = names
    (tmp / "suite.json").write_text(suite.model_dump_json(indent=1))
    try:
        os.replace(tmp, folder)
    except OSError:  # another process built the same suite first: keep theirs
        shutil.rmtree(tmp, ignore_errors=True)
    loaded = _load(folder, Path(suite.source))
    if loaded is None:
        raise RuntimeError(f"fuzz suite in {folder} could not be read back; delete it and rebuild")
    return loaded


def build_suite(
    database: str | Path,
    gold_sql: str,
    *,
    cache_dir: str | Path | None = None,
    spec: SqlAnswerSpec | None = None,
    seed: int = 0,
    min_copies: int = 5,
    max_copies: int = 8,
    rows_per_table: int = 24,
    fingerprint: str | None = None,
) -> FuzzSuite:
    """Build (or load from `cache_dir`) the fuzzed copies of `database` for `gold_sql`.

    `cache_dir` defaults to a `fuzz` folder next to the database; `fingerprint` (e.g. the
    snapshot's checksum) identifies the data, else its path, size and modification time do.
    """
    source = Path(database)
    spec = spec or SqlAnswerSpec()
    cache = Path(cache_dir) if cache_dir is not None else source.parent / "fuzz"
    extra = f"{min_copies}:{max_copies}:{rows_per_table}"
    key = _key(gold_sql, spec, seed, fingerprint or _fingerprint(source), extra)
    folder = cache / key
    cached = _load(folder, source)
    if cached is not None:
        return cached
    shutil.rmtree(folder, ignore_errors=True)  # a half-written or stale folder: rebuild it
    start = time.perf_counter()
    real = execute_sql(gold_sql, source, timeout_s=120.0, max_rows=QUERY_MAX_ROWS)
    if not real.ok:
        raise ValueError(f"the gold query fails on {source.name}: {real.error}; fix the gold first")
    answer = (real.columns, list(real.rows)) if not real.truncated else None
    con = open_duckdb(source)
    try:
        schema = _schema(con)
    finally:
        con.close()
    facts = query_facts(gold_sql, schema)
    nbs = neighbours(gold_sql)
    pasted = pasted_keys(gold_sql, [r[0] for r in real.rows if r]) if answer else None
    if pasted is not None and pasted.sql not in {nb.sql for nb in nbs}:
        nbs.append(pasted)
    copies: list[_Copy] = []
    unstable = 0
    fallback = None
    with Stage(source, schema, facts, rows_per_table) as stage:
        stage.answer_values = sorted({str(v) for row in real.rows for v in row if v is not None})
        for round_ in range(3):
            plan = [(s, seed * 100 + round_ * 10 + k) for k in range(2) for s in STRATEGIES]
            more, bad = _evaluate(stage, gold_sql, spec, nbs, plan, min_copies + 2, answer)
            copies += more
            unstable += bad
            if len(copies) >= min_copies and any(c.gold[1] for c in copies):
                break
            if not any(c.gold[1] for c in copies) and round_ == 0:
                stage.widen(rows_per_table * 8)
        if not any(c.gold[1] for c in copies):
            fallback = (
                "gold is empty on every fuzzed copy, also with a larger sample of rows that pass"
                " its filters; the real database is the only non-empty check"
                + ("" if real.rows else " (and the gold is empty there too)")
            )
        elif len(copies) < min_copies:
            fallback = f"only {len(copies)} copies give the gold a stable answer"
        elif answer is not None and not any(c.changes_answer for c in copies):
            fallback = (
                "no fuzzed copy changes the gold's answer, so a query that pastes the answer as"
                " a literal passes the suite; prefer a gold whose answer depends on the data"
            )
        ran = set().union(*(c.ran for c in copies)) if copies else set()
        valid = set(range(len(nbs))) & ran
        chosen = _select(copies, valid, min_copies, max_copies)
        covered = set().union(*(c.catches for c in chosen)) if chosen else set()
        index = next((i for i, nb in enumerate(nbs) if nb.kind == "pasted_keys"), None)
        if fallback is None and index is not None and index in valid and index not in covered:
            fallback = (
                "no fuzzed copy separates the gold from its answer's keys pasted as the filter"
                " (WHERE key IN (...)); the copies keep the real data's verdicts"
            )
        suite = FuzzSuite(
            gold_sql=gold_sql,
            source=str(source),
            strategies=[c.strategy for c in chosen],
            gold_rows=[len(c.gold[1]) for c in chosen],
            neighbours=nbs,
            caught=[i in covered for i in range(len(nbs))],
            invalid=[i not in valid for i in range(len(nbs))],
            rejected_unstable=unstable,
            fallback=fallback,
        )
        suite.build_s = round(time.perf_counter() - start, 3)
        return _write(stage, chosen, suite, folder)


def distinguishes(
    gold_sql: str,
    neighbour_sql: str,
    databases: Sequence[str | Path],
    spec: SqlAnswerSpec | None = None,
    gold_cache: GoldCache | None = None,
) -> bool:
    """True when the SQL verifier rejects `neighbour_sql` on these databases."""
    spec = spec or SqlAnswerSpec()
    verdict = verify_sql(neighbour_sql, gold_sql, spec, databases, gold_cache=gold_cache)
    return not verdict.success


def suite_report(suite: FuzzSuite) -> dict[str, Any]:
    """Counts for logs and benches: copies, non-empty copies, neighbours caught by kind."""
    by_kind: dict[str, list[int]] = {}
    for nb, caught, bad in zip(suite.neighbours, suite.caught, suite.invalid, strict=True):
        if not bad:
            by_kind.setdefault(nb.kind, [0, 0])
            by_kind[nb.kind][0] += int(caught)
            by_kind[nb.kind][1] += 1
    return {
        "copies": len(suite.paths),
        "nonempty_copies": sum(1 for n in suite.gold_rows if n),
        "catch_rate": round(suite.catch_rate, 3),
        "by_kind": {k: f"{a}/{b}" for k, (a, b) in sorted(by_kind.items())},
        "fallback": suite.fallback,
        "build_s": suite.build_s,
    }


__all__ = ["FuzzSuite", "build_suite", "distinguishes", "suite_report"]
