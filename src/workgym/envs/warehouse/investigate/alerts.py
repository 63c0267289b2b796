"""Alerts on real data: the period-over-period moves worth investigating.

On the real warehouse nothing is planted, so the questions are the ones a monitoring system
would raise: for every metric the card supports, the periods whose change is largest relative
to that metric's typical change. Each alert is phrased with the same templates as the planted
tasks, so an agent trained on the generated environment meets the same kind of question.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from pydantic import BaseModel

from workgym.core.tasks import Task
from workgym.envs.warehouse.investigate.design import study
from workgym.envs.warehouse.investigate.frame import (
    Frame,
    Metric,
    MetricWords,
    between,
    discover,
    metrics,
)
from workgym.envs.warehouse.investigate.prompts import render
from workgym.envs.warehouse.schema.card import SchemaCard


class Alert(BaseModel):
    """One metric's move between two periods, and how unusual it is."""

    frame: Frame
    metric: Metric
    baseline: tuple[dt.datetime, dt.datetime]
    window: tuple[dt.datetime, dt.datetime]
    values: tuple[float | None, float | None]
    change: float
    surprise: float  # |change| / the metric's median absolute change

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
                "alert": self.model_dump(mode="json"),
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


def pick_alerts(con: Any, card: SchemaCard, n: int) -> tuple[list[Alert], list[str]]:
    """The `n` most surprising (metric, period) moves, at most one per metric."""
    frames, skipped = discover(card)
    words = MetricWords(card)
    found: list[Alert] = []
    for frame in frames:
        for metric in metrics(frame, card, words):
            st = study(con, frame, metric)
            if not st.windows or not st.scale:
                continue
            top = max(st.windows, key=lambda w: abs(w.change))
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
                    surprise=abs(top.change) / st.scale,
                )
            )
    found.sort(key=lambda a: (-a.surprise, a.metric.label))
    return found[: max(n, 0)], skipped
