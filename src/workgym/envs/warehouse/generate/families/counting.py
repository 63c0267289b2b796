"""F1 filter/count: how many rows (or how much of a measure) match one or two conditions.

Plain shapes: COUNT(*) and SUM(measure) under filters bound from real top values; where a row
is not an event (an entity-period row with a `games` column) "how many" sums that count of
events instead of counting rows (shape sum_events; issue 40, decision 0145). Awkward shapes:
- timezone: rows on a local calendar date when the timestamp is stored in UTC (naive: UTC date);
- duplicates: distinct key combinations of a near key (naive: COUNT(*) counts the repeats);
- empty_result: a total over a filter that matches nothing is 0 (naive: SUM gives NULL);
- encoded_units: an HHMM clock column averaged in minutes after midnight (naive: averages HHMM).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from typing import Any

from sqlglot import exp

from workgym.envs.warehouse.generate.families.draft import (
    Context,
    Draft,
    additive,
    top_values,
    total_answer,
)
from workgym.envs.warehouse.generate.families.filters import (
    Cond,
    current_scope,
    dim_conditions,
    filter_sets,
    where,
)
from workgym.envs.warehouse.generate.families.sqlast import (
    agg,
    cast,
    coalesce,
    col,
    count_star,
    lit,
    table,
)
from workgym.envs.warehouse.generate.phrasing import join_conditions, time_zone_in
from workgym.envs.warehouse.schema.card import ColumnCard, TableCard
from workgym.envs.warehouse.schema.meaning import event_count

FAMILY = "F1"


def drafts(ctx: Context) -> Iterator[Draft]:
    facts = ctx.view.facts()
    yield from _interleave([_awkward(ctx, t) for t in facts] + [_plain(ctx, t) for t in facts], ctx)


def _interleave(gens: list[Iterator[Draft]], ctx: Context) -> Iterator[Draft]:
    """Round-robin over generators so every shape and table gets its turn."""
    live = list(gens)
    while live:
        for g in list(live):
            item = next(g, None)
            if item is None:
                live.remove(g)
            else:
                yield item


def _select(value: exp.Expression, t: TableCard, cond: exp.Expression | None) -> exp.Select:
    q = exp.select(value).from_(table(t.name))
    return q.where(cond) if cond is not None else q


def _slots(ctx: Context, t: TableCard, conds: list[str], metric: str) -> dict[str, str]:
    """The words of every F1 question: which rows, under which conditions, measured how."""
    lex = ctx.lexicon
    return {
        "rows": lex.rows(t.name),
        "conds": join_conditions(conds),
        "table": t.name,
        "metric": metric,
    }


def how_many(ctx: Context, t: TableCard) -> tuple[exp.Expression, str, str]:
    """(value, shape, metric words) of "how many" over `t`: its rows where a row is an event,
    else the sum of its count-of-events column ("number of games" of player-season rows)."""
    events = event_count(t)
    if events is None:
        return count_star(), "count", "count"
    words = ctx.lexicon.number_of(t.name, events.name)
    return agg("sum", col(events.name)), "sum_events", words


def _plain(ctx: Context, t: TableCard) -> Iterator[Draft]:
    lex = ctx.lexicon
    value, shape, metric = how_many(ctx, t)
    events = event_count(t)  # its total is "how many" already
    measures = [m for m in ctx.view.measures(t) if additive(m) and m is not events]
    current = current_scope(ctx, t)  # a versioned table counts its current rows
    scope = [current[0]] if current else []
    clauses = [current[1]] if current else []
    for i, conds in enumerate(filter_sets(ctx, t)):
        words = [c.words(lex) for c in conds]
        if i % 3 != 2 or not measures:
            yield Draft(
                family=FAMILY,
                shape=shape,
                kind="integer",
                slots=_slots(ctx, t, words, metric),
                tables=(t.name,),
                sql=_select(value.copy(), t, where(conds + scope)),
                nonzero=True,
                population_sql=_select(value.copy(), t, where(scope)),
                clauses=list(clauses),
            )
            continue
        m = measures[i % len(measures)]
        kind, decimals = total_answer(m)
        yield Draft(
            family=FAMILY,
            shape="sum",
            kind=kind,
            slots=_slots(ctx, t, words, lex.total(t.name, m.name)),
            tables=(t.name,),
            sql=_select(agg("sum", col(m.name)), t, where(conds + scope)),
            decimals=decimals,
            nonzero=True,
            clauses=list(clauses),
        )


def _awkward(ctx: Context, t: TableCard) -> Iterator[Draft]:
    gens = [_timezone(ctx, t), _duplicates(ctx, t), _empty(ctx, t), _hhmm(ctx, t)]
    yield from _interleave(gens, ctx)


def _utc_timestamps(t: TableCard) -> list[ColumnCard]:
    """Timestamp columns known to hold UTC (a time-zone-aware source type, or a comment)."""
    return [
        c
        for c in t.columns
        if c.family == "timestamp"
        and ("TIME ZONE" in c.source_type.upper() or "UTC" in (c.comment or ""))
    ]


def _timezone(ctx: Context, t: TableCard) -> Iterator[Draft]:
    zone = time_zone_in(t)
    stamps = _utc_timestamps(t)
    if zone is None or not stamps:
        return
    ts = stamps[0]
    lex = ctx.lexicon
    days = _dates(ts, ctx)
    dims = [c for c in dim_conditions(ctx, t, per_column=2) if c.table == t.name]
    local = cast(
        exp.Anonymous(this="timezone", expressions=[lit(zone), cast(col(ts.name), "TIMESTAMPTZ")]),
        "DATE",
    )
    utc = cast(col(ts.name), "DATE")
    for i, day in enumerate(days):
        extra = [dims[i % len(dims)]] if dims and i % 2 else []
        day_lit = cast(lit(day.isoformat()), "DATE")
        rest = where(extra)
        correct = exp.EQ(this=local.copy(), expression=day_lit)
        naive = exp.EQ(this=utc.copy(), expression=day_lit.copy())
        conds_words = [f"the {lex.describe(t.name, ts.name)} falls on {day.isoformat()}"]
        conds_words += [c.words(lex) for c in extra]

        def both(c: exp.Expression, rest: exp.Expression | None = rest) -> exp.Expression:
            return exp.And(this=c, expression=rest.copy()) if rest is not None else c

        yield Draft(
            family=FAMILY,
            shape="count_local_date",
            kind="integer",
            slots=_slots(ctx, t, conds_words, "count"),
            tables=(t.name,),
            sql=_select(count_star(), t, both(correct)),
            naive=_select(count_star(), t, both(naive)),
            awkward="timezone",
            clauses=[
                f"Dates are local calendar dates in the {zone} time zone; "
                f"{ts.name} is stored in UTC."
            ],
            nonzero=True,
            note=f"local date in {zone} versus the UTC date of {ts.name}",
        )


def _dates(ts: ColumnCard, ctx: Context) -> list[dt.date]:
    """Daylight-saving change days (US rules) in the column's range, then a few other days."""
    try:
        lo = dt.datetime.fromisoformat(str(ts.min)).date()
        hi = dt.datetime.fromisoformat(str(ts.max)).date()
    except ValueError:
        return []
    out: list[dt.date] = []
    for year in range(lo.year, hi.year + 1):
        march = dt.date(year, 3, 8 + (6 - dt.date(year, 3, 8).weekday()) % 7)
        november = dt.date(year, 11, 1 + (6 - dt.date(year, 11, 1).weekday()) % 7)
        out += [d for d in (march, november) if lo < d < hi]
    span = (hi - lo).days
    for _ in range(6):
        if span > 2:
            out.append(lo + dt.timedelta(days=ctx.rng.randrange(1, span - 1)))
    return sorted(set(out))


