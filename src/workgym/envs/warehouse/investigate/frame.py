"""What an investigation looks at: a fact table, its clock, its periods, and metrics over it.

A `Frame` is chosen from the schema card only (generators see the card, never the source): a
fact table with a timestamp or date column (or ISO dates in text, a key into a date dimension:
TPC-DS ws_sold_date_sk -> date_dim.d_date, or its header's date through the header key:
order_lines.order_id -> orders.order_date), at least one dimension to slice by, and
enough history for period-over-period comparisons: weeks when it spans ten weeks or more, else
days, and months when its weeks would average fewer rows than a bucket needs (`choose_period`:
31 years of Debian changelog entries hold about seven a week, thirty a month).
A `Metric` is one number per period written as two row expressions, a numerator and an optional
denominator, so that every metric (a count, a sum, an average, a joined count) decomposes over
slices by plain sums: the explainer, the gate and the findings all rest on that.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from workgym.envs.warehouse.generate.families.draft import CardView
from workgym.envs.warehouse.generate.phrasing import Lexicon
from workgym.envs.warehouse.schema.card import ColumnCard, SchemaCard, TableCard
from workgym.envs.warehouse.schema.column_roles import is_text_date, versioned_columns
from workgym.envs.warehouse.schema.meaning import summable
from workgym.envs.warehouse.source.duck import qi, ql

Period = Literal["month", "week", "day"]
MetricKind = Literal["count", "sum", "avg", "joined_count", "joined_sum", "hour_avg"]
MAX_SLICE_VALUES = 120  # a dimension with more values makes slices too thin to read
# The smallest fact table investigations consider, and the size from which slices keep their
# full floors (decision 0161). A plant needs a slice of at least `plant_rows` rows in both the
# baseline and the window holding at most 35% of a period's rows (design.ONE_DIM_SHARE), over
# MIN_PERIODS complete periods plus two partial ones: 12 * 10 / 0.35 = 343 rows at the small
# floor of 10, 12 * 30 / 0.35 = 1029 at the full floor of 30 (the old MIN_FACT_ROWS of 1000).
# Below FULL_FACT_ROWS the slice floors drop, and the solvability gate decides on the planted
# copy whether the plant is still the one clear explanation.
MIN_FACT_ROWS = 350
FULL_FACT_ROWS = 1000
PLANT_ROWS = (30, 10)  # rows a planted slice needs in each period: full, small tables
RANK_ROWS = (30, 20)  # rows (baseline + window) a slice needs to be ranked: full, small
MIN_PERIODS = 10
TIMESTAMP_FAMILIES = ("timestamp", "timestamptz")
# Nominal lengths, for comparing grains; a month's real bounds come from `advance`.
PERIOD_DAYS = {"month": 30, "week": 7, "day": 1}
# A period must average this many rows for a move in it to be read at all (the grain's bucket
# floor, grain.MIN_BUCKET_ROWS) and for a planted slice of PLANT_ROWS[1] rows to hold at most
# 35% of it: 10 / 0.35 = 29.
MIN_PERIOD_ROWS = 30
# The largest share of a period's rows a planted one-dimension slice may hold (design.py).
MAX_SLICE_SHARE = 0.35
# The full slice floors need periods that average 30 / 0.35 = 86 rows. A table's size stood
# for its periods' sizes while every table spanned about a year; 11,295 Debian changelog
# entries over 31 years average 30 a month, so the floors now follow the period (decision 0182).
FULL_PERIOD_ROWS = math.ceil(PLANT_ROWS[0] / MAX_SLICE_SHARE)


class Join(BaseModel):
    """A one-hop foreign key from the fact table: predicates may name the dimension's columns."""

    model_config = ConfigDict(frozen=True)

    fact_column: str
    dim: str
    dim_column: str
    columns: list[str] = Field(default_factory=list)


