"""A table's time grain, read from its data: which period buckets fit it, and which buckets lie.

The frame picks months, weeks or days from the time column's span and row count
(`frame.choose_period`). A
table of season totals (one row per organisation-place-season, dated by the season's first
day) spans decades, so it gets weeks, and its "weekly" moves are nothing but which seasons'
rows happened to start in which week (issue 40). Here the grain comes from the data itself:

- **gaps**: the median number of days between consecutive distinct dates. Dates a median of
  30 days apart cannot fill weekly buckets.
- **occupancy**: the share of the period buckets in the data's span that hold any row. Season
  dates cluster in a few weeks a year (each organisation opens on its own day, so the gaps
  inside a cluster are small), leaving most weeks empty.

A period is refused when either says the data is coarser than the period (`refusal`); the
report names the table, the period and the numbers.

Buckets themselves (`Bucket`): a bucket at the edge of the data's range that the data covers
only partly (days with rows, or rows, under half the median bucket's) compares part of a
period with a whole one, and a bucket of a few rows makes a move of noise. `bucket_problem`
says why such a bucket cannot carry an alert or verify a finding.

Noise: a move between two buckets of a few dozen or a hundred rows is often within what
sampling those rows gives (on TPC-DS, store returns' average fee over 44 and 33 rows, or their
weekly count going from 97 to 152). A move counts only when it is at least `NOISE_Z` standard
errors (`spreads`, `z_of`): of the difference of the two means for an average (the bar
`diagnose` already sets for a shocked mean), of a compound-Poisson total for a count or a sum
(rows as independent arrivals, each carrying its value). Real data is usually more variable than
Poisson, so this removes only moves that are noise even under the kindest model. A pick compares
every metric in every period (tens of thousands of moves on TPC-DS sf=0.1), and a
4-standard-error move turns up by chance among so many; the bar for a pick is therefore
raised with their number (`z_needed`, Bonferroni): the whole pick holds a noise alert with
probability under `FAMILY_ERROR` under that model; the bar is never under `NOISE_Z`.
"""

from __future__ import annotations

import datetime as dt
import math
import statistics
from statistics import NormalDist
from typing import Any

from pydantic import BaseModel, Field

from workgym.envs.warehouse.investigate.diagnose import SHOCK_ERRORS
from workgym.envs.warehouse.investigate.frame import (
    PERIOD_DAYS,
    Frame,
    Metric,
    Period,
    periods_between,
)
from workgym.envs.warehouse.source.duck import qi

MIN_OCCUPANCY = 0.5  # at least half of the span's buckets must hold rows
MIN_BUCKET_ROWS = 30  # the explainer's own floor for a slice (slices.MIN_SLICE_ROWS)
PARTIAL = 0.5  # under half the median bucket's days (or rows) with data: partial
EDGE_BUCKETS = 2  # buckets this close to the first or last bucket with data are at the edge
NOISE_Z = SHOCK_ERRORS  # a move must be this many standard errors of its buckets' sampling
AVERAGES = ("avg", "hour_avg")
FAMILY_ERROR = 0.05
UNIT = {"month": "day", "week": "day", "day": "hour"}  # what "covered" counts inside a bucket


class Bucket(BaseModel):
    """One period bucket, as a person judging a move in it would want to know it."""

    start: dt.datetime
    rows: int
    units: int  # distinct days (a month or week bucket) or hours (a day bucket) holding rows
    median_rows: float
    median_units: float
    edge: bool  # within EDGE_BUCKETS of the first or last bucket holding rows


def bucket_problem(b: Bucket, period: str) -> str | None:
    """Why a move in this bucket is an artefact, or None."""
    when = b.start.strftime("%Y-%m-%d")
    if b.rows < MIN_BUCKET_ROWS:
        return (
            f"the {period} of {when} holds {b.rows} rows (< {MIN_BUCKET_ROWS}): a move of so few "
            "rows is noise"
        )
    if b.edge and (b.units < PARTIAL * b.median_units or b.rows < PARTIAL * b.median_rows):
        unit = UNIT.get(period, "day")
        return (
            f"the {period} of {when} lies at the edge of the data's range and is partial "
            f"({b.units} {unit}s with rows against a median of {b.median_units:g}; {b.rows} rows "
            f"against a median of {b.median_rows:g}): it compares part of a {period} with a "
            "whole one"
        )
    return None


