"""F3 join path / bridge: questions whose conditions live in another table than the rows counted.

Plain shapes follow foreign keys (inferred or declared): one hop (flights -> planes), two
foreign keys of one table at once (a bridge between two dimensions, possibly the same table in
two roles such as origin and destination airports), and two-hop chains (lineitem -> orders ->
customer). Awkward shapes:
- fan_out: a total of the referenced table's measure over the rows the fact table uses, each
  counted once (naive: summing after the join counts a plane once per flight);
- ambiguous_column: the referenced table and the fact table share a column name (planes.year
  vs flights.year); the naive query reads the fact table's column.
"""

from __future__ import annotations

from collections.abc import Iterator

from sqlglot import exp

from workgym.envs.warehouse.generate.families.counting import _interleave
from workgym.envs.warehouse.generate.families.draft import Context, Draft, additive, total_answer
from workgym.envs.warehouse.generate.families.filters import (
    Cond,
    dim_conditions,
    filter_sets,
    where,
)
from workgym.envs.warehouse.generate.families.sqlast import agg, and_all, col, count_star, table
from workgym.envs.warehouse.generate.phrasing import join_conditions
from workgym.envs.warehouse.runtime.lint import VACUOUS_SHARE
from workgym.envs.warehouse.schema.card import ForeignKeyCard, TableCard
from workgym.envs.warehouse.schema.meaning import averageable, event_count

FAMILY = "F3"


def drafts(ctx: Context) -> Iterator[Draft]:
    gens = []
    for t in ctx.view.facts():
        gens += [_one_hop(ctx, t), _bridge(ctx, t), _chain(ctx, t), _fan_out(ctx, t)]
    yield from _interleave(gens, ctx)


def _ref_conditions(ctx: Context, ref: TableCard, per_column: int = 3) -> list[Cond]:
    """Conditions on a referenced row that pick out something: not a key, and not a value
    held by 95% or more of the referenced rows. "The package is not essential" holds for 687
    of 710 packages, and round 17's blind judge called a count under it meaningless (debian
    #8; decision 0197)."""
    keys = ref.single_keys()
    return [
        c
        for c in dim_conditions(ctx, ref, per_column)
        if c.column not in keys and _held(ref, c) < VACUOUS_SHARE * ref.rows
    ]


def _held(ref: TableCard, cond: Cond) -> int:
    """How many of `ref`'s rows hold an equality condition's value (0 when not profiled)."""
    column = ref.column(cond.column)
    return next((v.count for v in column.top_values if v.value == cond.value), 0)


def _via(ctx: Context, fk: ForeignKeyCard, cond: Cond) -> str:
    """A condition on the referenced row, as an analyst writes it: "the plane's manufacturer
    is 'BOEING'" (issue 40: not "its tailnum refers to a plane whose ...")."""
    return cond.words(ctx.lexicon, owner=f"the {_reached(ctx, fk)}")


def _reached(ctx: Context, fk: ForeignKeyCard) -> str:
    return ctx.lexicon.referenced(fk.table, fk.columns[0], fk.ref_table, fk.ref_columns[0])


def _on(fk: ForeignKeyCard, left: str, right: str) -> exp.Expression:
    return exp.EQ(this=col(fk.columns[0], left), expression=col(fk.ref_columns[0], right))


def _metric(ctx: Context, t: TableCard, i: int) -> tuple[exp.Expression, str, str, int | None]:
    """(aggregate over alias t, words, answer kind, decimals): counts, or an average measure."""
    measures = ctx.view.measures(t)
    if i % 3 == 2 and measures:
        m = measures[i % len(measures)]
        words = f"average {ctx.lexicon.column_with_unit(t.name, m.name)}"
        return agg("avg", col(m.name, "t")), words, "number", 2
    events = event_count(t)  # "how many" of entity-period rows sums their count of events
    if events is not None:
        words = ctx.lexicon.number_of(t.name, events.name)
        return agg("sum", col(events.name, "t")), words, "integer", None
    return count_star(), "count", "integer", None