class Frame(BaseModel):
    """A fact table as investigations see it."""

    model_config = ConfigDict(frozen=True)

    fact: str
    time_column: str
    time_is_timestamp: bool
    period: Period = "week"
    dims: list[str]
    measures: list[str]
    columns: list[str]
    types: dict[str, str] = Field(default_factory=dict)
    identifiers: list[str] = Field(default_factory=list)  # integer ids remapped in copies
    date_parts: list[str] = Field(default_factory=list)  # year, month, day (all three or none)
    joins: list[Join] = Field(default_factory=list)
    rows: int = 0
    period_rows: float = 0.0  # rows per period, on average over the time column's span
    # Time behind a key (TPC-DS): `time_column` is then the fact's key into `time_dim`, whose
    # `time_dim_column` holds the date of row `time_dim_key`.
    time_dim: str | None = None
    time_dim_key: str | None = None
    time_dim_column: str | None = None
    time_anchor: tuple[int, str] | None = None  # (key, date): date = date + (key - key) days
    # The time is the header's (order_lines.order_id -> orders.order_date): many headers share
    # a date, so no key stands for a date and rows cannot be moved in time (no mix_shift).
    time_via_header: bool = False

    @property
    def t(self) -> str:
        """The time column as a timestamp expression over alias `f`."""
        col = f"f.{qi(self.time_column)}"
        if self.time_anchor is not None:
            k0, d0 = self.time_anchor
            return f"CAST(DATE {ql(d0)} + CAST({col} - {int(k0)} AS INTEGER) AS TIMESTAMP)"
        if self.time_dim is not None:
            return f"CAST(({self.date_of(col)}) AS TIMESTAMP)"
        return col if self.time_is_timestamp else f"CAST({col} AS TIMESTAMP)"

    def date_of(self, key: str) -> str:
        """The scalar subquery reading the date dimension's date of key expression `key`."""
        assert self.time_dim and self.time_dim_key and self.time_dim_column
        return (
            f"SELECT dd.{qi(self.time_dim_column)} FROM {qi(self.time_dim)} AS dd "
            f"WHERE dd.{qi(self.time_dim_key)} = {key}"
        )

    def key_of(self, timestamp: str) -> str:
        """The scalar subquery finding the date dimension's key of a timestamp expression."""
        assert self.time_dim and self.time_dim_key and self.time_dim_column
        if self.time_via_header:
            raise ValueError(f"{self.fact}'s time is its header's: no key stands for a date")
        if self.time_anchor is not None:
            k0, d0 = self.time_anchor
            return f"SELECT {int(k0)} + date_diff('day', DATE {ql(d0)}, CAST({timestamp} AS DATE))"
        return (
            f"SELECT dk.{qi(self.time_dim_key)} FROM {qi(self.time_dim)} AS dk "
            f"WHERE CAST(dk.{qi(self.time_dim_column)} AS TIMESTAMP) = {timestamp}"
        )

    @property
    def time_words(self) -> str:
        """Where the time is, for questions: a column, or a column reached through a key."""
        if self.time_dim is None:
            return f"{self.fact}.{self.time_column}"
        return (
            f"{self.time_dim}.{self.time_dim_column} (reached through "
            f"{self.fact}.{self.time_column} = {self.time_dim}.{self.time_dim_key})"
        )

    def dim_sql(self, dim: str) -> str:
        """A slicing dimension as SQL over alias `f`: the fact's own column, or a column of its
        header read through the header key (`changelog_entry.distribution` of a change item)."""
        if dim in self.columns:
            return f"f.{qi(dim)}"
        table, _, column = dim.rpartition(".")
        j = self.join(table)
        return (
            f"(SELECT any_value(h.{qi(column)}) FROM {qi(table)} AS h "
            f"WHERE h.{qi(j.dim_column)} = f.{qi(j.fact_column)})"
        )

    def join(self, dim: str) -> Join:
        for j in self.joins:
            if j.dim == dim:
                return j
        raise KeyError(f"no foreign key from {self.fact} to {dim}")


