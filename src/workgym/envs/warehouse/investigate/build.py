"""Build F9 investigation tasks: plan, plant, gate, copy, phrase.

`build_investigation_tasks(snapshot_path, card, rng, n)` is what the warehouse generator calls.
About 15% of the tasks plant nothing (`search.plan`); the rest cycle through the eight planted
types so every mechanism is represented. Each task is searched for (metric, period, slice,
strength) until the solvability gate admits it (`search`); rejected attempts are logged with
their reason in `plants/build.json`. Admitted tasks get their own planted copy
(`plants/<id>.duckdb`), recorded in `task.meta["database"]` relative to the environment
directory, and a gold answer holding the oracle's conclusion and the hidden manifest.
"""

from __future__ import annotations

import datetime as dt
import json
import random
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from workgym.core.tasks import Task
from workgym.envs.warehouse.generate.splits import unit_key
from workgym.envs.warehouse.investigate.frame import (
    Frame,
    Metric,
    MetricWords,
    between,
    discover,
    iso,
    metrics,
    ts,
)
from workgym.envs.warehouse.investigate.manifest import Affected, GateRecord, Manifest
from workgym.envs.warehouse.investigate.mechanisms import (
    checksum_sql,
    planted_columns,
    planted_select,
)
from workgym.envs.warehouse.investigate.plant import (
    PLANTS_DIR,
    Copier,
    attach_snapshot,
    clear_plants,
    jittered,
)
from workgym.envs.warehouse.investigate.prompts import TEMPLATES, clock_of, render
from workgym.envs.warehouse.investigate.search import BuildReport, Finder, Found, plan, search
from workgym.envs.warehouse.investigate.slices import predicate_sql
from workgym.envs.warehouse.runtime.conclusion_answer import (
    ConclusionAnswer,
    EvidenceQuery,
    PredicateTerm,
)
from workgym.envs.warehouse.schema.card import SchemaCard
from workgym.envs.warehouse.source.duck import connect
from workgym.envs.warehouse.source.snapshot import SNAPSHOT_FILE
from workgym.verifiers.sql_exec import execute_sql

MAX_COPY_ROWS = 400_000  # larger fact tables are copied for a range of periods only
BUILD_LOG = "build.json"


@dataclass
class Investigations:
    tasks: list[Task]
    report: BuildReport


def build_investigation_tasks(
    snapshot_path: str | Path,
    card: SchemaCard,
    rng: random.Random,
    n: int,
    *,
    out_dir: str | Path | None = None,
) -> list[Task]:
    """`n` investigation tasks over the snapshot, their copies written under `out_dir/plants`."""
    return build_investigations(snapshot_path, card, rng, n, out_dir=out_dir).tasks


def build_investigations(
    snapshot_path: str | Path,
    card: SchemaCard,
    rng: random.Random,
    n: int,
    *,
    out_dir: str | Path | None = None,
) -> Investigations:
    snapshot = Path(snapshot_path)
    if snapshot.is_dir():
        snapshot = snapshot / SNAPSHOT_FILE
    out = Path(out_dir) if out_dir is not None else snapshot.parent
    frames, skipped = discover(card)
    report = BuildReport(requested=n, skipped=skipped)
    if n <= 0 or not frames:
        return Investigations([], report)
    started = time.perf_counter()
    words = MetricWords(card)
    catalogue = {f.fact: metrics(f, card, words) for f in frames}
    con = connect()
    try:
        attach_snapshot(con, snapshot)
        finder = Finder(con, card, frames, catalogue, rng, report)
        found = search(finder, plan(n, rng))
        report.timings_s["search"] = round(time.perf_counter() - started, 2)
        clear_plants(out)
        t0 = time.perf_counter()
        copier = Copier(con, out / PLANTS_DIR)
        try:
            tasks = [_task(con, copier, out, f, card, rng) for f in found]
        finally:
            copier.close()
        report.timings_s["copies"] = round(time.perf_counter() - t0, 2)
    finally:
        con.close()
    report.tasks = len(tasks)
    report.by_cause = dict(sorted(Counter(str(t.meta["cause_type"]) for t in tasks).items()))
    report.timings_s["total"] = round(time.perf_counter() - started, 2)
    (out / PLANTS_DIR).mkdir(parents=True, exist_ok=True)
    (out / PLANTS_DIR / BUILD_LOG).write_text(report.model_dump_json(indent=2) + "\n")
    return Investigations(tasks, report)


