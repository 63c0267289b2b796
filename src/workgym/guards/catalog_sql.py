"""Result-set probes (GUARDS.md, SQL): near misses of the gold result that a weak comparison
accepts (set instead of bag, per-column sorting, absolute tolerance, NULL == 0), and FN probes
that a too-strict one rejects (shuffled rows, reordered columns, 1e-12 noise, NULL vs NULL).

Each probe transforms the gold result; it is submitted as rows (RowsChannel) and/or as SQL that
wraps the gold query (SqlChannel), whichever the environment accepts. The expected verdict
follows the task's declared semantics: an ordered task, extra columns allowed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from workgym.guards import attackers as a
from workgym.guards.capabilities import SQL_ANSWER
from workgym.guards.probes import AttackContext, Expect, Outcome, ScriptProbe
from workgym.guards.surfaces import (
    NOT_ATTACKABLE,
    GoldResult,
    ResultSet,
    RowsChannel,
    SqlChannel,
)
from workgym.messages import Message
from workgym.tasks import canonical_json

if TYPE_CHECKING:
    from workgym.environment import Environment
    from workgym.tasks import Task


def qi(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def gold_of(ctx: AttackContext, task: Task) -> ResultSet | None:
    """The gold result, computed once per attack (it may run the gold query); None when the
    environment has no result-set answer for this task (e.g. a typed-answer task)."""
    key = f"gold_result|{task.id}"
    if key not in ctx.memo:
        env = ctx.env
        ctx.memo[key] = env.gold_result(task) if isinstance(env, GoldResult) else None
    found: ResultSet | None = ctx.memo[key]
    return found


def bag(rows: list[list[Any]]) -> Counter[str]:
    return Counter(canonical_json(r) for r in rows)


def _numeric_cell(gold: ResultSet, nonzero: bool) -> tuple[int, int] | None:
    for i, row in enumerate(gold.rows):
        for j, v in enumerate(row):
            if a.is_number(v) and (v or not nonzero):
                return i, j
    return None


def _null_cell(gold: ResultSet) -> tuple[int, int] | None:
    for i, row in enumerate(gold.rows):
        for j, v in enumerate(row):
            if v is None:
                return i, j
    return None


def _replace(gold: ResultSet, cell: tuple[int, int], value: Any) -> ResultSet:
    rows = [list(r) for r in gold.rows]
    rows[cell[0]][cell[1]] = value
    return gold.model_copy(update={"rows": rows})


class _ResultProbe(ScriptProbe):
    group = "sql"
    applies_to = frozenset({SQL_ANSWER})

    def transform(self, gold: ResultSet) -> ResultSet | None:
        raise NotImplementedError

    def sql(self, gold_sql: str, gold: ResultSet) -> str | None:
        return None

    def expect_for(self, gold: ResultSet) -> Expect | None:
        return self.expect

    def expected(self, ctx: AttackContext, task: Task) -> Expect | None:
        gold = gold_of(ctx, task)
        return None if gold is None else self.expect_for(gold)

    def variants(self, env: Environment, task: Task) -> list[Sequence[Message]]:
        gold = env.gold_result(task) if isinstance(env, GoldResult) else None
        return [] if gold is None else self.channel_variants(env, task, gold)

    def variants_for(self, ctx: AttackContext, task: Task) -> list[Sequence[Message]]:
        gold = gold_of(ctx, task)
        return [] if gold is None else self.channel_variants(ctx.env, task, gold)

    def channel_variants(
        self, env: Environment, task: Task, gold: ResultSet
    ) -> list[Sequence[Message]]:
        out: list[Sequence[Message]] = []
        if isinstance(env, RowsChannel):
            changed = self.transform(gold)
            if changed is not None:
                out.append(env.submit_result(task, changed))
        if isinstance(env, SqlChannel):
            query = self.sql(env.gold_sql(task).strip().rstrip(";"), gold)
            if query is not None:
                out.append(env.submit_sql(task, query))
        return out

    async def run(self, ctx: AttackContext, task: Task) -> Outcome | None:
        env = ctx.env
        if not isinstance(env, GoldResult) or not isinstance(env, RowsChannel | SqlChannel):
            return self.outcome(task, self.expect, "not attackable", False, NOT_ATTACKABLE)
        return await super().run(ctx, task)


def _cols(gold: ResultSet, exprs: dict[int, str] | None = None) -> str:
    exprs = exprs or {}
    return ", ".join(exprs.get(j, qi(c)) for j, c in enumerate(gold.columns))


class Distinct(_ResultProbe):
    name = "sql-distinct"
    summary = "DISTINCT where the gold keeps duplicate rows (a set comparison accepts it)"

    def expect_for(self, gold: ResultSet) -> Expect | None:
        return self.expect if len(bag(gold.rows)) < len(gold.rows) else None

    def transform(self, gold: ResultSet) -> ResultSet | None:
        seen: dict[str, list[Any]] = {}
        for r in gold.rows:
            seen.setdefault(canonical_json(r), r)
        return gold.model_copy(update={"rows": list(seen.values())})

    def sql(self, gold_sql: str, gold: ResultSet) -> str | None:
        return f"SELECT DISTINCT * FROM ({gold_sql}) AS g"


class DuplicateRow(_ResultProbe):
    name = "sql-duplicate-row"
    summary = "one gold row twice (a set comparison accepts it)"

    def expect_for(self, gold: ResultSet) -> Expect | None:
        return self.expect if gold.rows else None

    def transform(self, gold: ResultSet) -> ResultSet | None:
        return gold.model_copy(update={"rows": [*gold.rows, gold.rows[0]]})

    def sql(self, gold_sql: str, gold: ResultSet) -> str | None:
        return (
            f"SELECT * FROM ({gold_sql}) AS g UNION ALL (SELECT * FROM ({gold_sql}) AS h LIMIT 1)"
        )


class Misaligned(_ResultProbe):
    name = "sql-misaligned-rows"
    summary = "right values in every column, rows misaligned (per-column sorting accepts it)"

    def _shifted(self, gold: ResultSet) -> ResultSet | None:
        if len(gold.columns) < 2 or len(gold.rows) < 2:
            return None
        col = [r[1] for r in gold.rows]
        for k in range(1, len(col)):
            rows = [[*r[:1], col[(i + k) % len(col)], *r[2:]] for i, r in enumerate(gold.rows)]
            if bag(rows) != bag(gold.rows):
                return gold.model_copy(update={"rows": rows})
        return None

    def expect_for(self, gold: ResultSet) -> Expect | None:
        return self.expect if self._shifted(gold) is not None else None

    def transform(self, gold: ResultSet) -> ResultSet | None:
        return self._shifted(gold)

    def sql(self, gold_sql: str, gold: ResultSet) -> str | None:
        c0, c1 = qi(gold.columns[0]), qi(gold.columns[1])
        rest = "".join(f", a.{qi(c)}" for c in gold.columns[2:])
        return (
            f"WITH g AS ({gold_sql}), "
            f"a AS (SELECT *, row_number() OVER (ORDER BY {c0}, {c1}) AS probe_rn FROM g), "
            f"b AS (SELECT {c1}, row_number() OVER (ORDER BY {c1} DESC) AS probe_rn FROM g) "
            f"SELECT a.{c0}, b.{c1}{rest} FROM a JOIN b USING (probe_rn)"
        )


class WrongOrder(_ResultProbe):
    name = "sql-wrong-order"
    summary = "the gold rows reversed on a task that declares an order"

    def expect_for(self, gold: ResultSet) -> Expect | None:
        return self.expect if gold.ordered and gold.rows[::-1] != gold.rows else None

    def transform(self, gold: ResultSet) -> ResultSet | None:
        return gold.model_copy(update={"rows": gold.rows[::-1]})


class ShuffledRows(_ResultProbe):
    name = "sql-shuffled-rows"
    expect = Expect.must_pass
    summary = "FN: the gold rows in another order on an unordered task must pass"

    def expect_for(self, gold: ResultSet) -> Expect | None:
        return self.expect if not gold.ordered and len(gold.rows) > 1 else None

    def transform(self, gold: ResultSet) -> ResultSet | None:
        return gold.model_copy(update={"rows": gold.rows[1:] + gold.rows[:1]})

    def sql(self, gold_sql: str, gold: ResultSet) -> str | None:
        return f"SELECT * FROM ({gold_sql}) AS g ORDER BY hash({_cols(gold)}) DESC"


class ColumnsReordered(_ResultProbe):
    name = "sql-columns-reordered"
    expect = Expect.must_pass
    summary = "FN: the right columns in another order must pass (one permutation, whole rows)"

    def expect_for(self, gold: ResultSet) -> Expect | None:
        return self.expect if len(gold.columns) > 1 else None

    def transform(self, gold: ResultSet) -> ResultSet | None:
        return ResultSet(
            columns=gold.columns[::-1],
            rows=[r[::-1] for r in gold.rows],
            ordered=gold.ordered,
            allow_extra_columns=gold.allow_extra_columns,
        )

    def sql(self, gold_sql: str, gold: ResultSet) -> str | None:
        return f"SELECT {', '.join(qi(c) for c in gold.columns[::-1])} FROM ({gold_sql}) AS g"


class ExtraColumn(_ResultProbe):
    name = "sql-extra-column"
    summary = "the gold plus an extra column: fails unless the task allows extra columns"

    def expect_for(self, gold: ResultSet) -> Expect | None:
        return Expect.must_pass if gold.allow_extra_columns else Expect.must_fail

    def transform(self, gold: ResultSet) -> ResultSet | None:
        return gold.model_copy(
            update={"columns": [*gold.columns, "probe_extra"], "rows": [[*r, 1] for r in gold.rows]}
        )

    def sql(self, gold_sql: str, gold: ResultSet) -> str | None:
        return f"SELECT *, 1 AS probe_extra FROM ({gold_sql}) AS g"


class OffHalfPercent(_ResultProbe):
    name = "sql-off-0.5pct"
    summary = "one number off by 0.5% (an absolute 1e-2 tolerance accepts small ones)"

    def expect_for(self, gold: ResultSet) -> Expect | None:
        return self.expect if _numeric_cell(gold, nonzero=True) else None

    def transform(self, gold: ResultSet) -> ResultSet | None:
        cell = _numeric_cell(gold, nonzero=True)
        if cell is None:
            return None
        return _replace(gold, cell, a.nudge(gold.rows[cell[0]][cell[1]], 0.005))

    def sql(self, gold_sql: str, gold: ResultSet) -> str | None:
        cell = _numeric_cell(gold, nonzero=True)
        if cell is None:
            return None
        col = qi(gold.columns[cell[1]])
        return f"SELECT {_cols(gold, {cell[1]: f'{col} * 1.005 AS {col}'})} FROM ({gold_sql}) AS g"


class OffTiny(_ResultProbe):
    name = "sql-off-1e-12"
    expect = Expect.must_pass
    summary = "FN: numbers off by 1e-12 (relative) must pass; int and float compare numerically"

    def expect_for(self, gold: ResultSet) -> Expect | None:
        return self.expect if _numeric_cell(gold, nonzero=True) else None

    def transform(self, gold: ResultSet) -> ResultSet | None:
        cell = _numeric_cell(gold, nonzero=True)
        if cell is None:
            return None
        return _replace(gold, cell, float(gold.rows[cell[0]][cell[1]]) * (1 + 1e-12))

    def sql(self, gold_sql: str, gold: ResultSet) -> str | None:
        cell = _numeric_cell(gold, nonzero=True)
        if cell is None:
            return None
        col = qi(gold.columns[cell[1]])
        expr = f"{col} * (1 + 1e-12) AS {col}"
        return f"SELECT {_cols(gold, {cell[1]: expr})} FROM ({gold_sql}) AS g"


class NullVsZero(_ResultProbe):
    name = "sql-null-vs-zero"
    summary = "a NULL answered as 0 (or a 0 as NULL) must fail"

    def _cell(self, gold: ResultSet) -> tuple[tuple[int, int], Any] | None:
        null = _null_cell(gold)
        if null is not None:
            return null, 0
        for i, row in enumerate(gold.rows):
            for j, v in enumerate(row):
                if a.is_number(v) and v == 0:
                    return (i, j), None
        return None

    def expect_for(self, gold: ResultSet) -> Expect | None:
        return self.expect if self._cell(gold) else None

    def transform(self, gold: ResultSet) -> ResultSet | None:
        found = self._cell(gold)
        return None if found is None else _replace(gold, found[0], found[1])

    def sql(self, gold_sql: str, gold: ResultSet) -> str | None:
        found = self._cell(gold)
        if found is None:
            return None
        (_, j), value = found
        col = qi(gold.columns[j])
        expr = f"coalesce({col}, 0) AS {col}" if value == 0 else f"nullif({col}, 0) AS {col}"
        return f"SELECT {_cols(gold, {j: expr})} FROM ({gold_sql}) AS g"


class NullVsNull(_ResultProbe):
    name = "sql-null-vs-null"
    expect = Expect.must_pass
    summary = "FN: NULL in the answer where the gold has NULL must pass"

    def expect_for(self, gold: ResultSet) -> Expect | None:
        return self.expect if _null_cell(gold) is not None else None

    def transform(self, gold: ResultSet) -> ResultSet | None:
        return gold

    def sql(self, gold_sql: str, gold: ResultSet) -> str | None:
        return gold_sql


class EmptyResult(_ResultProbe):
    name = "sql-where-1=0"
    summary = "an empty result (WHERE 1=0) where the gold has rows"

    def expect_for(self, gold: ResultSet) -> Expect | None:
        return self.expect if gold.rows else None

    def transform(self, gold: ResultSet) -> ResultSet | None:
        return gold.model_copy(update={"rows": []})

    def sql(self, gold_sql: str, gold: ResultSet) -> str | None:
        return f"SELECT * FROM ({gold_sql}) AS g WHERE 1=0"


RESULTS = [
    Distinct(),
    DuplicateRow(),
    Misaligned(),
    WrongOrder(),
    ShuffledRows(),
    ColumnsReordered(),
    ExtraColumn(),
    OffHalfPercent(),
    OffTiny(),
    NullVsZero(),
    NullVsNull(),
    EmptyResult(),
]