def _one_hop(ctx: Context, t: TableCard) -> Iterator[Draft]:
    lex = ctx.lexicon
    fact_conds = dim_conditions(ctx, t, per_column=2)
    i = 0
    for fk in ctx.view.fks_from(t.name):
        ref = ctx.card.table(fk.ref_table)
        for rc in _ref_conditions(ctx, ref):
            for extra in [[], *[[c] for c in fact_conds if c.column != fk.columns[0]][:3]]:
                i += 1
                value, metric, kind, decimals = _metric(ctx, t, i)
                q = exp.select(value).from_(table(t.name, "t"))
                q = q.join(table(ref.name, "r"), on=_on(fk, "t", "r"))
                q = q.where(and_all([rc.ast("r"), *[c.ast("t") for c in extra]]))  # type: ignore[arg-type]
                # The row's own conditions first: "relation is 'breaks' and the package's
                # section is 'libdevel'" cannot be read as two conditions on the package.
                words = [*[c.words(lex) for c in extra], _via(ctx, fk, rc)]
                yield Draft(
                    family=FAMILY,
                    shape="one_hop",
                    kind=kind,  # type: ignore[arg-type]
                    decimals=decimals,
                    slots={
                        "metric": metric,
                        "rows": lex.rows(t.name),
                        "conds": join_conditions(words),
                    },
                    tables=(t.name, ref.name),
                    sql=q,
                    nonzero=True,
                    population_sql=_population(t, value, kind, [c.ast("t") for c in extra]),
                )


def _population(
    t: TableCard, value: exp.Expression, kind: str, own: list[exp.Expression] | None = None
) -> exp.Expression | None:
    """The count over every row of `t` that meets the row's `own` conditions (a count's
    population; an average has none). With the row's own conditions in it, the condition on
    the referenced row must cut something: 1,512 of the 1,575 `>=` relations have a package
    that is not essential, so "... and the package is not essential" asked nothing (round 16's
    blind judge, debian_history #10; decision 0197)."""
    if kind != "integer":
        return None
    q = exp.select(value.copy()).from_(table(t.name, "t"))
    return q.where(and_all(own)) if own else q


def _bridge(ctx: Context, t: TableCard) -> Iterator[Draft]:
    """Two foreign keys of the same fact row, each with a condition on its referenced row."""
    lex = ctx.lexicon
    fks = ctx.view.fks_from(t.name)
    i = 0
    for a_i, fa in enumerate(fks):
        for fb in fks[a_i + 1 :]:
            ra, rb = ctx.card.table(fa.ref_table), ctx.card.table(fb.ref_table)
            conds_a, conds_b = _ref_conditions(ctx, ra, 2), _ref_conditions(ctx, rb, 2)
            pairs = [(x, y) for x in conds_a for y in conds_b][:8]
            ctx.rng.shuffle(pairs)
            for ca, cb in pairs:
                i += 1
                value, metric, kind, decimals = _metric(ctx, t, i)
                q = exp.select(value).from_(table(t.name, "t"))
                q = q.join(table(ra.name, "a"), on=_on(fa, "t", "a"))
                q = q.join(table(rb.name, "b"), on=_on(fb, "t", "b"))
                q = q.where(and_all([ca.ast("a"), cb.ast("b")]))  # type: ignore[arg-type]
                yield Draft(
                    family=FAMILY,
                    shape="bridge",
                    kind=kind,  # type: ignore[arg-type]
                    decimals=decimals,
                    slots={
                        "metric": metric,
                        "rows": lex.rows(t.name),
                        "conds": join_conditions([_via(ctx, fa, ca), _via(ctx, fb, cb)]),
                    },
                    tables=tuple(sorted({t.name, ra.name, rb.name})),
                    sql=q,
                    nonzero=True,
                    population_sql=_population(t, value, kind),
                )


