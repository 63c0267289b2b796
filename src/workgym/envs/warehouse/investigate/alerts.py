"""Alerts on real data: the period-over-period moves worth investigating.

On the real warehouse nothing is planted, so the questions are the ones a monitoring system
would raise: for every metric the card supports, the periods whose change is largest relative
to that metric's typical change. Each alert is phrased with the same templates as the planted
tasks, so an agent trained on the generated environment meets the same kind of question.

Three things keep the alerts honest (issue 40):

- a table whose dates are coarser than its period (season totals bucketed by week) raises no
  alert: `grain.measure` reads the grain from the data and the refusal goes into the report;
- a move whose baseline or window bucket is thin or a partial bucket at the edge of the data's
  range raises no alert (`grain.bucket_problem`): it is an artefact of the buckets;
- one event is one alert: candidates are taken most surprising first, and one whose rows
  overlap an alert already kept (`events.overlap`) is listed under it (`also`) instead of
  being investigated again, so five measures moved by one event give one finding.
"""

from __future__ import annotations

import datetime as dt
import math
from typing import Any

from pydantic import BaseModel, Field

from workgym.core.tasks import Task
from workgym.envs.warehouse.investigate.design import Window, study
from workgym.envs.warehouse.investigate.events import (
    SAME_EVENT,
    Footprint,
    driver,
    overlap,
    same_time,
)
from workgym.envs.warehouse.investigate.frame import (
    Frame,
    Metric,
    MetricWords,
    between,
    discover,
    metrics,
)
from workgym.envs.warehouse.investigate.grain import (
    MIN_BUCKET_ROWS,
    NOISE_Z,
    Bucket,
    bucket_problem,
    measure,
    spreads,
    z_needed,
    z_of,
)
from workgym.envs.warehouse.investigate.prompts import render
from workgym.envs.warehouse.runtime.conclusion_answer import PredicateTerm
from workgym.envs.warehouse.schema.card import SchemaCard

MAX_CANDIDATES = 400  # (metric, period) moves examined for events, most surprising first


class AlsoShows(BaseModel):
    """Another metric's move that is the same event as the alert it is listed under."""

    metric: str  # the label
    fact: str
    kind: str
    baseline: tuple[dt.datetime, dt.datetime]
    window: tuple[dt.datetime, dt.datetime]
    change: float
    surprise: float
    driver: str  # the slice behind its move, or "all rows"
    overlap: float  # rows shared / rows of the smaller footprint (time, across tables)


class Refusal(BaseModel):
    """A table (and period) investigations did not bucket, and why."""

    table: str
    period: str
    reason: str


class Alert(BaseModel):
    """One metric's move between two periods, and how unusual it is."""

    frame: Frame
    metric: Metric
    baseline: tuple[dt.datetime, dt.datetime]
    window: tuple[dt.datetime, dt.datetime]
    values: tuple[float | None, float | None]
    change: float
    surprise: float  # |change| / the metric's median absolute change
    buckets: tuple[Bucket, Bucket] | None = None  # the baseline's and the window's
    z: float | None = None  # the move in standard errors of its buckets' sampling
    z_needed: float = NOISE_Z  # the bar for this pick (grain.z_needed)
    driver: list[PredicateTerm] = Field(default_factory=list)  # the dominating slice, if any
    driver_explained: float | None = None
    also: list[AlsoShows] = Field(default_factory=list)  # the same event in other metrics

    def footprint(self) -> Footprint:
        return Footprint(
            fact=self.frame.fact, start=self.baseline[0], end=self.window[1], driver=self.driver
        )

    def driver_label(self) -> str:
        return self.footprint().label()

    def prompt(self) -> str:
        return render(
            0,
            metric=self.metric.label,
            table=self.frame.fact,
            period=self.frame.period,
            baseline=self.baseline,
            window=self.window,
            values=self.values,
            integer=self.metric.integer,
        )

    def task(self, database: str) -> Task:
        from workgym.envs.warehouse.investigate.build import question

        return Task(
            family=f"findings/{self.frame.fact}/{self.metric.kind}",
            prompt=self.prompt(),
            meta={
                # The data's own driver is the verifier's, never the investigator's to read.
                "alert": self.model_dump(
                    mode="json", exclude={"driver", "driver_explained", "also"}
                ),
                "database": database,
                "question": question(self.frame, self.metric, self.baseline, self.window),
            },
        )


def _values(
    con: Any, frame: Frame, metric: Metric, start: dt.datetime, end: dt.datetime
) -> float | None:
    where = between(frame, start, end)
    sql = f"SELECT {metric.value_sql(frame)} FROM {metric.source(frame)} WHERE {where}"
    row = con.execute(sql).fetchone()
    return None if row is None or row[0] is None else float(row[0])


