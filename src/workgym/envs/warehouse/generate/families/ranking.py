"""F2 group + top-k: which k groups (or rows) rank highest by a count, total or average.

Every ranking states its tie rule (the group key ascending) and the generator records whether
the k-th and (k+1)-th values are apart. Some tasks ask for the ranked keys (answer kind top_k),
others for an SQL query returning key and metric in order (answer kind sql).
Awkward shapes:
- ties_null_order: rows ranked by a measure with ties at the boundary (naive: the other tie
  order) or with NULLs (naive: NULLS FIRST, PostgreSQL's default for DESC);
- orphans_inner_left: groups taken from a referenced table where some rows have no match and
  count as 'unknown' (naive: an INNER JOIN drops them);
- null_group: grouping by a column with NULLs that are not a group (naive: NULL ranks too).
"""

from __future__ import annotations

from collections.abc import Iterator

from sqlglot import exp

from workgym.envs.warehouse.generate.families.counting import _interleave, how_many
from workgym.envs.warehouse.generate.families.draft import Context, Draft, additive
from workgym.envs.warehouse.generate.families.filters import Cond, dim_conditions, where
from workgym.envs.warehouse.generate.families.sqlast import (
    agg,
    and_all,
    coalesce,
    col,
    compare,
    count_star,
    table,
)
from workgym.envs.warehouse.generate.phrasing import join_conditions
from workgym.envs.warehouse.schema.card import ColumnCard, ForeignKeyCard, TableCard
from workgym.envs.warehouse.schema.column_roles import id_like, open_end, surrogate
from workgym.envs.warehouse.schema.meaning import averageable, category

FAMILY = "F2"
MIN_GROUP_ROWS = 30


def drafts(ctx: Context) -> Iterator[Draft]:
    gens = []
    for t in ctx.view.facts():
        gens += [_groups(ctx, t), _null_group(ctx, t), _via_fk(ctx, t)]
    for t in ctx.view.tables():
        gens.append(_top_rows(ctx, t))
    yield from _interleave(gens, ctx)


def plural(phrase: str) -> str:
    if phrase.endswith(")") and " (" in phrase:
        head, _, tail = phrase.rpartition(" (")
        return f"{plural(head)} ({tail}"
    if phrase.endswith(("ss", "x", "ch", "sh")):
        return phrase + "es"  # "item classes", not "item class"
    if phrase.endswith("s"):
        return phrase
    if phrase.endswith("y") and not phrase.endswith(("ay", "ey", "oy")):
        return phrase[:-1] + "ies"
    return phrase + "s"


def _ordered(
    metric: exp.Expression,
    key: exp.Expression,
    *,
    nulls_first: bool = False,
    key_desc: bool = False,
) -> list[exp.Ordered]:
    return [
        exp.Ordered(this=metric, desc=True, nulls_first=nulls_first),
        exp.Ordered(this=key, desc=key_desc),
    ]


def _among(ctx: Context, conds: list[Cond], rows: str, metric: str = "") -> str:
    """The rows a ranking counts, said once: "by number of package relations where relation
    is 'breaks'", not "... among package relations where ..." after a metric that already
    names them (round 17's blind judge, debian_history #4, stilted R; decision 0197)."""
    if not conds:
        return ""
    said = join_conditions([c.words(ctx.lexicon) for c in conds])
    if metric == f"number of {rows}":
        return f" where {said}"
    return f" among {rows} where {said}"