def _chain(ctx: Context, t: TableCard) -> Iterator[Draft]:
    """t -> r1 -> r2: a condition two foreign keys away."""
    lex = ctx.lexicon
    for f1 in ctx.view.fks_from(t.name):
        for f2 in ctx.view.fks_from(f1.ref_table):
            if f2.ref_table == t.name:
                continue
            r1, r2 = ctx.card.table(f1.ref_table), ctx.card.table(f2.ref_table)
            for rc in _ref_conditions(ctx, r2, 3):
                q = exp.select(count_star()).from_(table(t.name, "t"))
                q = q.join(table(r1.name, "r1"), on=_on(f1, "t", "r1"))
                q = q.join(table(r2.name, "r2"), on=_on(f2, "r1", "r2"))
                q = q.where(rc.ast("r2"))
                words = rc.words(lex, owner=f"the {_reached(ctx, f1)}'s {_reached(ctx, f2)}")
                yield Draft(
                    family=FAMILY,
                    shape="chain",
                    kind="integer",
                    slots={"metric": "count", "rows": lex.rows(t.name), "conds": words},
                    tables=tuple(sorted({t.name, r1.name, r2.name})),
                    sql=q,
                    nonzero=True,
                    population_sql=_population(t, count_star(), "integer"),
                )


def _fan_out(ctx: Context, t: TableCard) -> Iterator[Draft]:
    lex = ctx.lexicon
    sets = filter_sets(ctx, t, limit=10)
    for fk in ctx.view.fks_from(t.name):
        ref = ctx.card.table(fk.ref_table)
        shared = {c.name for c in t.columns} & {c.name for c in ref.columns}
        measures = [m for m in ctx.view.measures(ref) if m.name not in shared and additive(m)]
        ambiguous = [
            c
            for c in ref.columns
            if c.name in shared
            and c.name not in fk.ref_columns
            and c.family in ("integer", "float", "decimal")
            and t.column(c.name).family in ("integer", "float", "decimal")
            and averageable(ref, c)
        ]
        for i, conds in enumerate(sets):
            fact_cond = where(conds)
            used = exp.select(col(fk.columns[0])).from_(table(t.name))
            if fact_cond is not None:
                used = used.where(fact_cond)
            in_used = exp.In(this=col(fk.ref_columns[0]), query=used.subquery())
            scope = join_conditions([c.words(lex) for c in conds])
            # "items that have at least one store return whose net loss is ...": round 9's
            # blind judge read "the item is used by at least one store return where ..." as
            # key-path talk (phrasing.HAVING_TEMPLATES)
            having = f"{lex.row(t.name)}" + (f" whose {scope}" if scope else "")
            # Both naive neighbours aggregate over the join instead of over the used rows of ref.
            joined = (
                exp.select()
                .from_(table(t.name, "t"))
                .join(table(ref.name, "r"), on=_on(fk, "t", "r"))
            )
            joined_where = where(conds, "t")
            if joined_where is not None:
                joined = joined.where(joined_where)
            if measures:
                m = measures[i % len(measures)]
                correct = exp.select(agg("sum", col(m.name))).from_(table(ref.name)).where(in_used)
                kind, decimals = total_answer(m)
                yield Draft(
                    family=FAMILY,
                    shape="distinct_ref_total",
                    kind=kind,
                    decimals=decimals,
                    slots={
                        "metric": lex.total(ref.name, m.name),
                        "rows": lex.rows(ref.name),
                        "having": having,
                    },
                    tables=(ref.name, t.name),
                    sql=correct,
                    naive=joined.copy().select(agg("sum", col(m.name, "r"))),
                    awkward="fan_out",
                    clauses=[f"Count each {lex.row(ref.name)} once."],
                    nonzero=True,
                    note=f"one {lex.row(ref.name)} appears in many {lex.rows(t.name)}",
                )
            for c in ambiguous[:1]:
                correct = (
                    exp.select(agg("avg", col(c.name))).from_(table(ref.name)).where(in_used.copy())
                )
                phrase = lex.describe(ref.name, c.name)
                yield Draft(
                    family=FAMILY,
                    shape="distinct_ref_average",
                    kind="number",
                    decimals=2,
                    slots={
                        "metric": f"average {phrase}",
                        "rows": lex.rows(ref.name),
                        "having": having,
                    },
                    tables=(ref.name, t.name),
                    sql=correct,
                    naive=joined.copy().select(agg("avg", col(c.name, "t"))),
                    awkward="ambiguous_column",
                    clauses=[f"Count each {lex.row(ref.name)} once."],
                    note=f"{c.name} exists in both {t.name} and {ref.name}",
                )
