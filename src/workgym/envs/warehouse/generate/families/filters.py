"""Filter conditions bound from the card: real top values, round thresholds, calendar parts.

Every family that filters rows draws its conditions here, so a filter value is always one that
occurs in the data (a top value of the column) and a threshold is always a round number near a
quantile; each condition carries its SQL tree and its words.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

from sqlglot import exp

from workgym.envs.warehouse.generate.families.draft import Context, threshold, top_values
from workgym.envs.warehouse.generate.families.sqlast import and_all, col, compare
from workgym.envs.warehouse.generate.phrasing import Lexicon
from workgym.envs.warehouse.schema.card import TableCard
from workgym.envs.warehouse.schema.column_roles import open_end


@dataclass(frozen=True)
class Cond:
    table: str
    column: str
    op: str
    value: Any = None

    def ast(self, alias: str | None = None) -> exp.Expression:
        return compare(col(self.column, alias), self.op, self.value)

    def words(self, lexicon: Lexicon, owner: str | None = None) -> str:
        """The condition in words; `owner` names the row it is about when that is not the
        question's own ("the plane's manufacturer is 'BOEING'", "the package is essential")."""
        return lexicon.condition(self.table, self.column, self.op, self.value, owner=owner)


def where(conds: list[Cond], alias: str | None = None) -> exp.Expression | None:
    return and_all([c.ast(alias) for c in conds])


def current_scope(ctx: Context, table: TableCard) -> tuple[Cond, str] | None:
    """The condition and the sentence that keep a versioned table's current rows, or None for
    a table that is not versioned. "How many territory currencies are legal tender" means now:
    465 rows are, 203 of them periods that ended (Andorra's peseta), so round 17's blind judge
    read 262 where the gold counted every period (world_reference #5, #15, #27; decision 0197).
    F2's rankings scope the same way (decision 0188)."""
    end = open_end(table)
    if end is None:
        return None
    rows = ctx.lexicon.rows(table.name)
    sentence = (
        f"Count only the current {rows}: those whose valid-to date ({table.name}.{end}) is "
        "empty, as every earlier version has one."
    )
    return Cond(table.name, end, "is_null"), sentence


def dim_conditions(ctx: Context, table: TableCard, per_column: int = 3) -> list[Cond]:
    """Equality conditions on the table's dimensions, with their most frequent values."""
    out = []
    for c in ctx.view.dims(table):
        if c.distinct_count >= table.rows:
            continue
        for v in top_values(c, per_column):
            out.append(Cond(table.name, c.name, "=", v))
    return out


def measure_conditions(ctx: Context, table: TableCard) -> list[Cond]:
    out = []
    for c in ctx.view.measures(table):
        for q, op in (("p75", ">"), ("p90", ">"), ("p25", "<")):
            t = _on_a_value(ctx, table, c.name, threshold(c, q), q)
            if t is not None:
                out.append(Cond(table.name, c.name, op, t))
    return out


def _on_a_value(
    ctx: Context, table: TableCard, column: str, rounded: float | None, quantile: str
) -> Any:
    """The round threshold if some row sits exactly on it, else the quantile's own value.

    A threshold that no row equals makes `>` and `>=` answer alike on the real data, so only
    the fuzzed copies could tell a wrong comparison from the right one; a value that occurs
    makes the real database do it too.
    """
    if rounded is None:
        return None
    t, c = exp.to_identifier(table.name).sql("duckdb"), exp.to_identifier(column).sql("duckdb")
    hits = ctx.lookup(f"SELECT count(*) FROM {t} WHERE {c} = {rounded!r}")
    if hits and hits[0][0]:
        return rounded
    q = int(quantile[1:]) / 100
    found = ctx.lookup(f"SELECT quantile_disc({c}, {q}) FROM {t}")
    value = found[0][0] if found else None
    return value if isinstance(value, int | float) and not isinstance(value, bool) else rounded


def month_conditions(ctx: Context, table: TableCard) -> list[Cond]:
    parts = ctx.view.time_parts(table)
    month = parts.get("month")
    if month is None:
        return []
    values = sorted(v for v in top_values(month, 12) if isinstance(v, int))
    return [Cond(table.name, month.name, "=", v) for v in values]


def filter_sets(ctx: Context, table: TableCard, limit: int = 60) -> list[list[Cond]]:
    """Up to `limit` condition lists (1-2 conditions each, on distinct columns), shuffled;
    never two equalities of which one implies the other (a city and its country) or that never
    hold together (a city and another city's country)."""
    dims = dim_conditions(ctx, table)
    measures = measure_conditions(ctx, table)
    months = month_conditions(ctx, table)
    sets: list[list[Cond]] = [[d] for d in dims]
    sets += [[d, m] for d, m in itertools.product(dims, measures)]
    sets += [[d, m] for d, m in itertools.product(dims, months)]
    sets += [[a, b] for a, b in itertools.combinations(dims, 2) if a.column != b.column]
    sets += [[m] for m in measures]
    ctx.rng.shuffle(sets)
    out: list[list[Cond]] = []
    for conds in sets:
        if len(out) >= limit:
            break
        if not implied(ctx, table, conds) and not disjoint(ctx, table, conds):
            out.append(conds)
    return out


def _pair_counts(ctx: Context, table: TableCard, conds: list[Cond]) -> tuple[int, int, int] | None:
    """Rows where both of two equality conditions hold, where the first does, the second does
    (one scan per pair, cached by the runner); None for anything else."""
    if len(conds) != 2 or any(c.op != "=" for c in conds):
        return None
    a, b = (c.ast().sql("duckdb") for c in conds)
    name = exp.to_identifier(table.name).sql("duckdb")
    found = ctx.lookup(
        f"SELECT count(*) FILTER (WHERE {a} AND {b}), count(*) FILTER (WHERE {a}), "
        f"count(*) FILTER (WHERE {b}) FROM {name}"
    )
    return (int(found[0][0]), int(found[0][1]), int(found[0][2])) if found else None


def implied(ctx: Context, table: TableCard, conds: list[Cond]) -> bool:
    """Whether one of two equality conditions holds on every row the other selects, so that it
    adds nothing ("city is 'Lyon' and country is 'FR'"; issue 40, decision 0145)."""
    counts = _pair_counts(ctx, table, conds)
    return counts is not None and bool(counts[0]) and counts[0] in counts[1:]


def disjoint(ctx: Context, table: TableCard, conds: list[Cond]) -> bool:
    """Whether two equality conditions never hold together (a city with another city's postal
    code): such a filter matches nothing, so every anti-join under it is vacuous."""
    counts = _pair_counts(ctx, table, conds)
    return counts is not None and counts[0] == 0
