"""F5 ratio: what percentage of a population satisfies a condition.

The population is always stated ("all flights where origin is 'JFK'", "flights with a recorded
departure delay"), because it is what the two awkward shapes get wrong:
- null_denominator: the condition is on a column with NULLs and the population is the rows where
  it is recorded (naive: divides by COUNT(*));
- orphans_inner_left: the condition is on a referenced table and the population includes rows
  whose reference has no match (naive: an INNER JOIN drops them from the denominator).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from sqlglot import exp

from workgym.envs.warehouse.generate.families.counting import _interleave
from workgym.envs.warehouse.generate.families.draft import Context, Draft, threshold
from workgym.envs.warehouse.generate.families.filters import (
    Cond,
    current_scope,
    dim_conditions,
    measure_conditions,
    where,
)
from workgym.envs.warehouse.generate.families.sqlast import (
    col,
    count_if,
    count_star,
    percent,
    table,
)
from workgym.envs.warehouse.generate.phrasing import join_conditions
from workgym.envs.warehouse.schema.card import ForeignKeyCard, TableCard

FAMILY = "F5"


def drafts(ctx: Context) -> Iterator[Draft]:
    gens = []
    for t in ctx.view.facts():
        gens += [_plain(ctx, t), _null_denominator(ctx, t), _orphans(ctx, t)]
    yield from _interleave(gens, ctx)


def _among(ctx: Context, t: TableCard, conds: list[Cond]) -> str:
    if not conds:
        return ""
    return f" where {join_conditions([c.words(ctx.lexicon) for c in conds])}"


def _population(
    ctx: Context, t: TableCard, conds: list[Cond], extra: str = "", current: bool = False
) -> str:
    rows = ctx.lexicon.rows(t.name)
    scope = f"all {'current ' if current else ''}{rows}{_among(ctx, t, conds)}"
    return f"The population is {scope}{extra}."


def _draft(
    ctx: Context, t: TableCard, conds: list[Cond], rows: str, cond: str, **fields: Any
) -> Draft:
    """Every F5 task: the percentage (two decimals, never zero) of `rows` where `cond` holds."""
    return Draft(
        family=FAMILY,
        kind="number",
        decimals=2,
        slots={"rows": rows, "among": _among(ctx, t, conds), "cond": cond},
        nonzero=True,
        proper_share=True,  # 100% (city -> country) is a total condition, no question
        **fields,
    )


def _plain(ctx: Context, t: TableCard) -> Iterator[Draft]:
    lex = ctx.lexicon
    dims = dim_conditions(ctx, t, per_column=3)
    preds = [c for c in measure_conditions(ctx, t) if t.column(c.column).null_count == 0]
    preds += [c for c in dims if t.column(c.column).null_count == 0]
    current = current_scope(ctx, t)  # a versioned table's shares are of current rows
    scope_said = [current[1]] if current else []
    for i, pred in enumerate(preds):
        scopes = [[], *[[d] for d in dims if d.column != pred.column][:3]]
        for conds in scopes[i % 2 :: 2]:
            yield _draft(
                ctx,
                t,
                conds,
                lex.rows(t.name),
                pred.words(lex),
                shape="share",
                tables=(t.name,),
                sql=_share(t, pred, conds + ([current[0]] if current else []), count_star()),
                clauses=[_population(ctx, t, conds, current=bool(current)), *scope_said],
            )


def _null_denominator(ctx: Context, t: TableCard) -> Iterator[Draft]:
    lex = ctx.lexicon
    dims = dim_conditions(ctx, t, per_column=2)
    for m in ctx.view.measures(t, nullable=True):
        if m.null_rate > 0.9:
            continue
        for q_name in ("p75", "p90", "p25"):
            value = threshold(m, q_name)
            if value is None:
                continue
            pred = Cond(t.name, m.name, "<" if q_name == "p25" else ">", value)
            for conds in [[], *[[d] for d in dims][:3]]:
                what = lex.column(t.name, m.name)
                rows = lex.rows(t.name)
                yield _draft(
                    ctx,
                    t,
                    conds,
                    f"{rows} with a recorded {what}",
                    pred.words(lex),
                    shape="share_of_recorded",
                    tables=(t.name,),
                    sql=_share(t, pred, conds, exp.Count(this=col(m.name))),
                    naive=_share(t, pred, conds, count_star()),
                    awkward="null_denominator",
                    clauses=[
                        f"The population is {rows}{_among(ctx, t, conds)} whose {what} is "
                        f"recorded; {rows} with no recorded {what} are left out."
                    ],
                    note=f"{m.null_count} rows have NULL {m.name}",
                )


def _orphans(ctx: Context, t: TableCard) -> Iterator[Draft]:
    lex = ctx.lexicon
    dims = dim_conditions(ctx, t, per_column=3)
    for fk in ctx.view.fks_from(t.name):
        if fk.orphan_rows == 0:
            continue
        ref = ctx.card.table(fk.ref_table)
        keys = ref.single_keys()
        ref_conds = [c for c in dim_conditions(ctx, ref, 3) if c.column not in keys]
        for j, rc in enumerate(ref_conds):
            for conds in [[], [dims[j % len(dims)]]] if dims else [[]]:
                if conds and conds[0].column == fk.columns[0]:
                    continue
                fk_words = lex.column(t.name, fk.columns[0])
                yield _draft(
                    ctx,
                    t,
                    conds,
                    lex.rows(t.name),
                    f"the {lex.referenced(t.name, fk.columns[0], ref.name, fk.ref_columns[0])}'s "
                    f"{rc.words(lex)}",
                    shape="share_via_fk",
                    tables=(t.name, ref.name),
                    sql=_share_via(t, ref, fk, rc, conds, "left"),
                    naive=_share_via(t, ref, fk, rc, conds, "inner"),
                    awkward="orphans_inner_left",
                    clauses=[
                        _population(
                            ctx,
                            t,
                            conds,
                            f", including those whose {fk_words} is not found among the "
                            f"{lex.rows(ref.name)}",
                        )
                    ],
                    note=f"{fk.orphan_rows} {lex.rows(t.name)} reference no {ref.name} row",
                )


def _share(t: TableCard, pred: Cond, conds: list[Cond], denominator: exp.Expression) -> exp.Select:
    q = exp.select(percent(count_if(pred.ast()), denominator)).from_(table(t.name))
    cond = where(conds)
    return q.where(cond) if cond is not None else q


def _share_via(
    t: TableCard, ref: TableCard, fk: ForeignKeyCard, rc: Cond, conds: list[Cond], kind: str
) -> exp.Select:
    """Share of fact rows whose referenced row matches `rc`, joined `kind` (left or inner)."""
    on = exp.EQ(this=col(fk.columns[0], "t"), expression=col(fk.ref_columns[0], "r"))
    q = exp.select(percent(count_if(rc.ast("r")), count_star())).from_(table(t.name, "t"))
    q = q.join(table(ref.name, "r"), on=on, join_type=kind)
    cond = where(conds, "t")
    return q.where(cond) if cond is not None else q