def _groups(ctx: Context, t: TableCard) -> Iterator[Draft]:
    lex = ctx.lexicon
    dims = [d for d in ctx.view.dims(t) if d.null_count == 0 and d.distinct_count > 4]
    conds_pool = dim_conditions(ctx, t, per_column=2)
    measures = ctx.view.measures(t)
    i = 0
    for g in dims:
        others = [c for c in conds_pool if c.column != g.name]
        for conds in [[], *[[c] for c in others[:6]]]:
            i += 1
            k = 3 if i % 2 else 5
            if g.distinct_count <= k + 1:
                continue
            group = col(g.name)
            rows = lex.rows(t.name)
            if i % 3 == 0 and measures:
                m = measures[i % len(measures)]
                func = "avg" if i % 2 or not additive(m) else "sum"  # no total temperature
                value: exp.Expression = agg(func, col(m.name))
                word = "average" if func == "avg" else "total"
                metric = f"{word} {lex.column_with_unit(t.name, m.name)}"
            else:
                value, metric = _how_many(ctx, t)
            q = exp.select(group, exp.alias_(value, "metric")).from_(table(t.name))
            cond = where(conds)
            if cond is not None:
                q = q.where(cond)
            q = q.group_by(group.copy())
            clauses = [f"Break ties by the {lex.column(t.name, g.name)} in ascending order."]
            if isinstance(value, exp.Avg):
                q = q.having(
                    exp.GTE(this=count_star(), expression=exp.Literal.number(MIN_GROUP_ROWS))
                )
                clauses.insert(0, f"Only groups with at least {MIN_GROUP_ROWS} {rows} count.")
            q = q.order_by(*_ordered(exp.column("metric"), group.copy())).limit(k)
            # An SQL answer is compared on the data, which rarely has a group of exactly
            # MIN_GROUP_ROWS rows: `>=` vs `>` in HAVING could not be told apart. Ask for keys.
            as_sql = i % 4 == 1 and not isinstance(value, exp.Avg)
            slots = {
                "k": str(k),
                "groups": plural(lex.column(t.name, g.name)),
                "metric": metric,
                "among": _among(ctx, conds, rows, metric),
            }
            yield Draft(
                family=FAMILY,
                shape="top_groups",
                kind="sql" if as_sql else "top_k",
                slots=slots,
                tables=(t.name,),
                sql=q if as_sql else _keys_only(q),
                k=k,
                ordered=True,
                clauses=clauses,
                max_rows=k,
                min_rows=k,
                answer_phrase=(
                    f"two columns, {g.name} and the {metric}, one row per group, highest first"
                    if as_sql
                    else f"values of {t.name}.{g.name}"
                ),
            )


def _how_many(ctx: Context, t: TableCard) -> tuple[exp.Expression, str]:
    """The "number of" metric of `t`: rows, or the sum of its count of events (issue 40)."""
    value, shape, words = how_many(ctx, t)
    return value, (f"number of {ctx.lexicon.rows(t.name)}" if shape == "count" else words)


def _keys_only(q: exp.Select) -> exp.Select:
    """The same ranking, keeping the metric as the second column (needed for the gap check)."""
    return q


def _null_group(ctx: Context, t: TableCard) -> Iterator[Draft]:
    lex = ctx.lexicon
    references = {c for f in ctx.card.foreign_keys if f.table == t.name for c in f.columns}
    nullable = [
        c
        for c in t.columns
        if c.null_count > 0
        # a surrogate key is a row's number: "the top 3 refunded household demographics" by
        # their numbers is nothing an analyst asks (issue 40); the via-fk shape ranks labels
        and not surrogate(t, c, c.name in references)
        and c.family in ("string", "integer")
        and not c.free_text
        and c.role in ("dimension", "identifier")
        and c.distinct_count > 5
        and category(c)
    ]
    conds_pool = dim_conditions(ctx, t, per_column=3)
    for g in nullable:
        for j, conds in enumerate([[], *[[c] for c in conds_pool if c.column != g.name][:8]]):
            k = 3 if j % 2 == 0 else 5
            group = col(g.name)
            rows = lex.rows(t.name)
            value, metric = _how_many(ctx, t)
            base = exp.select(group, exp.alias_(value, "metric")).from_(table(t.name))
            cond = where(conds)
            good = base.where(
                and_all([*([cond] if cond else []), compare(group.copy(), "not_null", None)])
            )  # type: ignore[list-item]
            naive = base.where(cond) if cond is not None else base
            order = _ordered(exp.column("metric"), group.copy())
            yield Draft(
                family=FAMILY,
                shape="top_groups_nullable",
                kind="top_k",
                slots={
                    "k": str(k),
                    "groups": plural(lex.column(t.name, g.name)),
                    "metric": metric,
                    "among": _among(ctx, conds, rows, metric),
                },
                tables=(t.name,),
                sql=good.group_by(group.copy()).order_by(*order).limit(k),
                naive=naive.copy()
                .group_by(group.copy())
                .order_by(*[o.copy() for o in order])
                .limit(k),
                awkward="null_group",
                k=k,
                min_rows=k,
                max_rows=k,
                clauses=[
                    f"{rows.capitalize()} with no recorded {lex.column(t.name, g.name)} "
                    "are not a group.",
                    f"Break ties by the {lex.column(t.name, g.name)} in ascending order.",
                ],
                answer_phrase=f"values of {t.name}.{g.name}",
                note=f"{g.null_count} rows have NULL {g.name}",
            )


