"""Designing one plant: which metric, which period, which slice, and how strong.

1. The metric is drawn among those the cause can move (a join break shows in joined counts, a
   clock shift in the hour of day, ...); no metric is reserved for one cause.
2. The period: every complete period's natural change of that metric is computed, and plants go
   into quiet ones (natural change at or below the median), so the plant, not the weather, is
   what changed. Tasks with no plant take the loudest periods (top quarter): real alerts.
3. The slice: one or two dimension values holding a moderate share of the period's rows.
4. The strength: sized so the planted effect is several times the metric's typical natural
   change; the solvability gate then decides on the planted copy itself.
"""

from __future__ import annotations

import datetime as dt
import itertools
import math
import random
import re
import statistics
from dataclasses import dataclass
from typing import Any

from workgym.envs.warehouse.investigate.frame import (
    MAX_SLICE_SHARE,
    PERIOD_DAYS,
    Frame,
    Metric,
    MetricKind,
    advance,
    plantable_period_rows,
)
from workgym.envs.warehouse.investigate.mechanisms import BugKind, PlantSpec
from workgym.envs.warehouse.investigate.slices import Cell, SliceKey, SliceTable, slice_terms
from workgym.envs.warehouse.investigate.vocab import CauseType
from workgym.envs.warehouse.schema.card import SchemaCard

ADDITIVE: tuple[MetricKind, ...] = ("count", "sum", "joined_count", "joined_sum")
COMPATIBLE: dict[str, tuple[MetricKind, ...]] = {
    "segment_shock": ("avg", "sum"),
    "data_bug": ("avg", "sum"),
    "volume_drop": ADDITIVE,
    "duplication": ADDITIVE,
    "freshness_gap": ADDITIVE,
    "mix_shift": ("avg", "hour_avg"),
    "join_break": ("joined_count", "joined_sum"),
    "clock_shift": ("hour_avg",),
}
ONE_DIM_SHARE = (0.03, MAX_SLICE_SHARE)
TWO_DIM_SHARE = (0.02, 0.2)
STRENGTH = (3.0, 6.0)  # planted effect, in typical natural changes
# A freshness gap's length in days, by period: long enough for the diagnostic's silent tail
# (diagnose.STALE_SHARE of the period), short enough to leave most of the period in place.
FRESHNESS_DAYS = {"week": (1, 3), "month": (4, 10)}
UNITS = {"minute": 60.0, "hour": 60.0, "mile": 1.609344, "feet": 0.3048, "foot": 0.3048,
         "dollar": 100.0, "usd": 100.0, "second": 1000.0}  # fmt: skip


@dataclass(frozen=True)
class Window:
    baseline: tuple[dt.datetime, dt.datetime]
    window: tuple[dt.datetime, dt.datetime]
    change: float
    rows: int = 0  # rows in the thinner of the two periods