class Picked(BaseModel):
    """The alerts to investigate, one per event, and what was left out and why."""

    alerts: list[Alert] = Field(default_factory=list)
    skipped: list[str] = Field(default_factory=list)  # tables with no frame (the card says)
    refused: list[Refusal] = Field(default_factory=list)  # tables whose grain refuses the period
    artefacts: list[str] = Field(default_factory=list)  # per table: buckets that carry no alert
    merged: int = 0  # moves listed under another alert (the same event)
    noise: int = 0  # (metric, period) moves within sampling noise
    z_needed: float = 0.0  # the bar they missed, in standard errors


def _candidates(con: Any, card: SchemaCard, picked: Picked) -> list[Alert]:
    """Every metric's largest move between whole, well-filled buckets, most surprising first."""
    frames, picked.skipped = discover(card)
    words = MetricWords(card)
    found: list[Alert] = []
    studied: list[tuple[Frame, Metric, float, list[tuple[Window, Bucket, Bucket, float | None]]]]
    studied = []
    for frame in frames:
        grain = measure(con, frame)
        why = grain.refusal()
        if why is not None:
            picked.refused.append(Refusal(table=frame.fact, period=frame.period, reason=why))
            continue
        bad = {
            b.start: why
            for b in grain.buckets
            if (why := bucket_problem(b, frame.period)) is not None
        }
        if bad:
            thin = sum(b.rows < MIN_BUCKET_ROWS for b in grain.buckets if b.start in bad)
            picked.artefacts.append(
                f"{frame.fact}: {len(bad)} of {len(grain.buckets)} {frame.period}s carry no "
                f"alert ({thin} hold fewer than {MIN_BUCKET_ROWS} rows, {len(bad) - thin} are "
                f"partial at the edge of the data's range)"
            )
        for metric in metrics(frame, card, words):
            st = study(con, frame, metric)
            if not st.windows or not st.scale:
                continue
            spread = spreads(con, frame, metric)
            fit = []
            for w in st.windows:
                b, a = grain.bucket(w.baseline[0]), grain.bucket(w.window[0])
                if b is None or a is None or b.start in bad or a.start in bad:
                    continue
                z = z_of(metric.kind, w.change, spread.get(b.start), spread.get(a.start))
                fit.append((w, b, a, z))
            if fit:
                studied.append((frame, metric, st.scale, fit))
    # Every (metric, period) compared is one test: the bar rises with their number, so that the
    # whole pick holds a sampling-noise alert with probability under FAMILY_ERROR.
    needed = z_needed(sum(len(f[3]) for f in studied))
    picked.z_needed = round(needed, 2)
    for frame, metric, scale, fit in studied:
        real = [f for f in fit if f[3] is None or f[3] >= needed]
        picked.noise += len(fit) - len(real)
        if not real:
            continue
        top, b, a, z = max(real, key=lambda f: abs(f[0].change))
        found.append(
            Alert(
                frame=frame,
                metric=metric,
                baseline=top.baseline,
                window=top.window,
                values=(
                    _values(con, frame, metric, *top.baseline),
                    _values(con, frame, metric, *top.window),
                ),
                change=top.change,
                surprise=abs(top.change) / scale,
                buckets=(b, a),
                z=None if z is None or math.isinf(z) else round(z, 2),
                z_needed=round(needed, 2),
            )
        )
    found.sort(key=lambda a: (-a.surprise, a.metric.label))
    return found[:MAX_CANDIDATES]


def _with_driver(con: Any, alert: Alert) -> Alert:
    terms, explained = driver(con, alert.frame, alert.metric, alert.baseline, alert.window)
    return alert.model_copy(update={"driver": terms, "driver_explained": explained})


def pick_alerts(con: Any, card: SchemaCard, n: int) -> Picked:
    """The `n` most surprising events, each the most surprising of the moves it holds (at most
    one move per metric); the other moves of an event are listed under it."""
    picked = Picked()
    kept: list[Alert] = []
    for cand in _candidates(con, card, picked):
        near = [
            k for k in kept if k.baseline[0] < cand.window[1] and cand.baseline[0] < k.window[1]
        ]
        if not near and len(kept) >= max(n, 0):
            continue
        cand = _with_driver(con, cand)
        home = None
        for k in near:
            if k.frame.fact == cand.frame.fact:
                share = overlap(con, cand.frame, k.footprint(), cand.footprint())
            else:
                share = same_time(k.footprint(), cand.footprint())
            if share >= SAME_EVENT:
                home = (k, share)
                break
        if home is not None:
            k, share = home
            k.also.append(
                AlsoShows(
                    metric=cand.metric.label,
                    fact=cand.frame.fact,
                    kind=cand.metric.kind,
                    baseline=cand.baseline,
                    window=cand.window,
                    change=cand.change,
                    surprise=cand.surprise,
                    driver=cand.driver_label(),
                    overlap=round(share, 4),
                )
            )
            picked.merged += 1
        elif len(kept) < max(n, 0):
            kept.append(cand)
    picked.alerts = kept
    return picked
