"""Naming the mechanism behind a slice's change from what SQL shows (the rule-based investigator).

Finding *where* a metric moved is the slice search; saying *why* needs the rows themselves. Each
planted mechanism leaves a trace an analyst would look for, compared between the baseline and the
window, for the slice against the rest of the rows:

- join_break: the slice's foreign keys stop matching their table (orphans appear);
- duplication: rows that are exact copies of another row appear;
- freshness_gap: the slice's rows stop well before the window ends while the rest continue,
  at their usual rate until then (a random loss thins them out instead);
- clock_shift: the slice's hour-of-day profile is the baseline's moved by whole hours, or its
  timestamps move against the row's own year/month/day columns, with its row count kept;
- data_bug: the measure becomes NULL or zero everywhere, flips sign, or changes unit (its mean
  and its spread scale by the same factor, where a shock moves the mean and keeps the spread, or
  the mean moves by a common unit conversion: x60, x1000, x100, miles to km, feet to metres);
- volume_drop / mix_shift: the slice's row count falls / grows against the rest's, its values
  as before;
- segment_shock: the slice's mean moved by more than sampling explains, or none of the above on
  a metric over a measure: the values themselves moved.

The checks run in that order (most specific trace first) and every threshold sits far from what
ordinary week-to-week variation produces and inside what the weakest plant produces. This is a
heuristic, written from the list of mechanisms, not from any task's answer.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from workgym.envs.warehouse.investigate.frame import Frame, Metric, ts
from workgym.envs.warehouse.investigate.slices import predicate_sql
from workgym.envs.warehouse.runtime.conclusion_answer import PredicateTerm
from workgym.envs.warehouse.source.duck import qi

ORPHAN_RISE = 0.05  # share of the slice's window rows whose key matches nothing, over baseline
DUPLICATE_RISE = 0.03  # share of exact duplicate rows, over baseline
STALE_SHARE = 0.1  # the slice's silent tail, as a share of the period
STALE_RATIO = 3.0  # ... and this many times the baseline's and the rest's tails
FULL_SHARE = 0.9  # NULL or zero on this share of the window's rows (a bug touches them all)
UNIT_CHANGE = 1.25  # a unit change moves the mean absolute value by this factor or more ...
UNIT_TOLERANCE = 0.1  # ... and the spread by the same factor, within 10%
UNIT_BALANCE = 0.5  # ... keeping the sign balance mean/mean_abs (a noisy ratio near zero)
UNIT_FACTORS = (60.0, 3600.0, 100.0, 1000.0, 1.609344, 0.3048)
UNIT_MATCH = 0.03  # the mean moved by one of those (or its inverse), within 3%
OFFSET_SHIFT = 1.5  # hours the timestamps moved against the date columns (plants move >= 2)
STALE_DENSITY = 0.35  # rows before the silent tail, against the baseline's rate
STALE_CHANCE = 0.01  # the silent tail's chance under random thinning of the slice's rows
SIGN_SIZE = 0.4  # a sign flip keeps the mean absolute value within this (natural drift)
SHOCK_ERRORS = 4.0  # a shock moves the slice's mean by more standard errors than this
SIGN_TOLERANCE = 0.2  # window mean within this of minus the baseline mean, magnitudes kept
SHIFT_GAIN = 0.6  # the best hour shift leaves at most this share of the unshifted mismatch
VOLUME_BAND = 0.15  # row count against the rest's, beyond +-15%


class Period(BaseModel):
    """What one diagnostic query saw for one side (slice or rest) in one period."""

    rows: int = 0
    last: str | None = None  # latest timestamp, ISO
    orphans: int = 0
    nulls: int = 0
    zeros: int = 0
    mean: float | None = None
    mean_abs: float | None = None
    spread: float | None = None  # sample standard deviation of the measure
    duplicates: int = 0
    offset: float | None = None  # mean hours from the row's own date (its columns) to its time
    hours: list[int] = [0] * 24


def window_filter(frame: Frame, question: dict[str, Any]) -> str:
    """Baseline and window, without any gap between them (as the slice search reads them)."""
    b0, b1 = (dt.datetime.fromisoformat(x) for x in question["baseline"])
    w0, w1 = (dt.datetime.fromisoformat(x) for x in question["window"])
    t = frame.t
    return f"{t} >= {ts(b0)} AND {t} < {ts(w1)} AND NOT ({t} >= {ts(b1)} AND {t} < {ts(w0)})"


def measure(metric: Metric) -> str | None:
    """The fact column whose values the metric adds up, if any (where a bug or shock shows)."""
    return metric.column if metric.kind in ("sum", "avg") else None


def has_hours(frame: Frame) -> bool:
    return frame.time_is_timestamp and frame.time_dim is None and frame.time_anchor is None


def profile_sql(
    frame: Frame, metric: Metric, question: dict[str, Any], terms: Sequence[PredicateTerm]
) -> str:
    """Per (in slice, in window): rows, latest time, orphans, and the measure's NULL/zero/mean."""
    w0 = dt.datetime.fromisoformat(question["window"][0])
    cols = [
        f"coalesce(({predicate_sql(terms, frame)}), FALSE) AS in_slice",
        f"({frame.t} >= {ts(w0)}) AS in_window",
        "count(*) AS n",
        f"strftime(max({frame.t}), '%Y-%m-%dT%H:%M:%S') AS last_t",
    ]
    if metric.kind in ("joined_count", "joined_sum") and metric.column:
        cols.append(f"count(*) FILTER (WHERE f.{qi(metric.column)} IS NOT NULL AND d.k IS NULL)")
    else:
        cols.append("0")
    if frame.date_parts and has_hours(frame):
        y, mo, d = (f"f.{qi(c)}" for c in frame.date_parts)
        day = f"make_date(CAST({y} AS BIGINT), CAST({mo} AS BIGINT), CAST({d} AS BIGINT))"
        cols.append(f"avg(date_diff('minute', CAST({day} AS TIMESTAMP), {frame.t})) / 60.0")
    else:
        cols.append("NULL")
    m = measure(metric)
    if m is not None:
        c = f"f.{qi(m)}"
        cols += [
            f"count(*) FILTER (WHERE {c} IS NULL)",
            f"count(*) FILTER (WHERE {c} = 0)",
            f"avg({c})",
            f"avg(abs({c}))",
            f"stddev_samp({c})",
        ]
    else:
        cols += ["0", "0", "NULL", "NULL", "NULL"]
    return (
        f"SELECT {', '.join(cols)} FROM {metric.source(frame)} "
        f"WHERE {window_filter(frame, question)} GROUP BY ALL ORDER BY ALL"
    )