def _label_dims(ctx: Context, ref: TableCard) -> list[ColumnCard]:
    return [
        c
        for c in ctx.view.dims(ref)
        if c.family == "string" and c.name not in ref.single_keys() and c.distinct_count > 3
    ]


def _via_fk(ctx: Context, t: TableCard) -> Iterator[Draft]:
    conds_pool = dim_conditions(ctx, t, per_column=2)
    for fk in ctx.view.fks_from(t.name):
        ref = ctx.card.table(fk.ref_table)
        for attr in _label_dims(ctx, ref):
            for j, conds in enumerate(
                [[], *[[c] for c in conds_pool if c.column != fk.columns[0]][:6]]
            ):
                yield from _fk_group(ctx, t, fk, ref, attr, conds, 3 if j % 2 == 0 else 5)


def _fk_group(
    ctx: Context,
    t: TableCard,
    fk: ForeignKeyCard,
    ref: TableCard,
    attr: ColumnCard,
    conds: list[Cond],
    k: int,
) -> Iterator[Draft]:
    lex = ctx.lexicon
    rows = lex.rows(t.name)
    on = exp.EQ(this=col(fk.columns[0], "t"), expression=col(fk.ref_columns[0], "r"))
    orphans = fk.orphan_rows > 0 or t.column(fk.columns[0]).null_count > 0
    label = coalesce(col(attr.name, "r"), "unknown") if orphans else col(attr.name, "r")
    group = exp.alias_(label, "grp")
    value, metric = _how_many(ctx, t)
    if not isinstance(value, exp.Count):
        value = value.transform(lambda n: col(n.name, "t") if isinstance(n, exp.Column) else n)

    def build(kind: str) -> exp.Select:
        q = exp.select(group.copy(), exp.alias_(value.copy(), "metric"))
        q = q.from_(table(t.name, "t"))
        q = q.join(table(ref.name, "r"), on=on.copy(), join_type=kind)
        cond = where(conds, "t")
        if cond is not None:
            q = q.where(cond)
        order = _ordered(exp.column("metric"), exp.column("grp"))
        return q.group_by(exp.column("grp")).order_by(*order).limit(k)

    fk_words = lex.column(t.name, fk.columns[0])
    # The groups' owner named as the row the key reaches: "refunded address states", not
    # "refunded address customer address states" (the role kept only where it says which).
    owner = lex.referenced(t.name, fk.columns[0], ref.name, fk.ref_columns[0])
    groups = plural(f"{owner} {lex.column(ref.name, attr.name)}")
    clauses = [f"Break ties by the {lex.column(ref.name, attr.name)} in ascending order."]
    if orphans:
        # The gold's 'unknown' also holds rows whose referenced row has no value to group by
        # (COALESCE of the joined column): the clause says so, or 'unknown' reads as missing
        # references only (rounds 13-14: 821 of 1,819 'unknown' returns had an address with
        # no street type; judged ambiguous).
        absent = (
            f"{rows.capitalize()} whose {fk_words} is missing or not found among the "
            f"{lex.rows(ref.name)}"
        )
        if attr.null_count > 0:
            absent += f", or whose {owner} has no recorded {lex.column(ref.name, attr.name)},"
        clauses.insert(0, f"{absent} count under the group 'unknown'.")
    yield Draft(
        family=FAMILY,
        shape="top_groups_via_fk",
        kind="top_k",
        slots={
            "k": str(k),
            "groups": groups,
            "metric": metric,
            "among": _among(ctx, conds, rows, metric),
        },
        tables=(t.name, ref.name),
        sql=build("left" if orphans else "inner"),
        naive=build("inner") if orphans else None,
        awkward="orphans_inner_left" if orphans else None,
        k=k,
        min_rows=k,
        max_rows=k,
        clauses=clauses,
        answer_phrase=f"values of {ref.name}.{attr.name} (or 'unknown')"
        if orphans
        else f"values of {ref.name}.{attr.name}",
        note=f"{fk.orphan_rows} {rows} reference no {ref.name} row" if orphans else "",
        declared=["unknown"] if orphans else [],
    )


