"""Awkward variants: a task with a correct and a naive reference query that disagree.

Each kind below is a mistake analysts really make on real warehouses. A family proposes the
variant with both queries; `compare_naive` keeps it only when the naive query runs and gives a
different answer under the verifier's semantics (a naive query that happens to round to the same
number is no trap), and records the difference in the task's hidden metadata, so a reviewer can
see what the trap is and a report can count traps by kind.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Protocol

from workgym.envs.warehouse.generate.families.gold_answer import (
    Rejected,
    answer_of,
    result_hash,
    same_answer,
    summary,
)
from workgym.envs.warehouse.generate.families.sqlast import to_sql
from workgym.verifiers.sql_exec import SqlResult

if TYPE_CHECKING:
    from workgym.core.tasks import Task
    from workgym.envs.warehouse.generate.families.draft import Draft

KINDS: dict[str, str] = {
    "null_denominator": "a share or count over rows with a recorded value (naive: all rows)",
    "duplicates": "a key repeats (naturally or by a load bug); counting rows counts the repeats",
    "dirty_values": "case/space variants, sentinels or text-typed numbers split one value",
    "ambiguous_column": "two joined tables share a column name; the naive query reads the other",
    "timezone": "local calendar dates or months while timestamps are stored in UTC (and DST)",
    "fan_out": "a join multiplies the rows of the referenced table before a total",
    "orphans_inner_left": "references with no match: an INNER JOIN or NULL test drops or adds rows",
    "empty_result": "a filter matches nothing: the stated answer is 0 (or an empty list), not NULL",
    "ties_null_order": "ties at the top-k boundary, or NULLs that sort first under DESC",
    "encoded_units": "a number that encodes a unit (HHMM clock times, cents)",
    "null_group": "a NULL group key ranks as a group although the question excludes it",
    "null_not_in": "NOT IN over a subquery with NULLs is never true; NOT EXISTS is right",
}


class QueryRunner(Protocol):
    """What a naive query is run with: the validator's cached, read-only `Runner`."""

    def run(self, sql: str, max_rows: int = ..., *, fresh: bool = False) -> SqlResult: ...


def compare_naive(
    draft: Draft, runner: QueryRunner, gold: SqlResult, answer: dict[str, Any]
) -> dict[str, Any]:
    """Run the naive query; return the recorded difference or raise `Rejected`."""
    assert draft.naive is not None and draft.awkward in KINDS
    naive_sql = to_sql(draft.naive)
    naive = runner.run(naive_sql, max(draft.max_rows, 1) + 1)
    if not naive.ok:
        raise Rejected(f"naive query {naive.status}: {naive.error}")
    ordered = draft.kind == "top_k" or draft.ordered
    correct: Any
    naive_answer: Any
    if draft.kind == "sql":
        if result_hash(naive.rows, ordered) == result_hash(gold.rows, ordered):
            raise Rejected("awkward variant: the naive query gives the same result")
        naive_answer, correct = summary(naive.rows), summary(gold.rows)
    else:
        try:
            naive_answer = answer_of(draft, naive)
        except Rejected as exc:  # the naive query yields no valid answer at all: a real trap
            naive_answer = {"invalid": exc.reason, "result": summary(naive.rows)}
        else:
            if same_answer(draft, naive_answer, answer):
                raise Rejected("awkward variant: the naive query gives the same answer")
        correct = answer
    return {
        "kind": draft.awkward,
        "naive_sql": naive_sql,
        "correct": correct,
        "naive": naive_answer,
        "note": draft.note,
    }


def census(tasks: Iterable[Task]) -> dict[str, Any]:
    """Awkward variants by kind and their share of all tasks, for the generation report."""
    kinds: Counter[str] = Counter()
    total = 0
    for t in tasks:
        total += 1
        kind = (t.meta.get("awkward") or {}).get("kind")
        if kind:
            kinds[kind] += 1
    n = sum(kinds.values())
    return {
        "tasks": total,
        "awkward": n,
        "share": n / total if total else 0.0,
        "by_kind": dict(sorted(kinds.items())),
    }