def _duplicates(ctx: Context, t: TableCard) -> Iterator[Draft]:
    lex = ctx.lexicon
    for near in t.near_keys:
        cols = near.columns
        key_list = ", ".join(cols)
        dup_rows = ctx.lookup(
            f"SELECT {key_list} FROM {exp.to_identifier(t.name).sql('duckdb')} "
            f"GROUP BY ALL HAVING count(*) > 1 ORDER BY ALL LIMIT 20"
        )
        seen: set[tuple[Any, ...]] = set()
        for row in dup_rows:
            values = dict(zip(cols, row, strict=True))
            dims = [c for c in cols if t.column(c).role != "measure" and c.lower() != "day"]
            for pick in (dims[:1], dims[:2]):
                conds = [Cond(t.name, c, "=", values[c]) for c in pick if values[c] is not None]
                ident = tuple((c.column, c.value) for c in conds)
                if not conds or ident in seen:
                    continue
                seen.add(ident)
                distinct = exp.Count(
                    this=exp.Distinct(expressions=[exp.Tuple(expressions=[col(c) for c in cols])])
                )
                yield Draft(
                    family=FAMILY,
                    shape="count_distinct_key",
                    kind="integer",
                    slots=_slots(
                        ctx,
                        t,
                        [c.words(lex) for c in conds],
                        f"number of distinct ({key_list}) combinations",
                    ),
                    tables=(t.name,),
                    sql=_select(distinct, t, where(conds)),
                    naive=_select(count_star(), t, where(conds)),
                    awkward="duplicates",
                    clauses=["Count each combination once, even if several rows share it."],
                    nonzero=True,
                    note=f"({key_list}) repeats in {near.duplicate_rows} rows",
                )


