"""Searching for admissible plants: (metric, period, slice, strength) until the gate admits.

`plan` decides the cause of each task; `Finder.find` draws a frame and a metric the cause can
move, a period, a slice and a strength (`design`), plants it as a query over the jittered fact
table, and asks the solvability gate; rejected attempts are logged with their reason and tried
again, up to `MAX_ATTEMPTS`. `search` fills slots of causes the warehouse cannot show with the
types it can, so the task count holds when it is reachable.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field

from pydantic import BaseModel, Field

from workgym.envs.warehouse.investigate.design import (
    COMPATIBLE,
    Study,
    Window,
    design,
    design_rule,
    study,
)
from workgym.envs.warehouse.investigate.frame import MIN_FACT_ROWS, Frame, Metric
from workgym.envs.warehouse.investigate.manifest import Jitter
from workgym.envs.warehouse.investigate.mechanisms import PlantSpec, planted_select
from workgym.envs.warehouse.investigate.plant import JITTER_RATE, jittered
from workgym.envs.warehouse.investigate.slices import SliceTable, canon, slice_table
from workgym.envs.warehouse.investigate.solvability import GateResult, admit_null, admit_planted
from workgym.envs.warehouse.investigate.vocab import NORMAL, PLANTED, CauseType
from workgym.envs.warehouse.schema.card import SchemaCard

NULL_SHARE = 0.15
MAX_ATTEMPTS = 15
NO_PERIOD = "no period to use"
NOT_MOVED = "the plant did not move the metric"
AGAINST = "the plant moved the metric against the observed change"


class Rejection(BaseModel):
    """How many plant attempts on one fact table were rejected for one reason."""

    table: str
    reason: str
    count: int = 0


class BuildReport(BaseModel):
    requested: int
    tasks: int = 0
    by_cause: dict[str, int] = Field(default_factory=dict)
    attempts: int = 0
    rejected: list[str] = Field(default_factory=list)
    # Every rejected attempt, counted per (fact table, reason): what the warning prints.
    rejections: list[Rejection] = Field(default_factory=list)
    missing: list[str] = Field(default_factory=list)  # causes no attempt could plant
    refilled: list[str] = Field(default_factory=list)  # types that took the missing slots
    skipped: list[str] = Field(default_factory=list)  # fact tables that cannot host tasks
    timings_s: dict[str, float] = Field(default_factory=dict)

    @property
    def min_rows(self) -> int:
        return MIN_FACT_ROWS

    def rejection_records(self) -> list[dict[str, object]]:
        return [r.model_dump() for r in self.rejections]

    def reject(self, table: str, reason: str) -> None:
        for r in self.rejections:
            if (r.table, r.reason) == (table, reason):
                r.count += 1
                return
        self.rejections.append(Rejection(table=table, reason=reason, count=1))

    def rejection_summary(self) -> str:
        """'540 rejected plant attempts: stats (400 no slice ...; 140 ...)', tables by count."""
        total = sum(r.count for r in self.rejections)
        if not total:
            return ""
        tables: dict[str, list[Rejection]] = {}
        for r in sorted(self.rejections, key=lambda r: (-r.count, r.reason)):
            tables.setdefault(r.table, []).append(r)
        order = sorted(tables, key=lambda t: (-sum(r.count for r in tables[t]), t))
        parts = [f"{t} ({'; '.join(f'{r.count} {r.reason}' for r in tables[t])})" for t in order]
        return f"{total} rejected plant attempts: {', '.join(parts)}"


@dataclass
class Found:
    cause: str
    st: Study
    win: Window
    jitter: Jitter
    gate: GateResult
    table: SliceTable  # the planted copy's slice table (the unplanted one for null tasks)
    spec: PlantSpec | None = None
    unplanted_w: float | None = None
    attempts: int = 1
    notes: list[str] = field(default_factory=list)


def plan(n: int, rng: random.Random) -> list[str]:
    """Cause types for `n` tasks: about NULL_SHARE unplanted, the rest cycling every type."""
    if n <= 0:
        return []
    nulls = max(1, round(n * NULL_SHARE)) if n >= 3 else 0
    order = list(PLANTED)
    rng.shuffle(order)
    causes: list[str] = [order[i % len(order)] for i in range(n - nulls)] + [NORMAL] * nulls
    rng.shuffle(causes)
    return causes


def search(finder: Finder, causes: list[str]) -> list[Found]:
    """One admitted task per planned cause; slots of causes this warehouse cannot show go to
    the planted types that it can, in turn, so the task count holds when it is reachable."""
    found: list[Found] = []
    lost = 0
    for cause in causes:
        got = finder.find(cause)
        if got is None:
            lost += 1
        else:
            found.append(got)
    able = sorted({f.cause for f in found if f.cause != NORMAL})
    turn = 0
    while lost and able:
        cause = able[turn % len(able)]
        got = finder.find(cause)
        if got is None:
            able.remove(cause)
            continue
        found.append(got)
        finder.report.refilled.append(cause)
        lost -= 1
        turn += 1
    return found


class Finder:
    """Searches (metric, period, slice, strength) for one cause until the gate admits it."""

    def __init__(
        self,
        con: object,
        card: SchemaCard,
        frames: list[Frame],
        catalogue: dict[str, list[Metric]],
        rng: random.Random,
        report: BuildReport,
    ) -> None:
        self.con = con
        self.card = card
        self.frames = frames
        self.catalogue = catalogue
        self.rng = rng
        self.report = report
        self.studies: dict[str, Study] = {}

    def _options(self, cause: str) -> list[tuple[Frame, list[Metric]]]:
        out = []
        for frame in self.frames:
            if cause == "mix_shift" and frame.time_via_header:
                continue  # copies cannot move in time: no key stands for a later date
            ok = [
                m
                for m in self.catalogue[frame.fact]
                if cause == NORMAL or m.kind in COMPATIBLE[cause]
            ]
            if ok:
                out.append((frame, ok))
        return out

    def _study(self, frame: Frame, metric: Metric) -> Study:
        key = metric.model_dump_json()
        if key not in self.studies:
            self.studies[key] = study(self.con, frame, metric)
        return self.studies[key]

    def find(self, cause: str) -> Found | None:
        options = self._options(cause)
        if not options:
            self.report.missing.append(f"{cause}: no metric of any fact table can show it")
            return None
        weights = [math.sqrt(max(f.rows, 1)) for f, _ in options]
        for attempt in range(1, MAX_ATTEMPTS + 1):
            self.report.attempts += 1
            frame, candidates = self.rng.choices(options, weights=weights)[0]
            metric = self.rng.choice(candidates)
            found, why, rule = self._try(cause, frame, metric)
            if found is not None:
                found.attempts = attempt
                return found
            self.report.rejected.append(
                f"{cause} on {frame.fact} {metric.kind}:{metric.column or '-'}: {why}"
            )
            self.report.reject(frame.fact, rule)
        self.report.missing.append(f"{cause}: no admissible plant in {MAX_ATTEMPTS} attempts")
        return None

    def _try(self, cause: str, frame: Frame, metric: Metric) -> tuple[Found | None, str, str]:
        """(found, "", "") or (None, why, the reason's rule: why without numbers or slices)."""
        st = self._study(frame, metric)
        pool = st.loud() if cause == NORMAL else st.quiet()
        if not pool:
            return None, NO_PERIOD, NO_PERIOD
        win = self.rng.choice(pool)
        jitter = Jitter(salt=self.rng.getrandbits(31), rate=JITTER_RATE)
        base = jittered(frame, jitter)
        pre = slice_table(self.con, frame, metric, win.baseline, win.window, relation=base)
        if cause == NORMAL:
            gate = admit_null(pre)
            if not gate.admitted:
                return None, gate.reason, gate.rule
            return Found(cause, st, win, jitter, gate, pre), "", ""
        typed: CauseType = cause  # type: ignore[assignment]
        spec, why = design(typed, st, win, pre, self.card, self.rng)
        if spec is None:
            return None, why, design_rule(why)
        relation = f"({planted_select(spec, frame, base)})"
        post = slice_table(self.con, frame, metric, win.baseline, win.window, relation=relation)
        key = canon([(t.column, t.value) for t in spec.slice])
        gate = admit_planted(post, key)
        if not gate.admitted:
            return None, gate.reason, gate.rule
        before, after = pre.value(pre.total, "w"), post.value(post.total, "w")
        change = post.change(post.total)
        if before is None or after is None or after == before or not change:
            return None, NOT_MOVED, NOT_MOVED
        if (after > before) != (change > 0):
            return None, AGAINST, AGAINST
        return Found(cause, st, win, jitter, gate, post, spec, before), "", ""
