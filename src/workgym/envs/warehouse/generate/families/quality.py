"""F7 data quality: null rates, duplicate keys and orphan references, as an analyst audits them.

Shapes: the share (or count) of rows with NULL in a column; rows that repeat an earlier row's
key (declared keys the data breaks, near keys such as weather's local hour at a DST change);
key values that occur more than once; rows (or distinct values) whose reference has no match.
Only what an analyst would call a defect is drafted (issue 40): repeats of a candidate key (not
an SCD2 business id, a measure, or an event's references unique by chance), and NULLs that mean
missing (not a versioned row's open end, the current version, the top of a hierarchy, nor a
column filled only where it applies).
Awkward shape:
- orphans_inner_left: counting orphan rows with `LEFT JOIN ... WHERE r.key IS NULL` also counts
  rows whose reference is NULL, which are missing, not orphaned (the question says which).
"""

from __future__ import annotations

from collections.abc import Iterator

from sqlglot import exp

from workgym.envs.warehouse.generate.families.counting import _interleave
from workgym.envs.warehouse.generate.families.draft import Context, Draft
from workgym.envs.warehouse.generate.families.filters import Cond, dim_conditions, where
from workgym.envs.warehouse.generate.families.sqlast import (
    and_all,
    col,
    compare,
    count_if,
    count_star,
    lit,
    percent,
    table,
)
from workgym.envs.warehouse.generate.phrasing import article, join_conditions
from workgym.envs.warehouse.schema.card import KeyCard, TableCard
from workgym.envs.warehouse.schema.meaning import candidate_key, null_means_current
from workgym.envs.warehouse.source.duck import qi

FAMILY = "F7"
# A column NULL in this share of rows or more is optional by design, and its NULLs no defect
# (decision 0183; rounds 6-7 judged every such F7 task on three warehouses meaningless).
OPTIONAL_NULL_RATE = 0.5
# A category whose values decide a column's NULLs (`_decided_nulls`): groups this large or
# larger must be never NULL or at least half NULL, over a category of at most this many values.
DETERMINING_GROUP_ROWS = 3
MAX_DETERMINING_VALUES = 60


def drafts(ctx: Context) -> Iterator[Draft]:
    gens = []
    for t in ctx.view.tables():
        gens += [_nulls(ctx, t), _duplicates(ctx, t)]
    gens += [_orphans(ctx, ctx.card.table(fk.table), fk) for fk in ctx.view.fks()]
    yield from _interleave(gens, ctx)


def _scope(ctx: Context, conds: list[Cond]) -> str:
    return f" where {join_conditions([c.words(ctx.lexicon) for c in conds])}" if conds else ""


def _nulls(ctx: Context, t: TableCard) -> Iterator[Draft]:
    lex = ctx.lexicon
    dims = dim_conditions(ctx, t, per_column=2)
    self_refs = {
        c for f in ctx.card.foreign_keys if f.table == f.ref_table == t.name for c in f.columns
    }
    decided = _decided_nulls(ctx, t, [c.name for c in ctx.view.nullable(t)])
    for c in ctx.view.nullable(t):
        if null_means_current(t, c.name, self_refs):
            ctx.skip(FAMILY, f"{t.name}.{c.name}: NULL means current or top, not missing")
            continue
        if c.null_rate >= OPTIONAL_NULL_RATE:
            # Filled only where it applies: EPSG's text definitions (NULL in every CRS defined
            # by code), a language's two-letter code, a plane's speed, a web page's customer, a
            # wind gust. "How many have none" then counts the rule, not a gap.
            ctx.skip(FAMILY, f"{t.name}.{c.name}: NULL in {c.null_rate:.0%} of rows, optional")
            continue
        partner = _qualifier_of(ctx, t, c.name, decided)
        if partner is not None:
            # NULL together with the value it qualifies: a Debian relation with no version
            # operator has no target version either (1,066 of 1,066); it is unversioned, not
            # missing one (round 16's blind judge, debian_history #25; decision 0197)
            ctx.skip(FAMILY, f"{t.name}.{c.name}: NULL with {partner}, an optional clause")
            continue
        by = decided.get(c.name)
        if by is not None:
            # NULL exactly where another column says it does not apply: Chinook's customer
            # state is NULL for every customer outside the countries with states (round 10's
            # blind judge read "customers with no recorded state" as meaningless)
            ctx.skip(FAMILY, f"{t.name}.{c.name}: NULL exactly for some values of {by}")
            continue
        if c.free_text or c.meaning == "text":
            # an optional comment or description left empty is no data-quality finding
            ctx.skip(FAMILY, f"{t.name}.{c.name}: optional free text, not missing data")
            continue
        for i, conds in enumerate([[], *[[d] for d in dims if d.column != c.name][:5]]):
            cond = where(conds)
            is_null = compare(col(c.name), "is_null", None)
            rows = lex.rows(t.name)
            what = lex.column(t.name, c.name)
            if i % 2 == 0:
                value = percent(count_if(is_null), count_star())
                quality = (
                    f"the percentage of {rows}{_scope(ctx, conds)} that have no recorded {what}"
                )
                kind, decimals, shape = "number", 2, "null_rate"
            else:
                value = count_if(is_null)
                quality = f"the number of {rows}{_scope(ctx, conds)} that have no recorded {what}"
                kind, decimals, shape = "integer", None, "null_count"
            q = exp.select(value).from_(table(t.name))
            yield Draft(
                family=FAMILY,
                shape=shape,
                kind=kind,  # type: ignore[arg-type]
                decimals=decimals,
                slots={"quality": quality},
                tables=(t.name,),
                sql=q.where(cond) if cond is not None else q,
                clauses=[f"{article(what).capitalize()} is missing when it is NULL."],
                nonzero=True,
            )


