"""Slices: predicates over a fact table, turned into SQL, and the explainer that ranks them.

A predicate is a list of terms `{column, op, value}` joined by AND. Columns are the fact's own
(`carrier` or `flights.carrier`) or, one foreign-key hop away, a dimension's (`airlines.name`),
which becomes a semi-join so that a predicate can never multiply rows. Values become SQL literals
here and nowhere else, quoted, so a submitted predicate cannot inject SQL.

The explainer (used by the solvability gate and by findings on real data) measures every
one- and two-dimension slice by how much of a metric's period-over-period change it explains:
`explained = (change - change without the slice) / change`. Ranking multiplies that by the
slice's lift (explained share per share of rows), so a precise slice beats a broad one that
contains it, unless the broad one really moved as a whole (the EWR trap of docs/investigate.md).
"""

from __future__ import annotations

import datetime as dt
import itertools
import math
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel

from workgym.envs.warehouse.investigate.frame import Frame, Metric, plant_rows, rank_rows, ts
from workgym.envs.warehouse.runtime.conclusion_answer import PredicateTerm as Term
from workgym.envs.warehouse.source.duck import qi, ql

MAX_PAIR_DIMS = 6
MIN_SLICE_ROWS = 30  # a large table's floor; smaller ones use frame.rank_rows
MIN_SLICE_SHARE = 0.002


class PredicateError(ValueError):
    """A predicate that names an unknown column or misuses an operator."""


