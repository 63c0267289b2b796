"""Result-set probes (docs/guards.md, SQL): near misses of the gold result that a weak comparison
accepts (set instead of bag, per-column sorting, absolute tolerance, NULL == 0), and FN probes
that a too-strict one rejects (shuffled rows, reordered columns, 1e-12 noise, NULL vs NULL).

Each probe transforms the gold result; it is submitted as rows (RowsChannel) and/or as SQL that
wraps the gold query (SqlChannel), whichever the environment accepts. The expected verdict
follows the task's declared semantics: an ordered task, extra columns allowed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from workgym.core.messages import Message
from workgym.core.tasks import canonical_json
from workgym.guards import attackers as a
from workgym.guards.capabilities import (
    NOT_ATTACKABLE,
    SQL_ANSWER,
    GoldResult,
    ResultSet,
    RowsChannel,
    SqlChannel,
)
from workgym.guards.probes import AttackContext, Expect, Outcome, ScriptProbe

if TYPE_CHECKING:
    from workgym.core.environment import Environment
    from workgym.core.tasks import Task


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


def _first_cell(gold: ResultSet, match: Callable[[Any], bool]) -> tuple[int, int] | None:
    """The first cell (row, column) whose value matches, reading row by row."""
    for i, row in enumerate(gold.rows):
        for j, v in enumerate(row):
            if match(v):
                return i, j
    return None


def _nonzero_number(value: Any) -> bool:
    return a.is_number(value) and bool(value)


def _is_null(value: Any) -> bool:
    return value is None


def _replace(gold: ResultSet, cell: tuple[int, int], value: Any) -> ResultSet:
    rows = [list(r) for r in gold.rows]
    rows[cell[0]][cell[1]] = value
    return gold.model_copy(update={"rows": rows})


def bare_gold_sql(env: SqlChannel, task: Task) -> str:
    """The gold query without its trailing ';', so that a probe can wrap it as a subquery."""
    return env.gold_sql(task).strip().rstrip(";")


class GoldProbe(ScriptProbe):
    """A probe built from the task's gold result. The gold comes from the attack's cache during
    an attack (it may run the gold query) and from the environment when the probe is replayed
    as a test double; subclasses only say what to submit given the gold."""

    group = "sql"
    applies_to = frozenset({SQL_ANSWER})

    def gold_variants(
        self, env: Environment, task: Task, gold: ResultSet
    ) -> list[Sequence[Message]]:
        raise NotImplementedError

    def variants(self, env: Environment, task: Task) -> list[Sequence[Message]]:
        gold = env.gold_result(task) if isinstance(env, GoldResult) else None
        return [] if gold is None else self.gold_variants(env, task, gold)

    def variants_for(self, ctx: AttackContext, task: Task) -> list[Sequence[Message]]:
        gold = gold_of(ctx, task)
        return [] if gold is None else self.gold_variants(ctx.env, task, gold)


class _ResultProbe(GoldProbe):
    """A near miss of the gold result, submitted as rows and/or as SQL over the gold query."""

    def transform(self, gold: ResultSet) -> ResultSet | None:
        raise NotImplementedError

    def sql(self, gold_sql: str, gold: ResultSet) -> str | None:
        return None

    def fits(self, gold: ResultSet) -> bool:
        """Whether this gold gives the probe something to change (else it does not apply)."""
        return True

    def expect_for(self, gold: ResultSet) -> Expect | None:
        return self.expect if self.fits(gold) else None

    def expected(self, ctx: AttackContext, task: Task) -> Expect | None:
        gold = gold_of(ctx, task)
        return None if gold is None else self.expect_for(gold)

    def gold_variants(
        self, env: Environment, task: Task, gold: ResultSet
    ) -> list[Sequence[Message]]:
        out: list[Sequence[Message]] = []
        if isinstance(env, RowsChannel):
            changed = self.transform(gold)
            if changed is not None:
                out.append(env.submit_result(task, changed))
        if isinstance(env, SqlChannel):
            query = self.sql(bare_gold_sql(env, task), gold)
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


CellChange = tuple[tuple[int, int], Any, str]


class _CellProbe(_ResultProbe):
    """Changes one cell of the gold, as a row edit and as the same change in SQL, so both
    channels submit one near miss."""

    def change(self, gold: ResultSet) -> CellChange | None:
        """The cell, its new value, and the SQL expression that computes that value from the
        column (`{col}` stands for the quoted column name); None when no cell fits."""
        raise NotImplementedError

    def fits(self, gold: ResultSet) -> bool:
        return self.change(gold) is not None

    def transform(self, gold: ResultSet) -> ResultSet | None:
        found = self.change(gold)
        return None if found is None else _replace(gold, found[0], found[1])

    def sql(self, gold_sql: str, gold: ResultSet) -> str | None:
        found = self.change(gold)
        if found is None:
            return None
        (_, j), _, template = found
        col = qi(gold.columns[j])
        expr = f"{template.format(col=col)} AS {col}"
        return f"SELECT {_cols(gold, {j: expr})} FROM ({gold_sql}) AS g"


class Distinct(_ResultProbe):
    name = "sql-distinct"
    summary = "DISTINCT where the gold keeps duplicate rows (a set comparison accepts it)"

    def fits(self, gold: ResultSet) -> bool:
        return len(bag(gold.rows)) < len(gold.rows)

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

    def fits(self, gold: ResultSet) -> bool:
        return bool(gold.rows)

    def transform(self, gold: ResultSet) -> ResultSet | None:
        return gold.model_copy(update={"rows": [*gold.rows, gold.rows[0]]})

    def sql(self, gold_sql: str, gold: ResultSet) -> str | None:
        return (
            f"SELECT * FROM ({gold_sql}) AS g UNION ALL (SELECT * FROM ({gold_sql}) AS h LIMIT 1)"
        )


class Misaligned(_ResultProbe):
    name = "sql-misaligned-rows"
    summary = "right values in every column, rows misaligned (per-column sorting accepts it)"

    def fits(self, gold: ResultSet) -> bool:
        return self.transform(gold) is not None

    def transform(self, gold: ResultSet) -> ResultSet | None:
        if len(gold.columns) < 2 or len(gold.rows) < 2:
            return None
        col = [r[1] for r in gold.rows]
        for k in range(1, len(col)):
            rows = [[*r[:1], col[(i + k) % len(col)], *r[2:]] for i, r in enumerate(gold.rows)]
            if bag(rows) != bag(gold.rows):
                return gold.model_copy(update={"rows": rows})
        return None

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

    def fits(self, gold: ResultSet) -> bool:
        return gold.ordered and gold.rows[::-1] != gold.rows

    def transform(self, gold: ResultSet) -> ResultSet | None:
        return gold.model_copy(update={"rows": gold.rows[::-1]})


class ShuffledRows(_ResultProbe):
    name = "sql-shuffled-rows"
    expect = Expect.must_pass
    summary = "FN: the gold rows in another order on an unordered task must pass"

    def fits(self, gold: ResultSet) -> bool:
        return not gold.ordered and len(gold.rows) > 1

    def transform(self, gold: ResultSet) -> ResultSet | None:
        return gold.model_copy(update={"rows": gold.rows[1:] + gold.rows[:1]})

    def sql(self, gold_sql: str, gold: ResultSet) -> str | None:
        return f"SELECT * FROM ({gold_sql}) AS g ORDER BY hash({_cols(gold)}) DESC"


class ColumnsReordered(_ResultProbe):
    name = "sql-columns-reordered"
    expect = Expect.must_pass
    summary = "FN: the right columns in another order must pass (one permutation, whole rows)"

    def fits(self, gold: ResultSet) -> bool:
        return len(gold.columns) > 1

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


class OffHalfPercent(_CellProbe):
    name = "sql-off-0.5pct"
    summary = "one number off by 0.5% (an absolute 1e-2 tolerance accepts small ones)"

    def change(self, gold: ResultSet) -> CellChange | None:
        cell = _first_cell(gold, _nonzero_number)
        if cell is None:
            return None
        return cell, a.nudge(gold.rows[cell[0]][cell[1]], 0.005), "{col} * 1.005"


class OffTiny(_CellProbe):
    name = "sql-off-1e-12"
    expect = Expect.must_pass
    summary = "FN: numbers off by 1e-12 (relative) must pass; int and float compare numerically"

    def change(self, gold: ResultSet) -> CellChange | None:
        cell = _first_cell(gold, _nonzero_number)
        if cell is None:
            return None
        return cell, float(gold.rows[cell[0]][cell[1]]) * (1 + 1e-12), "{col} * (1 + 1e-12)"


class NullVsZero(_CellProbe):
    name = "sql-null-vs-zero"
    summary = "a NULL answered as 0 (or a 0 as NULL) must fail"

    def change(self, gold: ResultSet) -> CellChange | None:
        null = _first_cell(gold, _is_null)
        if null is not None:
            return null, 0, "coalesce({col}, 0)"
        zero = _first_cell(gold, lambda v: a.is_number(v) and v == 0)
        return None if zero is None else (zero, None, "nullif({col}, 0)")


class NullVsNull(_ResultProbe):
    name = "sql-null-vs-null"
    expect = Expect.must_pass
    summary = "FN: NULL in the answer where the gold has NULL must pass"

    def fits(self, gold: ResultSet) -> bool:
        return _first_cell(gold, _is_null) is not None

    def transform(self, gold: ResultSet) -> ResultSet | None:
        return gold

    def sql(self, gold_sql: str, gold: ResultSet) -> str | None:
        return gold_sql


class EmptyResult(_ResultProbe):
    name = "sql-where-1=0"
    summary = "an empty result (WHERE 1=0) where the gold has rows"

    def fits(self, gold: ResultSet) -> bool:
        return bool(gold.rows)

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