class Metric(BaseModel):
    """One number per period: sum(num) / sum(den), or sum(num) when `den` is None."""

    model_config = ConfigDict(frozen=True)

    kind: MetricKind
    fact: str
    column: str | None = None  # the fact measure (sum, avg) or the FK (joined_*)
    dim: str | None = None
    dim_key: str | None = None
    dim_column: str | None = None  # joined_sum: the dimension's measure
    label: str = ""
    integer: bool = False  # the value is a whole number (counts, integer sums)

    @property
    def tables(self) -> list[str]:
        return sorted({self.fact, *([self.dim] if self.dim else [])})

    def source(self, frame: Frame, relation: str | None = None) -> str:
        """FROM clause: the fact (or a relation standing in for it) as `f`, plus the join."""
        base = f"{relation or qi(self.fact)} AS f"
        if self.kind in ("joined_count", "joined_sum"):
            assert self.dim and self.dim_key and self.column
            keep = f", any_value({qi(self.dim_column)}) AS m" if self.dim_column else ""
            dim = (
                f"(SELECT {qi(self.dim_key)} AS k{keep} FROM {qi(self.dim)} "
                f"GROUP BY {qi(self.dim_key)})"
            )
            return f"{base} LEFT JOIN {dim} AS d ON f.{qi(self.column)} = d.k"
        return base

    def num(self, frame: Frame) -> str:
        col = f"f.{qi(self.column)}" if self.column else ""
        return {
            "count": "1",
            "sum": f"coalesce({col}, 0)",
            "avg": col,
            "joined_count": "CAST(d.k IS NOT NULL AS INTEGER)",
            "joined_sum": "coalesce(d.m, 0)",
            "hour_avg": f"hour({frame.t})",
        }[self.kind]

    def den(self, frame: Frame) -> str | None:
        if self.kind == "avg":
            return f"CAST(f.{qi(self.column or '')} IS NOT NULL AS INTEGER)"
        if self.kind == "hour_avg":
            return f"CAST({frame.t} IS NOT NULL AS INTEGER)"
        return None

    def value_sql(self, frame: Frame) -> str:
        """The metric as one aggregate expression."""
        den = self.den(frame)
        num = f"sum({self.num(frame)})"
        if den is None:
            return num
        return f"{num} / nullif(sum({den}), 0)"


def _small(frame: Frame) -> bool:
    """Whether the small slice floors apply: a small table, or thin periods."""
    return frame.rows < FULL_FACT_ROWS or 0 < frame.period_rows < FULL_PERIOD_ROWS


def plant_rows(frame: Frame) -> int:
    """Rows a planted slice needs in each of baseline and window (see MIN_FACT_ROWS)."""
    return PLANT_ROWS[_small(frame)]


def plantable_period_rows(frame: Frame) -> int:
    """Rows a period needs to hold a plantable slice: `plant_rows` at MAX_SLICE_SHARE."""
    return math.ceil(plant_rows(frame) / MAX_SLICE_SHARE)


def rank_rows(frame: Frame) -> int:
    """Rows (baseline + window) a slice needs before the explainer ranks it."""
    return RANK_ROWS[_small(frame)]


def ts(value: dt.datetime) -> str:
    """A timestamp literal (UTC, no zone) for SQL."""
    return f"TIMESTAMP {ql(value.strftime('%Y-%m-%d %H:%M:%S'))}"


def iso(value: dt.datetime) -> str:
    return value.strftime("%Y-%m-%dT%H:%M:%S")


def between(frame: Frame, start: dt.datetime, end: dt.datetime) -> str:
    return f"{frame.t} >= {ts(start)} AND {frame.t} < {ts(end)}"


def _time_column(table: TableCard) -> ColumnCard | None:
    """The fact's own clock: a timestamp or date column, or ISO dates held as text (never a
    record-version bound)."""
    versions = versioned_columns(table)
    found = [
        c
        for c in table.columns
        if (c.family in (*TIMESTAMP_FAMILIES, "date") or is_text_date(c))
        and c.null_rate < 0.05
        and c.name not in versions
    ]
    found.sort(key=lambda c: (c.family not in TIMESTAMP_FAMILIES, -c.distinct_count, c.name))
    return found[0] if found else None


