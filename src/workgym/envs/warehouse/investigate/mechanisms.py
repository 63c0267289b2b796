"""The seven planted mechanisms, each as one SQL SELECT that rewrites the fact table.

A plant never loops over rows in Python: `planted_select` returns a query over the (jittered)
fact table that yields the planted table, and `affected_select` the original rows the plant
touched (their count and hash sum go into the manifest). Rows are chosen by a salted row hash, so
the same plant always hits the same rows and no ordering of the source matters.

- segment_shock: a measure moves by `delta` for the slice in the window.
- volume_drop / duplication: a share of the slice's rows is deleted / inserted again verbatim.
- data_bug: a measure becomes NULL, 0, is multiplied by a unit factor, or changes sign.
- mix_shift: the slice gains rows (copies of its own rows from an earlier period, moved into the
  window, with fresh ids), so its share grows while its own level does not change.
- join_break: the slice's foreign key stops matching (codes lower-cased), so joins lose rows.
- freshness_gap: the slice's rows after a cut-off inside the window never arrived.
- clock_shift: the slice's timestamps are moved by whole hours (a time-zone bug).
"""

from __future__ import annotations

import datetime as dt
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from workgym.envs.warehouse.investigate.frame import Frame, between
from workgym.envs.warehouse.investigate.slices import predicate_sql
from workgym.envs.warehouse.investigate.vocab import CauseType
from workgym.envs.warehouse.runtime.conclusion_answer import PredicateTerm as Term
from workgym.envs.warehouse.source.duck import qi

BugKind = Literal["null", "zero", "unit", "sign"]
HASH_SCALE = 1_000_000
INTEGER_TYPES = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT",
                 "UINTEGER", "UBIGINT")  # fmt: skip


class PlantSpec(BaseModel):
    """Everything needed to re-create one plant from the snapshot."""

    model_config = ConfigDict(frozen=True)

    cause_type: CauseType
    slice: list[Term]
    window: tuple[dt.datetime, dt.datetime]
    salt: int
    fraction: float = 1.0
    column: str | None = None  # the measure (shock, bug) or the foreign key (join_break)
    delta: float | None = None  # segment_shock
    bug: BugKind | None = None  # data_bug
    factor: float | None = None  # data_bug "unit"
    shift_hours: int | None = None  # clock_shift
    cut: dt.datetime | None = None  # freshness_gap
    source_shift_days: int | None = None  # mix_shift: copies come from this many days earlier
    id_offsets: dict[str, int] = Field(default_factory=dict)  # mix_shift: fresh integer ids

    @property
    def planted_window(self) -> tuple[dt.datetime, dt.datetime]:
        if self.cause_type == "freshness_gap" and self.cut is not None:
            return self.cut, self.window[1]
        return self.window

    def detail(self) -> dict[str, object]:
        """The plant's parameters for the manifest (what, how much, how chosen)."""
        keys = ("fraction", "column", "delta", "bug", "factor", "shift_hours", "source_shift_days")
        out: dict[str, object] = {k: getattr(self, k) for k in keys if getattr(self, k) is not None}
        if self.cut is not None:
            out["cut"] = self.cut.isoformat()
        if self.id_offsets:
            out["id_offsets"] = dict(self.id_offsets)
        return out


def _cols(frame: Frame) -> str:
    return ", ".join(f"f.{qi(c)}" for c in frame.columns)


def chosen(spec: PlantSpec, frame: Frame) -> str:
    """The salted row-hash test that picks `fraction` of the rows."""
    if spec.fraction >= 1:
        return "TRUE"
    limit = round(spec.fraction * HASH_SCALE)
    return f"(hash({int(spec.salt)}::BIGINT, {_cols(frame)}) % {HASH_SCALE}) < {limit}"


def _where(spec: PlantSpec, frame: Frame) -> str:
    lo, hi = spec.window
    parts = [between(frame, lo, hi), f"({predicate_sql(spec.slice, frame)})", chosen(spec, frame)]
    if spec.cause_type in ("data_bug", "join_break") or (
        spec.cause_type == "segment_shock" and spec.column
    ):
        parts.append(f"f.{qi(spec.column or '')} IS NOT NULL")
    return " AND ".join(parts)


def _is_int(frame: Frame, column: str) -> bool:
    return frame.types.get(column, "").upper() in INTEGER_TYPES


def _cast(frame: Frame, column: str, expr: str) -> str:
    kind = frame.types.get(column, "DOUBLE")
    if _is_int(frame, column):
        return f"CAST(round({expr}) AS {kind})"
    return f"CAST({expr} AS {kind})"


def _replace(frame: Frame, column: str, new: str, when: str) -> str:
    col = qi(column)
    return f"CASE WHEN {when} THEN {new} ELSE f.{col} END AS {col}"


