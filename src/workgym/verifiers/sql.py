"""The SQL verifier: does the candidate query return the gold query's rows on every database?

`verify_sql` runs the gold and the candidate on each database in its own fresh read-only session
(they never share one), with the candidate's limits derived from the gold run: timeout
min(30 s, max(2 s, 10 x gold time)) and row cap max(10 x |gold|, 10 000) + 1, hitting which
fails. Databases are the real one plus the fuzzed copies of `sql_fuzz`; the candidate passes only
if it matches on all of them. A refused statement is `forbidden_action` with reward 0, before
any engine sees it. Comparison rules live in `sql_compare`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from workgym.core.missing_extra import missing

try:
    import sqlglot
    from sqlglot import exp
except ImportError as exc:
    raise missing(exc, "warehouse", "SQL verification") from exc

from workgym.core.verdict import Status, Verdict
from workgym.verifiers.sql_compare import Comparison, SqlAnswerSpec, compare_results
from workgym.verifiers.sql_exec import SqlResult, execute_sql, hold_open
from workgym.verifiers.sql_guard import DIALECTS, Engine, check_read_only

__all__ = [
    "GoldCache",
    "SqlAnswerSpec",
    "candidate_limits",
    "compare_results",
    "resolve_order_keys",
    "verify_sql",
]

GOLD_TIMEOUT_S = 120.0
GOLD_MAX_ROWS = 1_000_000


def candidate_limits(gold_elapsed_s: float, gold_rows: int) -> tuple[float, int]:
    """(timeout in seconds, row cap) for a candidate, from the gold run on the same database."""
    timeout = min(30.0, max(2.0, 10.0 * gold_elapsed_s))
    return timeout, max(10 * gold_rows, 10_000)


class GoldCache:
    """Gold results per (engine, database, gold SQL); the gold is trusted and deterministic,
    so one run serves every candidate scored against it."""

    def __init__(self) -> None:
        self._results: dict[tuple[str, str, str], SqlResult] = {}

    def run(self, gold_sql: str, database: str | Path, engine: Engine) -> SqlResult:
        key = (engine, str(database), gold_sql)
        if key not in self._results:
            result = execute_sql(
                gold_sql, database, engine=engine, timeout_s=GOLD_TIMEOUT_S, max_rows=GOLD_MAX_ROWS
            )
            if not result.ok:
                return result  # not cached: a failing gold is reported every time
            self._results[key] = result
        return self._results[key]


def _output_names(select: exp.Expression) -> list[str]:
    return [e.alias_or_name.lower() for e in select.expressions] if select.expressions else []


def resolve_order_keys(
    spec: SqlAnswerSpec, gold_columns: list[str], gold_sql: str, engine: Engine = "duckdb"
) -> list[int]:
    """Gold column indexes that define the declared order; [] means strict positional order.

    Declared `order_keys` win. Otherwise the outermost ORDER BY of the gold query is read: each
    key that is an output column (by name, ordinal or identical expression) counts, up to the
    first that is not; rows tied on those keys are then compared as a bag.
    """
    if not spec.ordered:
        return []
    names = [c.lower() for c in gold_columns]
    if spec.order_keys is not None:
        keys: list[int] = []
        for key in spec.order_keys:
            if isinstance(key, int) and 0 <= key < len(names):
                keys.append(key)
            elif isinstance(key, str) and key.lower() in names:
                keys.append(names.index(key.lower()))
            else:
                raise ValueError(f"order key {key!r} is not a gold column: use one of {names}")
        return keys
    try:
        tree = sqlglot.parse_one(gold_sql, read=DIALECTS[engine])
    except sqlglot.errors.ParseError:
        return []
    order = tree.args.get("order")
    if not isinstance(order, exp.Order):
        return []
    select = tree if isinstance(tree, exp.Select) else None
    exprs = [e.unalias().sql() for e in select.expressions] if select is not None else []
    keys = []
    for ordered in order.expressions:
        key = ordered.this
        index = None
        if isinstance(key, exp.Literal) and key.is_int and 0 < int(key.name) <= len(names):
            index = int(key.name) - 1
        elif isinstance(key, exp.Column) and key.name.lower() in names:
            index = names.index(key.name.lower())
        elif key.sql() in exprs:
            index = exprs.index(key.sql())
        if index is None:
            break
        keys.append(index)
    return keys


def _label(database: str | Path, engine: str) -> str:
    if engine == "postgres":
        parts = urlsplit(str(database))
        return f"postgres:{parts.hostname or 'local'}/{parts.path.lstrip('/')}"
    return Path(database).name


_CANDIDATE_STATUS = {
    "forbidden": Status.forbidden_action,
    "parse_error": Status.parse_error,
    "timeout": Status.timeout,
    "error": Status.agent_error,
}


def verify_sql(
    candidate_sql: str,
    gold_sql: str,
    spec: SqlAnswerSpec,
    databases: Sequence[str | Path],
    engine: Engine = "duckdb",
    *,
    gold_cache: GoldCache | None = None,
) -> Verdict:
    """Score a candidate query against the gold query on every database (see module docs)."""
    if engine not in DIALECTS:
        raise ValueError(f"unknown engine {engine!r}: use duckdb, sqlite or postgres")
    if not databases:
        raise ValueError("verify_sql needs at least one database (the real one)")
    guard = check_read_only(candidate_sql, engine)
    if not guard.ok:
        status = Status.parse_error if guard.kind == "parse_error" else Status.forbidden_action
        flags = ["tamper"] if status == Status.forbidden_action else []
        return Verdict(status=status, evidence={"reason": guard.reason}, flags=flags)
    cache = gold_cache or GoldCache()
    held = hold_open(databases) if engine == "duckdb" else contextlib.nullcontext()
    with held:
        return _verify(candidate_sql, gold_sql, spec, databases, engine, cache)


def _verify(
    candidate_sql: str,
    gold_sql: str,
    spec: SqlAnswerSpec,
    databases: Sequence[str | Path],
    engine: Engine,
    cache: GoldCache,
) -> Verdict:
    checks: list[dict[str, Any]] = []
    mapping: list[int] | None = None
    keys: list[int] | None = None
    for database in databases:
        label = _label(database, engine)
        gold = cache.run(gold_sql, database, engine)
        if not gold.ok or gold.truncated:
            why = gold.error or f"gold result has more than {GOLD_MAX_ROWS} rows"
            return Verdict(
                status=Status.verifier_error,
                evidence={"database": label, "reason": f"gold query failed: {why}"},
            )
        timeout_s, cap = candidate_limits(gold.elapsed_s, len(gold.rows))
        cand = execute_sql(
            candidate_sql, database, engine=engine, timeout_s=timeout_s, max_rows=cap
        )
        check: dict[str, Any] = {
            "database": label,
            "timeout_s": round(timeout_s, 3),
            "row_cap": cap,
            "gold_rows": len(gold.rows),
            "gold_s": round(gold.elapsed_s, 4),
            "candidate_s": round(cand.elapsed_s, 4),
        }
        checks.append(check)
        if not cand.ok:
            check.update(match=False, reason=cand.error or cand.status)
            status = _CANDIDATE_STATUS[cand.status]
            flags = ["tamper"] if status == Status.forbidden_action else []
            return _verdict(checks, len(databases), status, flags)
        check["candidate_rows"] = len(cand.rows)
        if cand.truncated:
            why = cand.note or f"the result hit the row cap of {cap} rows"
            check.update(match=False, reason=why)
            continue
        if keys is None:
            keys = resolve_order_keys(spec, gold.columns, gold_sql, engine)
        result: Comparison = compare_results(
            gold.columns, gold.rows, cand.columns, cand.rows, spec, keys, first_mapping=mapping
        )
        check.update(match=result.match, reason=result.reason)
        if result.match:
            if mapping is not None and result.mapping != mapping:
                check["mapping_changed"] = True
            mapping = result.mapping
    return _verdict(checks, len(databases), Status.ok, [])


def _verdict(checks: list[dict[str, Any]], total: int, status: Status, flags: list[str]) -> Verdict:
    matched = sum(1 for c in checks if c.get("match"))
    success = status == Status.ok and matched == total
    return Verdict(
        reward=1.0 if success else 0.0,
        success=success,
        status=status,
        subscores={"databases_matched": matched / total},
        evidence={"databases": checks},
        flags=flags,
    )