def discover(card: SchemaCard) -> tuple[list[Frame], list[str]]:
    """Frames for every fact table that can host investigations, and why others cannot."""
    view = CardView(card)
    frames: list[Frame] = []
    skipped: list[str] = []
    for table in view.facts():
        time_col = _time_column(table)
        link = card.time_link(table.name) if time_col is None else None
        time_name = time_col.name if time_col else (link.column if link else None)
        # A slice may also be a low-cardinality foreign key (TPC-DS facts hold nothing else):
        # the slice is a set of rows, and a conclusion may name it through the dimension.
        keyed = {c for f in view.fks_from(table.name) for c in f.columns}
        slicers = view.dims(table) + [
            c for c in table.columns if c.name in keyed and c.family == "integer"
        ]
        dims = [
            c.name
            for c in slicers
            if 2 <= c.distinct_count <= MAX_SLICE_VALUES and time_name and c.name != time_name
        ]
        if link is not None and link.via == "header":
            dims += header_dims(view, card.table(link.dim))
        if table.rows < MIN_FACT_ROWS:
            skipped.append(f"{table.name}: {table.rows} rows, fewer than {MIN_FACT_ROWS}")
            continue
        if time_name is None:
            skipped.append(
                f"{table.name}: no timestamp or date column, and no key into a date dimension, "
                "to form periods"
            )
            continue
        if not dims:
            skipped.append(f"{table.name}: no dimension with 2-{MAX_SLICE_VALUES} values")
            continue
        span = _span_days(time_col) if time_col else _link_span(link.min, link.max) if link else 0
        period = choose_period(span, table.rows)
        if period is None:
            skipped.append(f"{table.name}: {time_name} spans fewer than {MIN_PERIODS} days")
            continue
        parts = {c.name.lower(): c.name for c in table.columns if c.family == "integer"}
        date_parts = (
            [parts["year"], parts["month"], parts["day"]]
            if {"year", "month", "day"} <= set(parts)
            else []
        )
        joins = []
        for fk in view.fks_from(table.name):
            dim = card.table(fk.ref_table)
            joins.append(
                Join(
                    fact_column=fk.columns[0],
                    dim=dim.name,
                    dim_column=fk.ref_columns[0],
                    columns=[c.name for c in dim.columns],
                )
            )
        frames.append(
            Frame(
                fact=table.name,
                time_column=time_name,
                time_is_timestamp=time_col is not None and time_col.family in TIMESTAMP_FAMILIES,
                time_dim=link.dim if link else None,
                time_dim_key=link.key if link else None,
                time_dim_column=link.time_column if link else None,
                time_anchor=(
                    (link.anchor_key, link.anchor_date)
                    if link and link.anchor_key is not None and link.anchor_date
                    else None
                ),
                time_via_header=link is not None and link.via == "header",
                period=period,
                dims=dims,
                measures=[c.name for c in view.measures(table)],
                columns=[c.name for c in table.columns],
                types={c.name: c.type for c in table.columns},
                identifiers=[
                    c.name
                    for c in table.columns
                    if c.role == "identifier" and c.family == "integer"
                ],
                date_parts=date_parts,
                joins=joins,
                rows=table.rows,
                period_rows=round(table.rows * PERIOD_DAYS[period] / max(span, 1.0), 1),
            )
        )
    return frames, skipped


def header_dims(view: CardView, header: TableCard) -> list[str]:
    """A line table's slices through its header (decision 0184): a change item belongs to its
    changelog entry's distribution as an order line to its order's channel. Lines rarely hold a
    category of their own (Debian's change items hold none), and their header's categories are
    what an analyst slices them by. Named `header.column`, as predicates name a referenced
    table's column."""
    return [
        f"{header.name}.{c.name}"
        for c in view.dims(header)
        if 2 <= c.distinct_count <= MAX_SLICE_VALUES
    ]


