"""Column and table roles: how a generator should treat each column and table.

Columns: time (temporal types, HHMM-encoded clock times, year/month/day/hour/minute integers in
range, yyyymmdd integers named as dates), identifier (keys of their own table; id-like names
such as *_id, *key, *num, *_sk; or the table's own name in the singular, like flights.flight),
dimension (foreign keys, text, low-cardinality integer codes), measure (other numbers).

A surrogate key (an integer identifier, or an integer foreign key to one, such as TPC-DS
`ws_sold_date_sk`) carries no meaning of its own: it is never aggregated, averaged, compared
with a threshold or used to name a row; its dimension's label is (`surrogate`).

Tables: bridge (links two or more tables and carries nothing else), fact (references other
tables and has time and measures, or has no key that anyone references), dimension (referenced
by others, or a keyed table on its own).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from workgym.envs.warehouse.schema.card import ColumnCard, ColumnRole, ForeignKeyCard, TableCard
from workgym.envs.warehouse.source.typemap import NUMERIC_FAMILIES, TEMPORAL_FAMILIES

LOW_CARDINALITY = 20  # integers with at most this many values are codes, not measures
TIME_UNITS = {
    "year": (1000, 3000), "month": (1, 12), "day": (1, 31), "hour": (0, 24),
    "minute": (0, 59), "second": (0, 60), "quarter": (1, 4), "week": (0, 53),
    "weekday": (0, 7), "dow": (0, 7), "doy": (1, 366),
}  # fmt: skip
_ID_SUFFIXES = ("_id", "key", "_uuid", "_no", "_nr", "num", "number", "_sk")


YYYYMMDD = (18000101, 22001231)


def is_yyyymmdd(col: ColumnCard) -> bool:
    """An integer date written as yyyymmdd (20130105), recognised by name and range."""
    if (
        col.family != "integer"
        or "date" not in col.name.lower()
        or col.name.lower().endswith(("_sk", "_id", "key"))
    ):
        return False
    lo, hi = col.min, col.max
    return isinstance(lo, int) and isinstance(hi, int) and YYYYMMDD[0] <= lo <= hi <= YYYYMMDD[1]


def is_text_date(col: ColumnCard) -> bool:
    """Text that is an ISO date or timestamp in every non-NULL row ('2013-01-01 05:00:00')."""
    return col.family == "string" and col.encoding == "iso_text"


_VERSION_PAIRS = (("start", "end"), ("from", "to"), ("begin", "end"), ("valid_from", "valid_to"),
                  ("effective", "expiry"))  # fmt: skip


def versioned_columns(table: TableCard) -> set[str]:
    """Valid-from / valid-to date pairs (i_rec_start_date, i_rec_end_date): a versioned record's
    validity, never the time of an event."""
    dates = {c.name.lower(): c.name for c in table.columns if c.family in TEMPORAL_FAMILIES}
    out: set[str] = set()
    for low, name in dates.items():
        for a, b in _VERSION_PAIRS:
            twin = low.replace(a, b, 1) if a in low else None
            if (
                twin
                and twin != low
                and twin in dates
                and ("rec" in low or "valid" in low or a in ("valid_from", "effective"))
            ):
                out |= {name, dates[twin]}
    return out


def open_end(table: TableCard) -> str | None:
    """The valid-to column of a versioned table whose NULL marks the current version
    (i_rec_end_date), or None when the table is not versioned or no row is current. A question
    about "the items" means the current versions: an expired version is history."""
    ends = [
        c
        for c in table.columns
        if c.name in versioned_columns(table)
        and {"end", "to", "expiry", "until"} & set(re.split(r"[^a-z0-9]+", c.name.lower()))
    ]
    current = [c for c in ends if 0 < c.null_count < table.rows]
    return current[0].name if len(current) == 1 else None


def is_time(col: ColumnCard) -> bool:
    """Temporal types, HHMM clock integers, yyyymmdd integers, ISO dates in text, and
    calendar-part integers within their range."""
    if col.family in TEMPORAL_FAMILIES or col.encoding == "hhmm":
        return True
    if is_yyyymmdd(col) or is_text_date(col):
        return True
    if col.family != "integer":
        return False
    name = col.name.lower()
    for unit, (lo, hi) in TIME_UNITS.items():
        if name == unit or name.endswith("_" + unit):
            lo_ok = not isinstance(col.min, int) or col.min >= lo
            hi_ok = not isinstance(col.max, int) or col.max <= hi
            return lo_ok and hi_ok
    return False


def singular(name: str) -> str:
    name = name.lower()
    if name.endswith("ies"):
        return name[:-3] + "y"
    if name.endswith("s") and not name.endswith("ss"):
        return name[:-1]
    return name


def id_like(table: TableCard, col: ColumnCard) -> bool:
    name = col.name.lower()
    return name == "id" or name.endswith(_ID_SUFFIXES) or name == singular(table.name)


def surrogate(table: TableCard, col: ColumnCard, is_fk: bool) -> bool:
    """An integer key or integer foreign key: a row's number, not a quantity or a name."""
    if col.family != "integer":
        return False
    return is_fk or col.role == "identifier" or id_like(table, col)


