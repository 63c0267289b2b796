"""Time behind keys: fact rows whose date lives in a date dimension (star schemas).

TPC-DS keeps no date on its fact tables: `ws_sold_date_sk` references `date_dim.d_date_sk`, and
the date is `date_dim.d_date`. A fact table with no time of its own but such a key still has a
time axis, and trends (F4), investigations (F9) and `workgym investigate` use it. A link is a
single-column foreign key into a table whose date or timestamp column is unique there (a date
dimension: one row per day); its range is taken over the dates the fact's rows reach, not the
dimension's whole calendar (date_dim spans 1900-2100, the sales five years).
"""

from __future__ import annotations

from collections.abc import Sequence

import duckdb

from workgym.envs.warehouse.schema.card import ForeignKeyCard, TableCard, TimeLinkCard
from workgym.envs.warehouse.source.duck import qi

LINK_FAMILIES = ("date", "timestamp")


def find_time_links(
    con: duckdb.DuckDBPyConnection, tables: Sequence[TableCard], fks: Sequence[ForeignKeyCard]
) -> list[TimeLinkCard]:
    by_name = {t.name: t for t in tables}
    out: list[TimeLinkCard] = []
    for fk in fks:
        if len(fk.columns) != 1 or fk.ref_table == fk.table or fk.ref_table not in by_name:
            continue
        dim = by_name[fk.ref_table]
        dates = [
            c
            for c in dim.columns
            if c.family in LINK_FAMILIES and c.null_count == 0 and c.distinct_count == dim.rows
        ]
        if not dates or dim.rows < 2:
            continue
        date = dates[0]
        fact, key, column = qi(fk.table), qi(fk.ref_columns[0]), qi(fk.columns[0])
        row = con.execute(
            f"SELECT CAST(min(d.{qi(date.name)}) AS VARCHAR), CAST(max(d.{qi(date.name)}) AS "
            f"VARCHAR), count(d.{qi(date.name)}), count(f.{column}), count(*) FROM {fact} AS f "
            f"LEFT JOIN {qi(dim.name)} AS d ON f.{column} = d.{key}"
        ).fetchone()
        assert row is not None
        lo, hi, resolved, non_null, rows = row
        if lo is None or not non_null:
            continue
        anchor = _anchor(con, dim, fk.ref_columns[0], date.name) if date.family == "date" else None
        out.append(
            TimeLinkCard(
                table=fk.table,
                column=fk.columns[0],
                dim=dim.name,
                key=fk.ref_columns[0],
                time_column=date.name,
                family=date.family,
                min=str(lo),
                max=str(hi),
                null_rate=round(1 - non_null / rows, 6) if rows else 1.0,
                resolved=round(resolved / non_null, 6),
                anchor_key=anchor[0] if anchor else None,
                anchor_date=anchor[1] if anchor else None,
            )
        )
    return out


def _anchor(
    con: duckdb.DuckDBPyConnection, dim: TableCard, key: str, date: str
) -> tuple[int, str] | None:
    """(key, date) of the first row when every row's date is that date plus the key difference
    in days (an integer key counting days), else None."""
    if dim.column(key).family != "integer":
        return None
    k, d = qi(key), qi(date)
    row = con.execute(
        f"WITH a AS (SELECT {k} AS k0, {d} AS d0 FROM {qi(dim.name)} ORDER BY {k} LIMIT 1) "
        f"SELECT any_value(k0), CAST(any_value(d0) AS VARCHAR), count(*) FILTER (WHERE {d} <> "
        f"d0 + CAST({k} - k0 AS INTEGER)) FROM {qi(dim.name)}, a"
    ).fetchone()
    if row is None or row[0] is None or row[2]:
        return None
    return int(row[0]), str(row[1])