def metrics(frame: Frame, card: SchemaCard, words: MetricWords) -> list[Metric]:
    """Every metric this frame supports, labelled for questions."""
    table = card.table(frame.fact)
    out = [Metric(kind="count", fact=frame.fact, label=words.count(frame), integer=True)]
    for m in frame.measures:
        column = table.column(m)
        if summable(column):  # no total of a price or a per-unit cost (round 13 #26)
            label = words.sum(frame, m)
            integer = column.family == "integer"
            out.append(Metric(kind="sum", fact=frame.fact, column=m, label=label, integer=integer))
        out.append(Metric(kind="avg", fact=frame.fact, column=m, label=words.avg(frame, m)))
    for j in frame.joins:
        dim = card.table(j.dim)
        if dim.rows < 2 or frame.fact == j.dim:
            continue
        if frame.time_via_header and j.fact_column == frame.time_column:
            continue  # every dated line matches its header: the count is the row count
        out.append(_joined(frame, j, "joined_count", words.joined_count(frame, j)))
        for c in dim.columns:
            if c.meaning not in (None, "additive_measure", "count"):
                continue  # no total of a day of month, a code or an identifier (issue 40)
            if c.role == "measure" and c.family == "integer" and 2 < c.distinct_count <= 100:
                label = words.joined_sum(frame, j, c.name)
                out.append(_joined(frame, j, "joined_sum", label, dim_column=c.name))
    if frame.time_is_timestamp:
        out.append(Metric(kind="hour_avg", fact=frame.fact, label=words.hour_avg(frame)))
    return out


def _joined(
    frame: Frame,
    j: Join,
    kind: Literal["joined_count", "joined_sum"],
    label: str,
    dim_column: str | None = None,
) -> Metric:
    """A metric over the fact rows' matches through `j`: a count, or an integer measure's sum."""
    return Metric(
        kind=kind,
        fact=frame.fact,
        column=j.fact_column,
        dim=j.dim,
        dim_key=j.dim_column,
        dim_column=dim_column,
        label=label,
        integer=True,
    )


class MetricWords:
    """Labels for metrics, from the warehouse lexicon (column words and units)."""

    def __init__(self, card: SchemaCard) -> None:

        self.lex = Lexicon(card)

    def count(self, frame: Frame) -> str:
        return f"the number of {self.lex.rows(frame.fact)}"

    def sum(self, frame: Frame, column: str) -> str:
        what = self.lex.column_with_unit(frame.fact, column)
        return f"the total {what} summed over {self.lex.rows(frame.fact)}"

    # Rounds 13 and 14 judged every brief that read out `store_sales.ss_net_paid` or a key pair
    # stilted (I, K). The column's words name it exactly: `Lexicon.column` qualifies a column
    # only where two of one table read alike, and a reference keeps its key pair only where
    # two references of the fact read alike (decision 0195).
    def avg(self, frame: Frame, column: str) -> str:
        what = self.lex.column_with_unit(frame.fact, column)
        rows = self.lex.rows(frame.fact)
        return (
            f"the average {what} of {rows} ({rows} without a recorded "
            f"{self.lex.column(frame.fact, column)} are left out)"
        )

    def _reached(self, frame: Frame, j: Join) -> tuple[str, str]:
        """The row a reference reaches in words, and its key pair in parentheses where another
        reference of the fact reads alike ("" elsewhere)."""
        words = self.lex.referenced(frame.fact, j.fact_column, j.dim, j.dim_column)
        alike = [
            o for o in frame.joins
            if self.lex.referenced(frame.fact, o.fact_column, o.dim, o.dim_column) == words
        ]  # fmt: skip
        pair = f" ({frame.fact}.{j.fact_column} = {j.dim}.{j.dim_column})" if len(alike) > 1 else ""
        return words, pair

    def joined_count(self, frame: Frame, j: Join) -> str:
        words, pair = self._reached(frame, j)
        return f"the number of {self.lex.rows(frame.fact)} whose {words}{pair} is on record"

    def joined_sum(self, frame: Frame, j: Join, column: str) -> str:
        what = self.lex.column_with_unit(j.dim, column)
        rows = self.lex.rows(frame.fact)
        words, pair = self._reached(frame, j)
        return (
            f"the total {what} over {rows}, each {self.lex.row(frame.fact)} counting its "
            f"{words}'s {what}{pair} ({rows} whose {words} is not on record count 0)"
        )

    def dated_by(self, frame: Frame) -> str:
        """What dates a row, in words: its own date ("its departure time", "the time it was
        released" for `released_at`), the date its key reaches ("its sold date"), or its
        header's ("the order date of its order")."""
        if frame.time_via_header and frame.time_dim and frame.time_dim_column:
            header = self.lex.referenced(
                frame.fact, frame.time_column, frame.time_dim, frame.time_dim_key or ""
            )
            when = self.lex.column(frame.time_dim, frame.time_dim_column)
            if _is_event_time(when):
                return f"the time its {header} was {when[: -len(' at')]}"
            return f"the {when} of its {header}"
        if frame.time_dim is not None and frame.time_dim_key is not None:
            return "its " + self.lex.referenced(
                frame.fact, frame.time_column, frame.time_dim, frame.time_dim_key
            )
        when = self.lex.column(frame.fact, frame.time_column)
        if _is_event_time(when):
            return f"the time it was {when[: -len(' at')]}"
        return f"its {when}"

    def hour_avg(self, frame: Frame) -> str:
        return (
            f"the average hour of day (0-23, UTC) of {self.lex.rows(frame.fact)} "
            f"(the hour of {self.dated_by(frame)})"
        )