def measure_like(table: TableCard, col: ColumnCard) -> bool:
    """Numbers one would aggregate: not time, not id-like, not a low-cardinality integer code."""
    if col.family == "interval":
        return True
    if col.family not in NUMERIC_FAMILIES or is_time(col) or id_like(table, col):
        return False
    return not (col.family == "integer" and col.distinct_count <= LOW_CARDINALITY)


def assign_roles(tables: Sequence[TableCard], fks: Sequence[ForeignKeyCard]) -> None:
    """Set `role` on every column and table of the card, in place."""
    fk_cols = {(f.table, c) for f in fks for c in f.columns}
    outgoing = {f.table for f in fks}
    incoming = {f.ref_table for f in fks if f.ref_table != f.table}
    for table in tables:
        keys = table.single_keys()
        for col in table.columns:
            col.role = _column_role(table, col, keys, (table.name, col.name) in fk_cols)
        versions = versioned_columns(table)
        roles = [c.role for c in table.columns if c.name not in versions]
        others = [
            c for c in table.columns if (table.name, c.name) not in fk_cols and c.role != "time"
        ]
        refs = {f.ref_table for f in fks if f.table == table.name}
        if len(refs) >= 2 and "measure" not in roles and len(others) <= 1:
            table.role = "bridge"
        elif table.name in outgoing and "time" in roles and "measure" in roles:
            table.role = "fact"
        elif table.name in incoming and event_time(table) is not None:
            table.role = "fact"  # a dated header others point to (a release, an order)
        elif table.name in incoming:
            table.role = "dimension"
        elif table.name in outgoing:
            table.role = "fact"
        else:
            table.role = "dimension" if keys else "fact"


EVENT_TIME_FAMILIES = ("date", "timestamp", "timestamptz")
EVENT_TIME_MAX_NULL = 0.05


def event_time(table: TableCard) -> ColumnCard | None:
    """The column that says when a row happened, or None: a date or timestamp of its own,
    nearly always filled, not a record-version bound (valid from / to), and not a calendar's
    own day (a date unique per row is a date dimension). Issue 40: a referenced table with
    such a column is an event, not an entity: Debian's changelog entries (a release each,
    11,295 dated rows, 1995-2026) were typed a dimension, so no trend or investigation was
    drawn from them although changes and bug closures point at them as lines at a header."""
    if table.rows < 2:
        return None
    versions = versioned_columns(table)
    for col in table.columns:
        if col.family not in EVENT_TIME_FAMILIES or col.name in versions:
            continue
        if col.null_rate >= EVENT_TIME_MAX_NULL:
            continue
        if col.family == "date" and col.distinct_count >= table.rows - col.null_count:
            continue
        return col
    return None


def _column_role(table: TableCard, col: ColumnCard, keys: set[str], is_fk: bool) -> ColumnRole:
    if is_time(col):
        return "time"
    if col.name in keys:
        return "identifier"
    if is_fk:
        return "dimension"
    if id_like(table, col):
        return "identifier"
    return "measure" if measure_like(table, col) else "dimension"