def literal(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            raise PredicateError("a predicate value must be a finite number")
        return repr(value)
    if isinstance(value, str):
        return ql(value)
    raise PredicateError(f"unsupported predicate value {value!r}")


def _condition(col: str, term: Term) -> str:
    op, value = term.op, term.value
    if op in ("is null", "is not null"):
        return f"{col} {op.upper()}"
    if op in ("in", "not in"):
        values = value if isinstance(value, list) else [value]
        if not values:
            raise PredicateError(f"{term.column} {op} needs at least one value")
        inner = ", ".join(literal(v) for v in values)
        return f"{col} {op.upper()} ({inner})"
    if isinstance(value, list):
        raise PredicateError(f"{term.column} {op} takes one value; use 'in' for a list")
    if value is None:
        if op == "=":
            return f"{col} IS NULL"
        if op == "!=":
            return f"{col} IS NOT NULL"
        raise PredicateError(f"{term.column} {op} NULL compares nothing; use 'is null'")
    return f"{col} {op} {literal(value)}"


def term_sql(term: Term, frame: Frame) -> str:
    """One term as SQL over alias `f` (a dimension column becomes an IN-subquery)."""
    table, _, column = term.column.strip().rpartition(".")
    table = table.strip('"')
    column = column.strip().strip('"')
    if table in ("", frame.fact):
        if column not in frame.columns:
            raise PredicateError(f"{frame.fact} has no column {column!r}")
        return _condition(f"f.{qi(column)}", term)
    for j in frame.joins:
        if j.dim == table:
            if column not in j.columns:
                raise PredicateError(f"{table} has no column {column!r}")
            inner = _condition(qi(column), term)
            return (
                f"f.{qi(j.fact_column)} IN (SELECT {qi(j.dim_column)} FROM {qi(j.dim)} "
                f"WHERE {inner})"
            )
    raise PredicateError(
        f"unknown table {table!r} in {term.column!r}: use {frame.fact}'s columns or a table "
        "its foreign keys reach"
    )


def predicate_sql(terms: Sequence[Term], frame: Frame) -> str:
    """The terms joined by AND (TRUE for an empty predicate: every row)."""
    if not terms:
        return "TRUE"
    return " AND ".join(f"({term_sql(t, frame)})" for t in terms)


SliceKey = tuple[tuple[str, Any], ...]


def canon(pairs: Sequence[tuple[str, Any]]) -> SliceKey:
    """A slice key in canonical order (by column name)."""
    return tuple(sorted(((c, v) for c, v in pairs), key=lambda cv: cv[0]))


def slice_terms(key: Sequence[tuple[str, Any]]) -> list[Term]:
    return [Term(column=c, op="=", value=v) for c, v in key]


class Cell(BaseModel):
    """Aggregates of one slice in the baseline (b) and the window (w)."""

    rows_b: int = 0
    rows_w: int = 0
    num_b: float = 0.0
    num_w: float = 0.0
    den_b: float = 0.0
    den_w: float = 0.0

    def minus(self, other: Cell) -> Cell:
        return Cell(**{k: getattr(self, k) - getattr(other, k) for k in Cell.model_fields})


class Explained(BaseModel):
    key: SliceKey
    explained: float
    score: float
    share: float
    change: float  # the slice's own metric change (window minus baseline)

    @property
    def terms(self) -> list[Term]:
        return slice_terms(self.key)

    def label(self) -> str:
        return " & ".join(f"{c}={v}" for c, v in self.key)


def related(a: SliceKey, b: SliceKey) -> bool:
    """One slice's terms contain the other's (a sub- or super-slice)."""
    sa, sb = set(a), set(b)
    return sa <= sb or sb <= sa


class SliceTable(BaseModel):
    """Per-slice aggregates for one metric, baseline and window."""

    ratio: bool
    total: Cell
    cells: dict[SliceKey, Cell]
    min_rows: int = MIN_SLICE_ROWS  # rows (baseline + window) a slice needs to be ranked
    plant_rows: int = 30  # rows a planted slice needs in each period (design.slice_choices)

    def value(self, cell: Cell, period: Literal["b", "w"]) -> float | None:
        num = cell.num_b if period == "b" else cell.num_w
        if not self.ratio:
            return num
        den = cell.den_b if period == "b" else cell.den_w
        return num / den if den else None

    def change(self, cell: Cell) -> float | None:
        b, w = self.value(cell, "b"), self.value(cell, "w")
        return None if b is None or w is None else w - b

    def explain(self) -> list[Explained]:
        """Slices ranked by score (explained share times lift), best first."""
        total = self.change(self.total)
        rows = self.total.rows_b + self.total.rows_w
        out: list[Explained] = []
        if total is None or total == 0 or rows == 0:
            return out
        for key, cell in self.cells.items():
            n = cell.rows_b + cell.rows_w
            share = n / rows
            if n < self.min_rows or share < MIN_SLICE_SHARE or share >= 1:
                continue
            rest = self.change(self.total.minus(cell))
            if rest is None:
                continue
            e = (total - rest) / total
            own = self.change(cell)
            out.append(
                Explained(
                    key=key,
                    explained=e,
                    score=e * abs(e) / share,
                    share=share,
                    change=own if own is not None else 0.0,
                )
            )
        out.sort(key=lambda x: (-x.score, len(x.key), x.key))
        return out


def _dims_for_pairs(frame: Frame) -> list[str]:
    return frame.dims[:MAX_PAIR_DIMS]


def slice_table(
    con: Any,
    frame: Frame,
    metric: Metric,
    baseline: tuple[dt.datetime, dt.datetime],
    window: tuple[dt.datetime, dt.datetime],
    relation: str | None = None,
    pairs: bool = True,
) -> SliceTable:
    """Aggregate the metric for every 1-dim (and 2-dim) slice in baseline and window."""
    dims = frame.dims
    cols = ", ".join(f"{frame.dim_sql(d)} AS {qi(d)}" for d in dims)
    den = metric.den(frame) or "0"
    inner = (
        f"SELECT ({frame.t} >= {ts(window[0])}) AS __w, {cols}, "
        f"{metric.num(frame)} AS __x, {den} AS __y "
        f"FROM {metric.source(frame, relation)} "
        f"WHERE {frame.t} >= {ts(baseline[0])} AND {frame.t} < {ts(window[1])} "
        f"AND NOT ({frame.t} >= {ts(baseline[1])} AND {frame.t} < {ts(window[0])})"
    )
    sets: list[tuple[str, ...]] = [("__w",)] + [("__w", d) for d in dims]
    if pairs:
        sets += [("__w", a, b) for a, b in itertools.combinations(_dims_for_pairs(frame), 2)]
    grouping = ", ".join("(" + ", ".join(qi(c) for c in s) + ")" for s in sets)
    dim_list = ", ".join(qi(d) for d in dims)
    sql = (
        f"SELECT GROUPING({dim_list}) AS __g, __w, {dim_list}, count(*), "
        f"coalesce(sum(__x), 0), coalesce(sum(__y), 0) FROM ({inner}) "
        f"GROUP BY GROUPING SETS ({grouping})"
    )
    cells: dict[SliceKey, Cell] = {}
    total = Cell()
    nd = len(dims)
    for row in con.execute(sql).fetchall():
        g, in_w = int(row[0]), bool(row[1])
        values = row[2 : 2 + nd]
        n, x, y = int(row[2 + nd]), float(row[3 + nd]), float(row[4 + nd])
        present = [dims[i] for i in range(nd) if not (g >> (nd - 1 - i)) & 1]
        if not present:
            cell = total
        else:
            vals = [values[dims.index(d)] for d in present]
            if any(v is None for v in vals):
                continue
            key = canon(list(zip(present, (_plain(v) for v in vals), strict=True)))
            cell = cells.setdefault(key, Cell())
        if in_w:
            cell.rows_w, cell.num_w, cell.den_w = n, x, y
        else:
            cell.rows_b, cell.num_b, cell.den_b = n, x, y
    return SliceTable(
        ratio=metric.den(frame) is not None,
        total=total,
        cells=cells,
        min_rows=rank_rows(frame),
        plant_rows=plant_rows(frame),
    )


def _plain(value: Any) -> Any:
    if isinstance(value, bool | int | float | str):
        return value
    return str(value)