def _is_event_time(words: str) -> bool:
    """ "released at", "created at": a past participle and "at" name the time of an event."""
    head, _, last = words.rpartition(" ")
    return last == "at" and " " not in head and head.endswith("ed")


def period_starts(
    con: object, frame: Frame, relation: str | None = None
) -> list[tuple[dt.datetime, int]]:
    """(start, rows) of every complete period (the first and last are dropped as partial)."""
    sql = (
        f"SELECT date_trunc('{frame.period}', {frame.t}) AS p, count(*) FROM "
        f"{relation or qi(frame.fact)} AS f WHERE {frame.t} IS NOT NULL GROUP BY p ORDER BY p"
    )
    rows: Sequence[tuple[dt.datetime, int]] = con.execute(sql).fetchall()  # type: ignore[attr-defined]
    return [(_naive(p), int(n)) for p, n in rows[1:-1]]


def _naive(value: dt.datetime | dt.date) -> dt.datetime:
    if isinstance(value, dt.datetime):
        return value.replace(tzinfo=None) if value.tzinfo else value
    return dt.datetime(value.year, value.month, value.day)


def _span_days(col: ColumnCard) -> float:
    return _link_span(col.min, col.max)


def _link_span(lo_value: object, hi_value: object) -> float:
    try:
        lo = dt.datetime.fromisoformat(str(lo_value)[:19])
        hi = dt.datetime.fromisoformat(str(hi_value)[:19])
    except ValueError:
        return 0.0
    return (hi - lo).total_seconds() / 86400


def choose_period(span_days: float, rows: int) -> Period | None:
    """Weeks over ten weeks or more, else days; months where weeks would be too thin.

    A sparse event table (a few rows a week over decades) gets months when its weeks would
    average under MIN_PERIOD_ROWS and it spans MIN_PERIODS months or more: every weekly move
    of it would be noise, and every weekly plant would lack a slice of a moderate share."""
    if span_days >= 7 * MIN_PERIODS:
        thin = rows * 7 / span_days < MIN_PERIOD_ROWS
        if thin and span_days >= 31 * MIN_PERIODS:
            return "month"
        return "week"
    if span_days >= MIN_PERIODS:
        return "day"
    return None


def advance(start: dt.datetime, period: Period, n: int = 1) -> dt.datetime:
    """The start of the period `n` periods after the one starting at `start` (months exact)."""
    if period == "month":
        months = start.year * 12 + start.month - 1 + n
        return start.replace(year=months // 12, month=months % 12 + 1)
    return start + dt.timedelta(days=PERIOD_DAYS[period] * n)


def periods_between(first: dt.datetime, last: dt.datetime, period: Period) -> int:
    """How many period starts lie from `first` to `last` (both period starts), both counted."""
    if period == "month":
        return (last.year - first.year) * 12 + last.month - first.month + 1
    return int((last - first) / dt.timedelta(days=PERIOD_DAYS[period])) + 1
