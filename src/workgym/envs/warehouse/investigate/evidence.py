"""Evidence: every query a conclusion cites is re-run read-only and its number checked.

- Re-run: through `verifiers.sql_exec.execute_sql` on the task's own database, so the same
  parser guard and locked-down read-only session apply as for the agent's run_sql; a query that
  is refused, fails or times out is evidence that failed (`evidence_failed`).
- Numbers: a cited `value` must appear among the query's result cells, equal within 1e-6
  relative, or equal after rounding the cell to the decimals the value was written with
  (12.35 reproduces 12.3456; 12.4 does not) (`evidence_mismatch`).
- Observed: the query must be one the agent actually ran in this episode (a successful run_sql
  call, compared after normalising the SQL text); anything else is `evidence_unobserved`, so a
  conclusion cannot cite queries it never looked at.
- Bounded: each query gets the agent's own run_sql limit and all of them together share
  `BUDGET_S` per verification (20 heavy queries once held one verification for 201 s); a query
  past the budget is evidence that failed. Anything a cited text can provoke (SQL 300
  parentheses deep, numbers too large to round) is the agent's failure, never an exception.
"""

from __future__ import annotations

import decimal
import json
import math
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import sqlglot
from pydantic import BaseModel
from sqlglot.errors import SqlglotError

from workgym.envs.warehouse.runtime.conclusion_answer import EvidenceQuery
from workgym.verifiers.sql_exec import SqlResult, execute_sql

FLAG_UNOBSERVED = "evidence_unobserved"
FLAG_FAILED = "evidence_failed"
FLAG_MISMATCH = "evidence_mismatch"
RUN_SQL = "run_sql"
TIMEOUT_S = 5.0  # the agent's own run_sql limit: the query ran within it once already
BUDGET_S = 20.0  # all evidence queries of one verification together
MAX_ROWS = 200


class EvidenceCheck(BaseModel):
    """What re-running one cited query showed (no timings: verdicts must be deterministic)."""

    sql: str
    observed: bool
    status: str
    error: str | None = None
    value: float | None = None
    reproduced: bool | None = None  # None when no value was claimed

    @property
    def ok(self) -> bool:
        return self.observed and self.status == "ok" and self.reproduced is not False


def normalise_sql(sql: str) -> str:
    """A canonical text of one query, so whitespace, case of keywords and a trailing semicolon
    do not decide whether two queries are the same."""
    text = sql.strip().rstrip(";").strip()
    try:
        parsed = sqlglot.parse(text, read="duckdb")
        if len(parsed) == 1 and parsed[0] is not None:
            return parsed[0].sql(dialect="duckdb")
    except (SqlglotError, ValueError, RecursionError):
        pass  # too deep or not SQL: compared as whitespace-normalised text
    return " ".join(text.split())


def observed_queries(tool_calls: Iterable[Any], tool: str = RUN_SQL) -> set[str]:
    """Normalised SQL of every successful `run_sql` call in the transcript."""
    seen: set[str] = set()
    for call in tool_calls:
        if getattr(call, "name", None) != tool or getattr(call, "status", None) != "ok":
            continue
        try:
            args = json.loads(call.arguments or "{}")
        except ValueError:
            continue
        sql = args.get("sql") if isinstance(args, dict) else None
        if isinstance(sql, str):
            seen.add(normalise_sql(sql))
    return seen


def _decimals(value: float) -> int | None:
    exponent = decimal.Decimal(repr(value)).as_tuple().exponent
    if not isinstance(exponent, int):
        return None
    return max(0, -exponent)


def _number(cell: Any) -> float | None:
    if isinstance(cell, bool) or cell is None:
        return None
    if isinstance(cell, int | float | decimal.Decimal):
        try:
            out = float(cell)
        except OverflowError:  # an integer beyond float range reproduces no claimed number
            return None
        return out if math.isfinite(out) else None
    return None


def reproduces(value: float, rows: Sequence[Sequence[Any]]) -> bool:
    """Whether `value` is one of the result's numbers, at the precision it was written with."""
    places = _decimals(value)
    for row in rows:
        for cell in row:
            got = _number(cell)
            if got is None:
                continue
            if abs(got - value) <= max(1e-9, 1e-6 * max(abs(got), abs(value))):
                return True
            if places is not None and places <= 6:
                try:
                    rounded = decimal.Decimal(repr(got)).quantize(
                        decimal.Decimal(1).scaleb(-places), rounding=decimal.ROUND_HALF_UP
                    )
                except decimal.InvalidOperation:  # too many digits to round: compared above
                    continue
                if float(rounded) == value:
                    return True
    return False


def check_evidence(
    queries: Sequence[EvidenceQuery],
    database: Path,
    observed: set[str],
    budget_s: float = BUDGET_S,
) -> list[EvidenceCheck]:
    """Re-run every cited query; once `budget_s` is spent, the rest are failed evidence."""
    out = []
    deadline = time.monotonic() + budget_s
    for q in queries:
        seen = normalise_sql(q.sql) in observed
        left = deadline - time.monotonic()
        if left <= 0.05:
            result = SqlResult(
                status="timeout",
                error=f"the evidence budget ({budget_s:g} s for all cited queries) was spent "
                "before this query; cite fewer or cheaper queries",
            )
        else:
            result = execute_sql(q.sql, database, timeout_s=min(TIMEOUT_S, left), max_rows=MAX_ROWS)
        reproduced = None
        if result.ok and q.value is not None:
            reproduced = reproduces(q.value, result.rows)
        out.append(
            EvidenceCheck(
                sql=q.sql[:2000],
                observed=seen,
                status=result.status,
                error=result.error,
                value=q.value,
                reproduced=reproduced,
            )
        )
    return out


def evidence_flags(checks: Sequence[EvidenceCheck]) -> list[str]:
    flags = []
    if any(not c.observed for c in checks):
        flags.append(FLAG_UNOBSERVED)
    if any(c.status != "ok" for c in checks):
        flags.append(FLAG_FAILED)
    if any(c.reproduced is False for c in checks):
        flags.append(FLAG_MISMATCH)
    return flags