def _copy_range(f: Found) -> tuple[dt.datetime, dt.datetime] | None:
    """For a fact table over MAX_COPY_ROWS, the periods a copy keeps: enough history before the
    window to judge what is normal, and one period after it (the rest stays in the snapshot)."""
    frame = f.st.frame
    if frame.rows <= MAX_COPY_ROWS or not f.st.windows:
        return None
    step = f.win.window[1] - f.win.window[0]
    per_period = frame.rows / (len(f.st.windows) + 3)
    before = int(min(max(MAX_COPY_ROWS // max(per_period, 1) - 2, 4), 52))
    return f.win.baseline[0] - step * (before - 1), f.win.window[1] + step


def evidence_sql(
    frame: Frame,
    metric: Metric,
    baseline: tuple[dt.datetime, dt.datetime],
    window: tuple[dt.datetime, dt.datetime],
    predicate: list[PredicateTerm],
) -> str:
    """The metric for a slice in both periods: the query an investigator cites."""
    return (
        f"SELECT CASE WHEN {frame.t} >= {ts(window[0])} THEN 'window' ELSE 'baseline' END "
        f"AS period, {metric.value_sql(frame)} AS metric, count(*) AS n_rows "
        f"FROM {metric.source(frame)} WHERE {between(frame, baseline[0], window[1])} "
        f"AND {predicate_sql(predicate, frame)} GROUP BY period ORDER BY period"
    )


def _window_value(sql: str, database: Path) -> float | None:
    result = execute_sql(sql, database, timeout_s=60.0, max_rows=10)
    if not result.ok:
        raise RuntimeError(f"the oracle's evidence query failed on {database}: {result.error}")
    for period, value, _ in result.rows:
        if period == "window":
            return None if value is None else float(value)
    return None


def _task(
    con: object, copier: Copier, out: Path, f: Found, card: SchemaCard, rng: random.Random
) -> Task:
    frame, metric = f.st.frame, f.st.metric
    plant_id = f"{rng.getrandbits(48):012x}"
    rel = f"{PLANTS_DIR}/{plant_id}.duckdb"
    path = out / rel
    base = jittered(frame, f.jitter)
    spec = f.spec
    fact_select = planted_select(spec, frame, base) if spec else f"SELECT * FROM {base} AS f"
    copy_range = _copy_range(f)
    if copy_range is not None:
        fact_select = f"SELECT * FROM ({fact_select}) AS f WHERE {between(frame, *copy_range)}"
    digest = copier.write(path, frame, fact_select)
    affected = None
    predicate: list[PredicateTerm] = []
    columns: list[str] = []
    direction, magnitude = "none", None
    if spec is not None:
        rows, checksum = con.execute(checksum_sql(spec, frame, base)).fetchone()  # type: ignore[attr-defined]
        affected = Affected(
            rows=int(rows), checksum=str(checksum), salt=spec.salt, fraction=spec.fraction
        )
        predicate = list(spec.slice)
        columns = planted_columns(spec, frame)
        after = f.table.value(f.table.total, "w")
        if after is not None and f.unplanted_w is not None:
            direction = "up" if after > f.unplanted_w else "down"
            if f.unplanted_w:
                magnitude = round((after - f.unplanted_w) / abs(f.unplanted_w), 6)
    values = (f.table.value(f.table.total, "b"), f.table.value(f.table.total, "w"))
    sql = evidence_sql(frame, metric, f.win.baseline, f.win.window, predicate)
    evidence = EvidenceQuery(sql=sql, value=_window_value(sql, path))
    planted_window = spec.planted_window if spec else None
    manifest = Manifest(
        plant_id=plant_id,
        database=rel,
        digest=digest,
        frame=frame,
        metric=metric,
        baseline=f.win.baseline,
        window=f.win.window,
        cause_type=f.cause,
        predicate=predicate,
        planted_window=planted_window,
        direction=direction,  # type: ignore[arg-type]
        magnitude=magnitude,
        planted_columns=columns,
        detail=(spec.detail() if spec else {})
        | ({"copy_range": [iso(copy_range[0]), iso(copy_range[1])]} if copy_range else {}),
        affected=affected,
        jitter=f.jitter,
        values={"baseline": values[0], "window": values[1], "unplanted_window": f.unplanted_w},
        gate=GateRecord(**f.gate.model_dump(), attempts=f.attempts),
    )
    gold = ConclusionAnswer(
        kind="conclusion",
        cause_type=f.cause,
        predicate=predicate,
        window=[shown(planted_window[0]), shown(planted_window[1])] if planted_window else [],
        direction=direction,  # type: ignore[arg-type]
        magnitude=magnitude,
        evidence=[evidence],
        prose=_prose(f, metric),
        manifest=json.loads(manifest.model_dump_json()),
    )
    template = rng.randrange(len(TEMPLATES))
    prompt = render(
        template,
        metric=metric.label,
        table=frame.fact,
        period=frame.period,
        baseline=f.win.baseline,
        window=f.win.window,
        values=values,
        integer=metric.integer,
        clock=clock_of(frame, MetricWords(card)),
    )
    key = f"F9.t{template}"
    return Task(
        family=unit_key("F9", key, metric.tables, f.cause, columns),
        prompt=prompt,
        answer=gold.model_dump(mode="json"),
        meta={
            "family": "F9",
            "template": key,
            "tables": metric.tables,
            "cause_type": f.cause,
            "planted_columns": columns,
            "database": rel,
            "answer_spec": {"kind": "conclusion"},
            "metric": metric.kind,
            "fact": frame.fact,
            "relevant": [frame.fact],  # the audit flags a success that never queried it
            "window": [iso(f.win.window[0]), iso(f.win.window[1])],
            "question": question(frame, metric, f.win.baseline, f.win.window),
        },
    )


def question(
    frame: Frame,
    metric: Metric,
    baseline: tuple[dt.datetime, dt.datetime],
    window: tuple[dt.datetime, dt.datetime],
) -> dict[str, object]:
    """What the prompt states, as data (no part of the answer): scripted investigators read it."""
    return {
        "frame": frame.model_dump(mode="json"),
        "metric": metric.model_dump(mode="json"),
        "baseline": [iso(baseline[0]), iso(baseline[1])],
        "window": [iso(window[0]), iso(window[1])],
    }


def shown(value: dt.datetime) -> str:
    """A time as the tools print it (a date at midnight), so a correct answer quotes what the
    agent saw instead of a format only the gold uses."""
    if value.hour == value.minute == value.second == 0:
        return value.strftime("%Y-%m-%d")
    return value.strftime("%Y-%m-%d %H:%M:%S")


def _prose(f: Found, metric: Metric) -> str:
    if f.spec is None:
        return f"No single slice explains the change in {metric.label}; ordinary variation."
    where = " and ".join(f"{t.column} = {t.value!r}" for t in f.spec.slice)
    return f"{f.cause} in the rows where {where}: it accounts for the change in {metric.label}."