@dataclass
class Study:
    """A metric's natural behaviour: per-period values and period-over-period changes."""

    frame: Frame
    metric: Metric
    windows: list[Window]
    scale: float  # median absolute natural change

    def quiet(self) -> list[Window]:
        """Periods to plant into: a natural change at or below the median, and both periods
        large enough to hold a plantable slice (a sparse table's thin years hold none)."""
        need = plantable_period_rows(self.frame)
        return [w for w in self.windows if abs(w.change) <= self.scale and w.rows >= need]

    def loud(self) -> list[Window]:
        ranked = sorted(self.windows, key=lambda w: -abs(w.change))
        return ranked[: max(1, len(ranked) // 4)]


def study(con: Any, frame: Frame, metric: Metric) -> Study:
    """Per-period metric values over the whole fact table (one grouped scan)."""
    sql = (
        f"SELECT date_trunc('{frame.period}', {frame.t}) AS p, {metric.value_sql(frame)}, "
        f"count(*) FROM {metric.source(frame)} WHERE {frame.t} IS NOT NULL GROUP BY p ORDER BY p"
    )
    rows = con.execute(sql).fetchall()[1:-1]  # first and last periods are partial
    windows = []
    for (p0, v0, n0), (p1, v1, n1) in itertools.pairwise(rows):
        p0, p1 = _naive(p0), _naive(p1)
        if p1 != advance(p0, frame.period) or v0 is None or v1 is None:
            continue
        bounds = (p1, advance(p1, frame.period))
        windows.append(Window((p0, p1), bounds, float(v1) - float(v0), int(min(n0, n1))))
    changes = [abs(w.change) for w in windows]
    scale = statistics.median(changes) if changes else 0.0
    return Study(frame=frame, metric=metric, windows=windows, scale=scale)


def _naive(value: Any) -> dt.datetime:
    if isinstance(value, dt.datetime):
        return value.replace(tzinfo=None)
    return dt.datetime(value.year, value.month, value.day)


NO_SLICE = "no slice with a moderate share of the window's rows"
IMPLAUSIBLE = "the shock a plant needs would be implausible for the column"


def design_rule(why: str) -> str:
    """A `design` refusal without its numbers (rejections are counted by it)."""
    return IMPLAUSIBLE if why.startswith("a shock of ") else why


def slice_choices(
    table: SliceTable,
    exclude: set[str] = frozenset(),  # type: ignore[assignment]
) -> tuple[list[SliceKey], list[SliceKey]]:
    """Plantable slices (one-dim, two-dim): a moderate share of the window's rows."""
    total = max(table.total.rows_w, 1)
    ones: list[SliceKey] = []
    twos: list[SliceKey] = []
    for key, cell in sorted(table.cells.items(), key=lambda kv: str(kv[0])):
        if any(c in exclude for c, _ in key) or min(cell.rows_b, cell.rows_w) < table.plant_rows:
            continue
        share = cell.rows_w / total
        lo, hi = ONE_DIM_SHARE if len(key) == 1 else TWO_DIM_SHARE
        if lo <= share <= hi:
            (ones if len(key) == 1 else twos).append(key)
    return ones, twos


def pick_slice(rng: random.Random, table: SliceTable, exclude: set[str]) -> SliceKey | None:
    ones, twos = slice_choices(table, exclude)
    if ones and (not twos or rng.random() < 0.6):
        return rng.choice(ones)
    return rng.choice(twos) if twos else None


def _level(table: SliceTable, cell: Cell) -> float | None:
    return table.value(cell, "w")


def pick_mix_slice(rng: random.Random, table: SliceTable) -> SliceKey | None:
    """A slice whose level differs most from the whole (weighted by its share)."""
    whole = _level(table, table.total)
    ones, twos = slice_choices(table)
    scored = []
    for key in ones + twos:
        level = _level(table, table.cells[key])
        if whole is None or level is None:
            continue
        share = table.cells[key].rows_w / max(table.total.rows_w, 1)
        scored.append((abs(level - whole) * math.sqrt(share), key))
    scored.sort(key=lambda sk: -sk[0])
    top = [k for _, k in scored[:5]]
    return rng.choice(top) if top else None


def _clip(x: float, lo: float, hi: float) -> float:
    return min(max(x, lo), hi)


def unit_factor(comment: str | None) -> float:
    text = (comment or "").lower()
    for word, factor in UNITS.items():
        if word in text:
            return factor
    return 1000.0


def _fits(type_name: str, largest: object, factor: float) -> bool:
    """Whether a DECIMAL(p, s) column still holds its largest value times `factor`."""
    m = re.match(r"DECIMAL\((\d+),\s*(\d+)\)", type_name.upper())
    if m is None or not isinstance(largest, int | float):
        return True
    return bool(abs(largest) * factor < 10 ** (int(m[1]) - int(m[2])))


def design(
    cause: CauseType,
    st: Study,
    win: Window,
    pre: SliceTable,
    card: SchemaCard,
    rng: random.Random,
) -> tuple[PlantSpec | None, str]:
    """A plant of `cause` into `win`, sized against the study; (None, why) when none fits."""
    frame, metric = st.frame, st.metric
    base_level = pre.value(pre.total, "w") or 0.0
    target = rng.uniform(*STRENGTH) * (st.scale or 0.05 * abs(base_level) or 1.0)
    salt = rng.getrandbits(31)
    exclude = {metric.column} if cause == "join_break" and metric.column else set()
    key = pick_mix_slice(rng, pre) if cause == "mix_shift" else pick_slice(rng, pre, exclude)
    if key is None:
        return None, NO_SLICE
    cell = pre.cells[key]
    common: dict[str, Any] = {
        "cause_type": cause,
        "slice": slice_terms(key),
        "window": win.window,
        "salt": salt,
    }
    amount = abs(cell.num_w) or float(cell.rows_w)
    if cause == "segment_shock":
        return _shock(common, frame, metric, pre, cell, target, card, rng)
    if cause == "data_bug":
        kinds: list[BugKind] = ["zero", "unit", "sign"]
        if metric.kind == "sum":
            kinds.append("null")
        col = card.table(frame.fact).column(metric.column or "")
        if not _fits(col.type, col.max, unit_factor(col.comment)):
            kinds.remove("unit")  # DECIMAL(7,2) cannot hold a price times 1000
        bug = rng.choice(kinds)
        factor = unit_factor(col.comment) if bug == "unit" else None
        return PlantSpec(**common, column=metric.column, bug=bug, factor=factor), ""
    if cause == "volume_drop":
        return PlantSpec(**common, fraction=round(_clip(target / amount, 0.25, 0.9), 3)), ""
    if cause == "duplication":
        return PlantSpec(**common, fraction=round(_clip(target / amount, 0.25, 1.0), 3)), ""
    if cause == "freshness_gap":
        return _freshness(common, frame, win, amount, target), ""
    if cause == "join_break":
        fk = card.table(frame.fact).column(metric.column or "")
        span = _id_offset(card, frame.fact, fk.name) if fk.family == "integer" else None
        fraction = round(_clip(target / amount, 0.4, 1.0), 3)
        return PlantSpec(**common, column=metric.column, fraction=fraction, factor=span), ""
    if cause == "clock_shift":
        hours = int(_clip(math.ceil(target * max(pre.total.den_w, 1) / max(cell.den_w, 1)), 2, 9))
        return PlantSpec(**common, shift_hours=hours * rng.choice((1, -1))), ""
    if cause == "mix_shift":
        return _mix(common, frame, win, pre, cell, target, card), ""
    raise ValueError(f"no design for {cause!r}")


def _shock(
    common: dict[str, Any],
    frame: Frame,
    metric: Metric,
    pre: SliceTable,
    cell: Cell,
    target: float,
    card: SchemaCard,
    rng: random.Random,
) -> tuple[PlantSpec | None, str]:
    fraction = round(rng.uniform(0.6, 1.0), 3)
    weight = cell.den_w if metric.kind == "avg" else float(cell.rows_w)
    if metric.kind == "avg":
        delta = target * max(pre.total.den_w, 1) / max(fraction * weight, 1)
    else:
        delta = target / max(fraction * weight, 1)
    col = card.table(frame.fact).column(metric.column or "")
    if col.family == "integer":
        delta = float(max(1, round(delta)))
    q = col.quantiles or {}
    spread = (q.get("p95", 0.0) - q.get("p05", 0.0)) or abs(delta)
    if delta > 4 * spread:
        return None, f"a shock of {delta:g} on {col.name} would be implausible"
    delta *= rng.choice((1, -1))
    return PlantSpec(**common, column=metric.column, fraction=fraction, delta=delta), ""


def _freshness(
    common: dict[str, Any], frame: Frame, win: Window, amount: float, target: float
) -> PlantSpec:
    length = win.window[1] - win.window[0]
    if frame.period in FRESHNESS_DAYS:
        per_day = amount / PERIOD_DAYS[frame.period]
        lo, hi = FRESHNESS_DAYS[frame.period]
        gap = dt.timedelta(days=int(_clip(math.ceil(target / max(per_day, 1e-9)), lo, hi)))
    else:
        per_hour = amount / 24
        gap = dt.timedelta(hours=int(_clip(math.ceil(target / max(per_hour, 1e-9)), 3, 12)))
    gap = min(gap, length / 2)
    return PlantSpec(**common, cut=win.window[1] - gap)


def _mix(
    common: dict[str, Any],
    frame: Frame,
    win: Window,
    pre: SliceTable,
    cell: Cell,
    target: float,
    card: SchemaCard,
) -> PlantSpec:
    whole = pre.value(pre.total, "w") or 0.0
    level = pre.value(cell, "w") or 0.0
    gap = abs(level - whole)
    copies = target * pre.total.den_w / (gap - target) if gap > target else cell.den_b
    fraction = round(_clip(copies / max(cell.den_b, 1), 0.3, 1.0), 3)
    offsets = {c: _id_offset(card, frame.fact, c) for c in frame.identifiers}
    # Copies come from the period before: a week back, or the baseline month's length.
    days = (win.window[0] - win.baseline[0]).days if frame.period == "month" else 7
    return PlantSpec(**common, fraction=fraction, source_shift_days=days, id_offsets=offsets)


def _id_offset(card: SchemaCard, table: str, column: str) -> int:
    """A power of ten above every value of an integer column (fresh ids / broken keys)."""
    col = card.table(table).column(column)
    top = col.max if isinstance(col.max, int) else 0
    return int(10 ** max(len(str(abs(top))), 1))