def duplicates_sql(frame: Frame, question: dict[str, Any], terms: Sequence[PredicateTerm]) -> str:
    """Per (in slice, in window): how many rows are exact copies of another row."""
    w0 = dt.datetime.fromisoformat(question["window"][0])
    every = ", ".join(f"f.{qi(c)}" for c in frame.columns)
    return (
        f"SELECT in_slice, in_window, sum(k) - count(*) AS copies FROM ("
        f"SELECT coalesce(({predicate_sql(terms, frame)}), FALSE) AS in_slice, "
        f"({frame.t} >= {ts(w0)}) AS "
        f"in_window, count(*) AS k FROM {qi(frame.fact)} AS f "
        f"WHERE {window_filter(frame, question)} GROUP BY 1, 2, {every}) "
        f"GROUP BY ALL ORDER BY ALL"
    )


def hours_sql(frame: Frame, question: dict[str, Any], terms: Sequence[PredicateTerm]) -> str:
    """Per (in slice, in window, hour of day): rows."""
    w0 = dt.datetime.fromisoformat(question["window"][0])
    return (
        f"SELECT coalesce(({predicate_sql(terms, frame)}), FALSE) AS in_slice, "
        f"({frame.t} >= {ts(w0)}) AS "
        f"in_window, hour({frame.t}) AS hour, count(*) AS n FROM {qi(frame.fact)} AS f "
        f"WHERE {window_filter(frame, question)} GROUP BY ALL ORDER BY ALL"
    )


Sides = dict[tuple[bool, bool], Period]  # (in slice, in window) -> what was seen