def planted_select(spec: PlantSpec, frame: Frame, base: str) -> str:
    """SELECT over `base` (the fact table, or its jittered copy) that yields the planted table."""
    src = f"{base} AS f"
    where = _where(spec, frame)
    kind = spec.cause_type
    if kind in ("segment_shock", "data_bug"):
        col = spec.column or ""
        f_col = f"f.{qi(col)}"
        if kind == "segment_shock":
            new = _cast(frame, col, f"{f_col} + {float(spec.delta or 0)!r}")
        elif spec.bug == "null":
            new = f"CAST(NULL AS {frame.types.get(col, 'DOUBLE')})"
        elif spec.bug == "zero":
            new = _cast(frame, col, "0")
        elif spec.bug == "sign":
            new = _cast(frame, col, f"-{f_col}")
        else:
            new = _cast(frame, col, f"{f_col} * {float(spec.factor or 1)!r}")
        return f"SELECT * REPLACE ({_replace(frame, col, new, where)}) FROM {src}"
    if kind == "volume_drop":
        return f"SELECT * FROM {src} WHERE NOT ({where})"
    if kind == "duplication":
        return f"SELECT * FROM {src} UNION ALL SELECT * FROM {src} WHERE {where}"
    if kind == "freshness_gap":
        assert spec.cut is not None
        gap = between(frame, spec.cut, spec.window[1])
        return f"SELECT * FROM {src} WHERE NOT ({gap} AND ({predicate_sql(spec.slice, frame)}))"
    if kind == "join_break":
        col = qi(spec.column or "")
        f_col = f"f.{col}"
        if _is_int(frame, spec.column or ""):
            new = f"{f_col} + {int(spec.factor or 10**9)}"
        else:
            low = f"lower({f_col})"
            new = f"CASE WHEN {low} <> {f_col} THEN {low} ELSE {f_col} || '-0' END"
        return f"SELECT * REPLACE ({_replace(frame, spec.column or '', new, where)}) FROM {src}"
    if kind == "clock_shift":
        t = qi(frame.time_column)
        shifted = f"f.{t} + INTERVAL ({int(spec.shift_hours or 0)}) HOUR"
        return f"SELECT * REPLACE ({_replace(frame, frame.time_column, shifted, where)}) FROM {src}"
    if kind == "mix_shift":
        return f"SELECT * FROM {src} UNION ALL {_copies(spec, frame, src)}"
    raise ValueError(f"no planting for {kind!r}")


def _copies(spec: PlantSpec, frame: Frame, src: str) -> str:
    days = int(spec.source_shift_days or 7)
    t = frame.time_column
    kind = frame.types.get(t, "TIMESTAMP")
    moved = f"{frame.t} + INTERVAL ({days}) DAY"
    if frame.time_dim is not None:  # time behind a key: the copy takes the later day's key
        parts = [f"CAST(({frame.key_of(moved)}) AS {kind}) AS {qi(t)}"]
    else:
        parts = [f"CAST({moved} AS {kind}) AS {qi(t)}"]
    if frame.date_parts:
        y, m, d = (qi(c) for c in frame.date_parts)
        day = f"(make_date(f.{y}, f.{m}, f.{d}) + INTERVAL ({days}) DAY)"
        for col, fn in zip(frame.date_parts, ("year", "month", "day"), strict=True):
            parts.append(f"CAST({fn}({day}) AS {frame.types.get(col, 'BIGINT')}) AS {qi(col)}")
    for col, offset in sorted(spec.id_offsets.items()):
        parts.append(f"f.{qi(col)} + {int(offset)} AS {qi(col)}")
    return f"SELECT * REPLACE ({', '.join(parts)}) FROM {src} WHERE {_copy_where(spec, frame)}"


def _copy_where(spec: PlantSpec, frame: Frame) -> str:
    shift = dt.timedelta(days=int(spec.source_shift_days or 7))
    lo, hi = spec.window
    return " AND ".join(
        [
            between(frame, lo - shift, hi - shift),
            f"({predicate_sql(spec.slice, frame)})",
            chosen(spec, frame),
        ]
    )


def affected_select(spec: PlantSpec, frame: Frame, base: str) -> str:
    """The original rows the plant touched (for mix_shift: the rows it copied)."""
    src = f"{base} AS f"
    if spec.cause_type == "freshness_gap":
        assert spec.cut is not None
        gap = between(frame, spec.cut, spec.window[1])
        return f"SELECT f.* FROM {src} WHERE {gap} AND ({predicate_sql(spec.slice, frame)})"
    if spec.cause_type == "mix_shift":
        return f"SELECT f.* FROM {src} WHERE {_copy_where(spec, frame)}"
    return f"SELECT f.* FROM {src} WHERE {_where(spec, frame)}"


def checksum_sql(spec: PlantSpec, frame: Frame, base: str) -> str:
    cols = ", ".join(qi(c) for c in frame.columns)
    inner = affected_select(spec, frame, base)
    return f"SELECT count(*), coalesce(sum(hash({cols})), 0) FROM ({inner})"


def planted_columns(spec: PlantSpec, frame: Frame) -> list[str]:
    """`table.column` of every column the plant selects on or changes (a split unit part)."""
    cols = {t.column for t in spec.slice}
    if spec.column:
        cols.add(spec.column)
    if spec.cause_type in ("clock_shift", "freshness_gap", "mix_shift"):
        cols.add(frame.time_column)
    return sorted(f"{frame.fact}.{c}" if c in frame.columns else c for c in cols)