def _decided_nulls(ctx: Context, t: TableCard, columns: list[str]) -> dict[str, str]:
    """Columns of `columns` whose NULLs a category decides, each with that category: every
    group of at least DETERMINING_GROUP_ROWS rows is never NULL or at least half NULL, with
    both kinds present. The NULLs are then "does not apply" by design, not gaps: a state
    outside the countries with states (Chinook, all NULL there), a start date of a currency
    that is not legal tender (CLDR's funds and units of account: 28 of the 40 non-tenders have
    none, none of the 465 tenders lacks one; round 11's blind judge, world_reference #30,
    decision 0196). A yes/no flag is such a category too. One grouped scan per category
    counts every column at once."""
    found: dict[str, str] = {}
    for d in ctx.view.dims(t):
        rest = [c for c in columns if c not in found and c != d.name]
        if not rest or not 2 <= d.distinct_count <= MAX_DETERMINING_VALUES:
            continue
        counts = ", ".join(f"count({qi(c)})" for c in rest)
        groups = ctx.lookup(
            f"SELECT count(*), {counts} FROM {qi(t.name)} "
            f"GROUP BY {qi(d.name)} HAVING count(*) >= {DETERMINING_GROUP_ROWS}"
        )
        for i, c in enumerate(rest, start=1):
            kinds = {"never" if g[i] == g[0] else "mostly" if 2 * g[i] <= g[0] else "some"
                     for g in groups}  # fmt: skip
            if kinds == {"never", "mostly"}:
                found[c] = d.name
    return found


def _qualifier_of(ctx: Context, t: TableCard, column: str, decided: dict[str, str]) -> str | None:
    """A column `column` decides the NULLs of (`_decided_nulls`) that is NULL on every row where
    `column` is: the two are one optional clause (an operator and its version), so a NULL in
    `column` says the clause is absent, not that a value is missing."""
    for other, by in decided.items():
        if by != column:
            continue
        stray = ctx.lookup(
            f"SELECT count(*) FROM {qi(t.name)} WHERE {qi(column)} IS NULL "
            f"AND {qi(other)} IS NOT NULL"
        )
        if stray and stray[0][0] == 0:
            return other
    return None


def _key_tuple(key: KeyCard) -> exp.Expression:
    cols = [col(c) for c in key.columns]
    return cols[0] if len(cols) == 1 else exp.Tuple(expressions=cols)