def _empty(ctx: Context, t: TableCard) -> Iterator[Draft]:
    """Totals over filters that match no row: the answer is 0, not 'no answer'."""
    dims = ctx.view.dims(t)
    measures = [m for m in ctx.view.measures(t) if additive(m)]
    if len(dims) < 2 or not measures:
        return
    lex = ctx.lexicon
    for a, b in [(x, y) for x in dims for y in dims if x.name < y.name][:6]:
        va, vb = top_values(a, 8), top_values(b, 8)
        if not va or not vb:
            continue
        ident = exp.to_identifier
        present = {
            (r[0], r[1])
            for r in ctx.lookup(
                f"SELECT DISTINCT {ident(a.name).sql('duckdb')}, {ident(b.name).sql('duckdb')} "
                f"FROM {ident(t.name).sql('duckdb')}"
            )
        }
        missing = [(x, y) for x in va for y in vb if (x, y) not in present]
        for j, (x, y) in enumerate(missing[:4]):
            m = measures[j % len(measures)]
            conds = [Cond(t.name, a.name, "=", x), Cond(t.name, b.name, "=", y)]
            total = agg("sum", col(m.name))
            kind, decimals = total_answer(m)
            yield Draft(
                family=FAMILY,
                shape="sum_empty",
                kind=kind,
                decimals=decimals,
                slots=_slots(
                    ctx,
                    t,
                    [c.words(lex) for c in conds],
                    lex.total(t.name, m.name),
                ),
                tables=(t.name,),
                sql=_select(coalesce(total, 0), t, where(conds)),
                naive=_select(total.copy(), t, where(conds)),
                awkward="empty_result",
                clauses=["If no rows match, the total is zero."],
                note="no row matches: SUM over nothing is NULL, the stated answer is 0",
            )


def _hhmm(ctx: Context, t: TableCard) -> Iterator[Draft]:
    lex = ctx.lexicon
    clocks = ctx.view.hhmm(t)
    if not clocks:
        return
    for i, conds in enumerate(filter_sets(ctx, t, limit=12)):
        c = clocks[i % len(clocks)]
        minutes = exp.Add(
            this=exp.Mul(
                this=exp.IntDiv(this=col(c.name), expression=lit(100)), expression=lit(60)
            ),
            expression=exp.Mod(this=col(c.name), expression=lit(100)),
        )
        yield Draft(
            family=FAMILY,
            shape="avg_clock_minutes",
            kind="number",
            decimals=1,
            slots=_slots(
                ctx,
                t,
                [x.words(lex) for x in conds],
                f"average {lex.column(t.name, c.name)}, in minutes after midnight,",
            ),
            tables=(t.name,),
            sql=_select(agg("avg", minutes), t, where(conds)),
            naive=_select(agg("avg", col(c.name)), t, where(conds)),
            awkward="encoded_units",
            clauses=[f"Rows with no recorded {lex.column(t.name, c.name)} are left out."],
            note=f"{c.name} is an HHMM clock time, not a number of minutes",
        )