def _top_rows(ctx: Context, t: TableCard) -> Iterator[Draft]:
    """The k rows with the highest measure: ties and NULLs decide whether the naive order works."""
    keys = sorted(t.single_keys())
    if not keys or t.rows > 100_000:
        return
    # Name rows by their label when it is unique (a surrogate number says nothing), else by
    # their identifier (c_custkey), not by another unique column (c_address).
    label = t.label_column()
    if label is not None and label.distinct_count == t.rows and label.null_count == 0:
        key = label.name
    else:
        key = min(
            keys,
            key=lambda k: (not id_like(t, t.column(k)), t.column(k).family != "integer", k),
        )
    lex = ctx.lexicon
    # A versioned table's rows are versions: rank the current ones (an expired version's price
    # is history, round 11 #7, #9), and say so.
    end = open_end(t)
    if end is not None and t.column(end).null_count < 5:
        return
    current = [compare(col(end), "is_null", None)] if end is not None else []
    references = {f.columns[0] for f in ctx.view.fks_from(t.name)}
    candidates = [
        c
        for c in t.columns
        if c.family in ("integer", "float", "decimal")
        and c.name != key
        and c.role in ("measure", "dimension")
        and c.name not in references
        and not id_like(t, c)
        and c.distinct_count >= 10
        and averageable(t, c)  # rows are not ranked by a day of month or a code
    ]
    for m in candidates:
        for k in (3, 5):
            nullable = m.null_count > 0
            keyc, mc = col(key), col(m.name)
            good = exp.select(keyc, exp.alias_(mc, "metric")).from_(table(t.name))
            for cond in [c.copy() for c in current]:
                good = good.where(cond)
            if nullable:
                good = good.where(compare(mc.copy(), "not_null", None))
            sql = good.order_by(*_ordered(mc.copy(), keyc.copy())).limit(k)
            base = exp.select(keyc.copy(), exp.alias_(mc.copy(), "metric")).from_(table(t.name))
            for cond in [c.copy() for c in current]:
                base = base.where(cond)
            naive_order = (
                _ordered(mc.copy(), keyc.copy(), nulls_first=True)
                if nullable
                else _ordered(mc.copy(), keyc.copy(), key_desc=True)
            )
            naive = base.order_by(*naive_order).limit(k)
            clauses = [f"Break ties by the {lex.column(t.name, key)} in ascending order."]
            if end is not None:
                clauses.insert(
                    0,
                    f"Rank only the current {lex.rows(t.name)}: those whose valid-to date "
                    f"({t.name}.{end}) is empty, as every earlier version has one.",
                )
            if nullable:
                clauses.insert(
                    0, f"Ignore {lex.rows(t.name)} with no recorded {lex.column(t.name, m.name)}."
                )
            slots = {
                "k": str(k),
                "groups": lex.rows(t.name),
                "metric": lex.column_with_unit(t.name, m.name),
                "among": "",
            }
            common = dict(
                family=FAMILY,
                kind="top_k",
                slots=slots,
                tables=(t.name,),
                k=k,
                min_rows=k,
                max_rows=k,
                clauses=clauses,
                answer_phrase=f"values of {t.name}.{key}",
            )
            yield Draft(
                shape="top_rows",
                sql=sql,
                naive=naive,
                awkward="ties_null_order",
                note="NULLs sort first under DESC in PostgreSQL"
                if nullable
                else "ties at the top-k boundary",
                **common,  # type: ignore[arg-type]
            )
            yield Draft(shape="top_rows", sql=sql.copy(), **common)  # type: ignore[arg-type]