def read_sides(
    profile: list[list[Any]], duplicates: list[list[Any]], hours: list[list[Any]] | None
) -> Sides:
    """The three diagnostic results, as rows of run_sql output, merged per side and period."""
    sides: Sides = {}
    for s, w, n, last, orphans, offset, nulls, zeros, mean, mean_abs, spread in profile:
        if s is None:
            s = False  # a NULL slice column: the row is outside the slice
        p = sides.setdefault((bool(s), bool(w)), Period())
        p.rows += int(n)
        p.last = max(filter(None, [p.last, last]), default=None)
        p.orphans += int(orphans or 0)
        p.offset = None if offset is None else float(offset)
        p.nulls += int(nulls or 0)
        p.zeros += int(zeros or 0)
        p.mean = None if mean is None else float(mean)
        p.mean_abs = None if mean_abs is None else float(mean_abs)
        p.spread = None if spread is None else float(spread)
    for s, w, copies in duplicates:
        sides.setdefault((bool(s), bool(w)), Period()).duplicates += int(copies or 0)
    for s, w, hour, n in hours or []:
        if hour is not None:
            p = sides.setdefault((bool(s), bool(w)), Period())
            p.hours = [*p.hours]
            p.hours[int(hour) % 24] += int(n)
    return sides


def _share(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


def _tail(last: str | None, end: dt.datetime) -> float:
    """Seconds from the latest row to the period's end (the whole period when there is none)."""
    if last is None:
        return float("inf")
    return max((end - dt.datetime.fromisoformat(last)).total_seconds(), 0.0)


def _shift(base: list[int], now: list[int]) -> int:
    """The whole-hour shift that best maps the baseline's hour profile onto the window's (0 when
    no shift fits clearly better than none)."""
    nb, nw = sum(base), sum(now)
    if nb < 30 or nw < 30:
        return 0
    pb = [x / nb for x in base]
    pw = [x / nw for x in now]

    def mismatch(k: int) -> float:
        return sum(abs(pw[(h + k) % 24] - pb[h]) for h in range(24))

    best = min(range(-12, 12), key=lambda k: (mismatch(k), abs(k)))
    return best if mismatch(best) <= SHIFT_GAIN * mismatch(0) else 0


def _stale(sb: Period, sw: Period, rb: Period, rw: Period, frame: Frame, q: dict[str, Any]) -> bool:
    """The slice fell silent before the window's end: a tail far longer than usual, which random
    thinning of its rows would leave with under 1% chance, after rows at a near-usual rate."""
    b1 = dt.datetime.fromisoformat(q["baseline"][1])
    w0, w1 = (dt.datetime.fromisoformat(x) for x in q["window"])
    period = (w1 - w0).total_seconds()
    grain = 0.0 if has_hours(frame) else 86_400.0  # a date's last row sits a day before the end
    tail = _tail(sw.last, w1) - grain
    usual = max(_tail(sb.last, b1) - grain, _tail(rw.last, w1) - grain, 0.01 * period)
    if not (sb.rows and rb.rows) or tail < STALE_SHARE * period or tail < STALE_RATIO * usual:
        return False
    kept = max(1 - tail / period, 0.0)
    expected = sb.rows * (rw.rows / rb.rows) * kept
    return kept**sw.rows <= STALE_CHANCE and bool(expected) and sw.rows / expected >= STALE_DENSITY


def _shifted(sb: Period, sw: Period, rb: Period, rw: Period, frame: Frame, period: float) -> bool:
    """The slice's clock moved: against its own date columns, or its hour-of-day profile."""
    if period >= 7 * 86_400 and abs(_relative(sb, sw, rb, rw) - 1) >= VOLUME_BAND:
        return False  # a week loses few rows to a shift of hours
    offsets = (sb.offset, sw.offset, rb.offset, rw.offset)
    if None not in offsets:
        b, w, rest_b, rest_w = (x or 0.0 for x in offsets)
        if abs((w - b) - (rest_w - rest_b)) >= OFFSET_SHIFT:
            return True
    return has_hours(frame) and _shift(sb.hours, sw.hours) != 0 and _shift(rb.hours, rw.hours) == 0


def _bug(sb: Period, sw: Period) -> bool:
    """The measure itself is corrupted: all NULL or zero, its sign flipped, or its unit changed
    (every value scaled by one factor: mean, spread and sign balance alike)."""
    if not (sw.rows and sb.rows):
        return False
    if _share(sw.nulls, sw.rows) >= FULL_SHARE > 2 * _share(sb.nulls, sb.rows):
        return True
    if (
        _share(sw.zeros, sw.rows - sw.nulls)
        >= FULL_SHARE
        > 2 * _share(sb.zeros, sb.rows - sb.nulls)
    ):
        return True
    if not (sb.mean_abs and sw.mean_abs) or sb.mean is None or sw.mean is None:
        return False
    ratio = sw.mean_abs / sb.mean_abs
    balance_b, balance_w = sb.mean / sb.mean_abs, sw.mean / sw.mean_abs  # +1: all positive
    kept_size = 1 - SIGN_SIZE <= ratio <= 1 / (1 - SIGN_SIZE)
    if kept_size and min(abs(balance_b), abs(balance_w)) >= 0.8 and balance_b * balance_w < 0:
        return True  # one-signed values, now all of the other sign
    if kept_size and abs(balance_b) >= 0.1 and abs(sw.mean / sb.mean + 1) <= SIGN_TOLERANCE:
        return True  # mixed signs: the mean negated, magnitudes kept
    if abs(balance_w - balance_b) > UNIT_BALANCE or 1 / UNIT_CHANGE < ratio < UNIT_CHANGE:
        return False
    if (
        sb.spread
        and sw.spread is not None
        and abs(sw.spread / sb.spread / ratio - 1) <= UNIT_TOLERANCE
    ):
        return True
    return any(
        abs(ratio / k - 1) <= UNIT_MATCH or abs(ratio * k - 1) <= UNIT_MATCH for k in UNIT_FACTORS
    )


def _moved(sb: Period, sw: Period, rb: Period, rw: Period) -> bool:
    """The slice's mean moved far beyond what sampling its rows explains (4 standard errors),
    and by a whole standard deviation when its row count also changed (rows copied from another
    week bring that week's own small difference)."""
    if sb.mean is None or sw.mean is None or not sb.spread or not (sb.rows and sw.rows):
        return False
    rest = (
        (rw.mean or 0.0) - (rb.mean or 0.0) if rb.mean is not None and rw.mean is not None else 0.0
    )
    moved = abs(sw.mean - sb.mean - rest)
    if moved <= SHOCK_ERRORS * sb.spread * math.sqrt(1 / sb.rows + 1 / sw.rows):
        return False
    return abs(_relative(sb, sw, rb, rw) - 1) < VOLUME_BAND or moved >= sb.spread


def _relative(sb: Period, sw: Period, rb: Period, rw: Period) -> float:
    """The slice's row count change against the rest's (1: moved alike)."""
    if not (sb.rows and rb.rows and rw.rows):
        return (sw.rows / sb.rows) if sb.rows else 1.0
    return (sw.rows / sb.rows) / (rw.rows / rb.rows)


def cause_of(sides: Sides, frame: Frame, metric: Metric, question: dict[str, Any]) -> str:
    """The mechanism whose trace the slice shows most specifically (module docstring)."""
    sb, sw = sides.get((True, False), Period()), sides.get((True, True), Period())
    rb, rw = sides.get((False, False), Period()), sides.get((False, True), Period())
    w0, w1 = (dt.datetime.fromisoformat(x) for x in question["window"])
    if _share(sw.orphans, sw.rows) - _share(sb.orphans, sb.rows) >= ORPHAN_RISE:
        return "join_break"
    if _share(sw.duplicates, sw.rows) - _share(sb.duplicates, sb.rows) >= DUPLICATE_RISE:
        return "duplication"
    if _stale(sb, sw, rb, rw, frame, question):
        return "freshness_gap"
    if _shifted(sb, sw, rb, rw, frame, (w1 - w0).total_seconds()):
        return "clock_shift"
    has_measure = measure(metric) is not None
    if has_measure and _bug(sb, sw):
        return "data_bug"
    if has_measure and _moved(sb, sw, rb, rw):
        return "segment_shock"
    relative = _relative(sb, sw, rb, rw)
    if relative <= 1 - VOLUME_BAND:
        return "volume_drop"
    if relative >= 1 + VOLUME_BAND or not has_measure:
        return "mix_shift" if relative >= 1 else "volume_drop"
    return "segment_shock"
