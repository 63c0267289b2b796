"""One event is one finding: when two alerts are the same underlying move.

On TPC-DS the five most surprising moves were five joined counts of catalog_sales in the same
week (every key of every sale still matched its dimension): one event, reported five times
(issue 40). Metrics are not independent witnesses; rows are. So two alerts are the same event
when the **rows behind their moves overlap**, not when their names or texts agree:

- the *footprint* of an alert is the set of fact rows in its two compared periods (baseline and
  window) that lie in its *driver*: the slice that dominates its change by the solvability
  gate's own test (`solvability.dominates`), or every row of the two periods when no slice
  does (a move of the whole table);
- two alerts on the same fact table are one event when the rows both footprints hold are at
  least `SAME_EVENT` (two thirds) of the smaller footprint (the overlap coefficient). Two thirds,
  not a half: two whole-table moves in adjacent weeks share one of their two periods, about half
  their rows, and are not one event by that alone; a spike and its recovery share the spike
  week, which holds most of their rows, and are.

Across fact tables no row is shared, so only periods can tie two moves: two moves **of whole
tables** (no slice drives either) whose compared periods overlap by at least `SAME_EVENT` of
the shorter span are one event, a move of the warehouse at that time (on TPC-DS the new-year
drop moves catalog, store and web sales in the same week). A slice-driven move on another table is
never merged by time alone: it has rows of its own that the other move does not explain.

The overlap coefficient, not Jaccard, because nested slices are one event: a move driven by
`region = 'north'` and another driven by `region = 'north' AND channel = 'web'` share every row
of the smaller slice. Disjoint periods share no row, so moves in different weeks stay apart;
two independent slices moving in the same week stay apart too (their rows are disjoint). A
move of the whole table absorbs the slice moves in the same periods: they are listed with it,
never hidden. Decision 0167.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from workgym.envs.warehouse.investigate.frame import Frame, Metric, between
from workgym.envs.warehouse.investigate.slices import predicate_sql, slice_table
from workgym.envs.warehouse.investigate.solvability import dominates
from workgym.envs.warehouse.runtime.conclusion_answer import PredicateTerm
from workgym.envs.warehouse.source.duck import qi

SAME_EVENT = 2 / 3  # more than one of two equal periods: adjacent moves stay apart


class Footprint(BaseModel):
    """The rows behind one move: a fact table, a span of time, and a slice (empty: all rows)."""

    model_config = ConfigDict(frozen=True)

    fact: str
    start: dt.datetime
    end: dt.datetime
    driver: list[PredicateTerm] = Field(default_factory=list)

    def label(self) -> str:
        return " AND ".join(f"{t.column} = {t.value!r}" for t in self.driver) or "all rows"


def driver(
    con: Any,
    frame: Frame,
    metric: Metric,
    baseline: tuple[dt.datetime, dt.datetime],
    window: tuple[dt.datetime, dt.datetime],
) -> tuple[list[PredicateTerm], float | None]:
    """The slice that dominates the move (and the share it explains), or ([], None)."""
    ranked = slice_table(con, frame, metric, baseline, window).explain()
    if ranked and dominates(ranked, ranked[0])[0]:
        return ranked[0].terms, ranked[0].explained
    return [], None


def overlap(con: Any, frame: Frame, a: Footprint, b: Footprint) -> float:
    """Rows in both footprints over the rows of the smaller one (0 on different tables)."""
    if a.fact != b.fact or a.end <= b.start or b.end <= a.start:
        return 0.0
    in_a = f"({between(frame, a.start, a.end)} AND {predicate_sql(a.driver, frame)})"
    in_b = f"({between(frame, b.start, b.end)} AND {predicate_sql(b.driver, frame)})"
    row = con.execute(
        f"SELECT count(*) FILTER (WHERE a), count(*) FILTER (WHERE b), "
        f"count(*) FILTER (WHERE a AND b) FROM (SELECT {in_a} AS a, {in_b} AS b "
        f"FROM {qi(frame.fact)} AS f WHERE {in_a} OR {in_b})"
    ).fetchone()
    if row is None:
        return 0.0
    n_a, n_b, both = (int(x or 0) for x in row)
    smaller = min(n_a, n_b)
    return both / smaller if smaller else 0.0


def same_time(a: Footprint, b: Footprint) -> float:
    """Shared time of two footprints over the shorter one's span (0 when either has a driver:
    a slice-driven move is tied to another only by its rows)."""
    if a.driver or b.driver:
        return 0.0
    shared = min(a.end, b.end) - max(a.start, b.start)
    shorter = min(a.end - a.start, b.end - b.start)
    if shared <= dt.timedelta(0) or shorter <= dt.timedelta(0):
        return 0.0
    return shared / shorter