class Grain(BaseModel):
    """What the time column's data says about the buckets it can fill."""

    table: str
    time: str  # the time column, as questions name it
    period: Period
    dates: int  # distinct dates with rows
    first: dt.date | None = None
    last: dt.date | None = None
    median_gap_days: float = 0.0
    occupancy: float = 0.0  # buckets with rows / buckets in the span
    buckets: list[Bucket] = Field(default_factory=list, exclude=True)

    @property
    def per_year(self) -> float:
        if self.first is None or self.last is None:
            return 0.0
        years = max((self.last - self.first).days, 1) / 365.25
        return self.dates / max(years, 1.0)

    def refusal(self) -> str | None:
        """Why bucketing this table by `period` would make artefacts, or None when it fits."""
        days = PERIOD_DAYS[self.period]
        facts = (
            f"{self.dates} distinct dates from {self.first} to {self.last} "
            f"({self.per_year:.0f} a year), a median gap of {self.median_gap_days:g} days "
            f"between consecutive dates, {self.occupancy:.0%} of the {self.period}s in the span "
            "holding rows"
        )
        if self.median_gap_days > days:
            return (
                f"{self.table}: refused {self.period}ly buckets: {facts}; its dates are coarser "
                f"than a {self.period}, so a {self.period}'s move is which rows happen to carry "
                f"which date"
            )
        if self.occupancy < MIN_OCCUPANCY:
            return (
                f"{self.table}: refused {self.period}ly buckets: {facts} (< {MIN_OCCUPANCY:.0%}); "
                f"the rows cluster on a few dates (a coarser grain such as seasons or years), so "
                f"a {self.period}'s move is an artefact of the calendar"
            )
        return None

    def bucket(self, start: dt.datetime) -> Bucket | None:
        return next((b for b in self.buckets if b.start == start), None)


def _naive(value: Any) -> dt.datetime:
    if isinstance(value, dt.datetime):
        return value.replace(tzinfo=None)
    return dt.datetime(value.year, value.month, value.day)


def measure(con: Any, frame: Frame) -> Grain:
    """The grain of `frame`'s time column and its period buckets (two grouped scans)."""
    t, src = frame.t, f"{qi(frame.fact)} AS f"
    gaps = con.execute(
        f"WITH d AS (SELECT DISTINCT CAST({t} AS DATE) AS d FROM {src} WHERE {t} IS NOT NULL) "
        "SELECT count(*), min(d), max(d), median(gap) FROM "
        "(SELECT d, date_diff('day', lag(d) OVER (ORDER BY d), d) AS gap FROM d)"
    ).fetchone()
    unit = UNIT[frame.period]
    rows = con.execute(
        f"SELECT date_trunc('{frame.period}', {t}) AS p, count(*), "
        f"count(DISTINCT date_trunc('{unit}', {t})) FROM {src} WHERE {t} IS NOT NULL "
        "GROUP BY p ORDER BY p"
    ).fetchall()
    dates, first, last, gap = gaps if gaps is not None else (0, None, None, None)
    buckets: list[Bucket] = []
    occupancy = 0.0
    if rows:
        starts = [_naive(r[0]) for r in rows]
        span = periods_between(starts[0], starts[-1], frame.period)
        occupancy = len(starts) / max(span, 1)
        med_rows = statistics.median(int(r[1]) for r in rows)
        med_units = statistics.median(int(r[2]) for r in rows)
        for i, (start, row) in enumerate(zip(starts, rows, strict=True)):
            edge = i < EDGE_BUCKETS or i >= len(rows) - EDGE_BUCKETS
            buckets.append(
                Bucket(
                    start=start, rows=int(row[1]), units=int(row[2]),
                    median_rows=float(med_rows), median_units=float(med_units), edge=edge,
                )
            )  # fmt: skip
    return Grain(
        table=frame.fact,
        time=frame.time_words,
        period=frame.period,
        dates=int(dates or 0),
        first=first,
        last=last,
        median_gap_days=float(gap or 0.0),
        occupancy=occupancy,
        buckets=buckets,
    )


def spreads(con: Any, frame: Frame, metric: Metric) -> dict[dt.datetime, tuple[int, float]]:
    """Per bucket: (rows, spread): for an average the sample variance of the values averaged,
    for a count or a sum the sum of the squared row values (a compound-Poisson variance)."""
    num, t = metric.num(frame), frame.t
    spread = f"var_samp({num})" if metric.kind in AVERAGES else f"sum(({num}) * ({num}))"
    rows = con.execute(
        f"SELECT date_trunc('{frame.period}', {t}) AS p, count({num}), {spread} "
        f"FROM {metric.source(frame)} WHERE {t} IS NOT NULL GROUP BY p"
    ).fetchall()
    return {_naive(p): (int(n), float(v or 0.0)) for p, n, v in rows}


def z_of(
    kind: str, change: float, b: tuple[int, float] | None, w: tuple[int, float] | None
) -> float | None:
    """|change| in standard errors of what sampling the two buckets' rows gives (None: a
    bucket of fewer than two rows). An average: the difference of two means. A count or a
    sum: rows arriving as independent events (Poisson), each carrying its value."""
    if b is None or w is None or b[0] < 2 or w[0] < 2:
        return None
    var = b[1] / b[0] + w[1] / w[0] if kind in AVERAGES else b[1] + w[1]
    se = math.sqrt(max(var, 0.0))
    return abs(change) / se if se > 0 else math.inf


def z_needed(tests: int) -> float:
    """Standard errors a move needs when `tests` moves are compared (two-sided Bonferroni at
    FAMILY_ERROR, at least NOISE_Z)."""
    if tests <= 0:
        return NOISE_Z
    return max(NOISE_Z, NormalDist().inv_cdf(1 - FAMILY_ERROR / (2 * tests)))