def _duplicates(ctx: Context, t: TableCard) -> Iterator[Draft]:
    lex = ctx.lexicon
    broken = [k for k in t.keys + t.near_keys if k.duplicate_rows > 0]
    references = {c for f in ctx.card.foreign_keys if f.table == t.name for c in f.columns}
    for key in broken:
        if not candidate_key(t, key.columns, references):
            ctx.skip(FAMILY, f"{t.name} ({', '.join(key.columns)}): repeats, but is no key")
            continue
        # the key in words, its raw names only where a reader needs them to tell the columns
        # apart: "repeat the (alpha 2) of an earlier row" read a column out (round 10)
        said = join_conditions([lex.column(t.name, c) for c in key.columns])
        # A filter on one part of a composite key ("duplicates among authority 'EPSG'"); on a
        # one-column key the filter would pick the repeated value itself (answer 1 by design).
        dims = [
            d for d in dim_conditions(ctx, t, 3) if d.column in key.columns and len(key.columns) > 1
        ]
        for i, conds in enumerate([[], *[[d] for d in dims][:6]]):
            cond = where(conds)
            distinct = exp.Count(this=exp.Distinct(expressions=[_key_tuple(key)]))
            rows = lex.rows(t.name)
            if i % 2 == 0:
                value: exp.Expression = exp.Sub(this=count_star(), expression=distinct)
                q = exp.select(value).from_(table(t.name))
                q = q.where(cond) if cond is not None else q
                quality = (
                    f"the number of {rows}{_scope(ctx, conds)} whose {said} "
                    f"{'repeats that' if len(key.columns) == 1 else 'repeat those'} of an earlier "
                    f"{lex.row(t.name)}"
                )
                shape = "duplicate_rows"
            else:
                groups = exp.select(*[col(c) for c in key.columns]).from_(table(t.name))
                groups = groups.where(cond) if cond is not None else groups
                groups = groups.group_by(*[col(c) for c in key.columns]).having(
                    exp.GT(this=count_star(), expression=lit(1))
                )
                q = exp.select(count_star()).from_(groups.subquery("dups"))
                what = f"{said} values" if len(key.columns) == 1 else f"{said} combinations"
                quality = (
                    f"the number of distinct {what} that occur in more than one of the "
                    f"{rows}{_scope(ctx, conds)}"
                )
                shape = "duplicated_keys"
            yield Draft(
                family=FAMILY,
                shape=shape,
                kind="integer",
                slots={"quality": quality},
                tables=(t.name,),
                sql=q,
                clauses=["Rows with a NULL in any of these columns are not counted as repeats."]
                if any(t.column(c).null_count for c in key.columns)
                else [],
                nonzero=True,
            )


def _orphans(ctx: Context, t: TableCard, fk: object) -> Iterator[Draft]:
    from workgym.envs.warehouse.schema.card import ForeignKeyCard

    assert isinstance(fk, ForeignKeyCard)
    if fk.orphan_rows == 0:
        return
    lex = ctx.lexicon
    ref = ctx.card.table(fk.ref_table)
    fk_col, key = fk.columns[0], fk.ref_columns[0]
    nullable = t.column(fk_col).null_count > 0
    dims = [d for d in dim_conditions(ctx, t, 3) if d.column != fk_col]
    for i, conds in enumerate([[], *[[d] for d in dims][:10]]):
        link = exp.EQ(this=col(fk_col, "t"), expression=col(key, "r"))
        missing = exp.Not(
            this=exp.Exists(this=exp.select(lit(1)).from_(table(ref.name, "r")).where(link))
        )
        fact_where = where(conds, "t")
        has_ref = compare(col(fk_col, "t"), "not_null", None)
        filters = [has_ref, missing, *([fact_where] if fact_where is not None else [])]
        rows = lex.rows(t.name)
        what = lex.column(t.name, fk_col)
        distinct = i % 3 == 2
        value = (
            exp.Count(this=exp.Distinct(expressions=[col(fk_col, "t")]))
            if distinct
            else count_star()
        )
        q = exp.select(value).from_(table(t.name, "t")).where(and_all(filters))
        naive = None
        if nullable and not distinct:
            naive = exp.select(count_star()).from_(table(t.name, "t"))
            naive = naive.join(table(ref.name, "r"), on=link.copy(), join_type="left")
            naive_filters = [compare(col(key, "r"), "is_null", None)]
            if fact_where is not None:
                naive_filters.append(fact_where.copy())
            naive = naive.where(and_all(naive_filters))
        subject = f"distinct {what} values" if distinct else rows
        quality = (
            f"the number of {subject}{_scope(ctx, conds) if not distinct else ''} whose {what} "
            f"is recorded but not found among the {lex.rows(ref.name)}"
        )
        if distinct and conds:
            quality += f", among {rows}{_scope(ctx, conds)}"
        yield Draft(
            family=FAMILY,
            shape="orphan_values" if distinct else "orphan_rows",
            kind="integer",
            slots={"quality": quality},
            tables=tuple(sorted({t.name, ref.name})),
            sql=q,
            naive=naive,
            awkward="orphans_inner_left" if naive is not None else None,
            clauses=[
                f"{article(what).capitalize()} is found when some {lex.row(ref.name)} has it as "
                f"its {lex.column(ref.name, key)}; {rows} with no {what} at all are not counted."
            ],
            nonzero=True,
            note=f"{t.column(fk_col).null_count} rows have NULL {fk_col}"
            if naive is not None
            else "",
        )
