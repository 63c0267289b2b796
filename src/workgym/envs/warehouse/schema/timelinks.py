"""Time behind keys: fact rows whose date lives in a date dimension (star schemas).

TPC-DS keeps no date on its fact tables: `ws_sold_date_sk` references `date_dim.d_date_sk`, and
the date is `date_dim.d_date`. A fact table with no time of its own but such a key still has a
time axis, and trends (F4), investigations (F9) and `workgym investigate` use it. A link is a
single-column foreign key into a table whose date or timestamp column is unique there (a date
dimension: one row per day); its range is taken over the dates the fact's rows reach, not the
dimension's whole calendar (date_dim spans 1900-2100, the sales five years).

Time through headers (issue 40, decision 0160). The ordinary OLTP header/line pair keeps the
date on the header: `order_lines.order_id` references `orders.order_id`, and `orders.order_date`
is when the order was placed, many orders a day (not unique, so not a date dimension). A line
table with no date of its own inherits its header's date through such a key (`via="header"`),
when all of these hold: the key is single-column and trusted (the card's foreign keys are
declared or trusted ones only), it references a unique key of the header, the header has an
event date (date or timestamp, not a record-version bound, under 5% NULL), and the names say
header and line: the line table's name starts with the header's singular name (order_lines,
OrderDetails, invoice_items for orders / Invoice), or both share their first word and the
line's declared key is the header key plus a line number (changelog_change for
changelog_entry). The name test keeps a product's launch date from becoming the time of every
sale of it: a product is referenced by many lines too, but its date is not when the line
happened.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

import duckdb

from workgym.envs.warehouse.schema.card import ForeignKeyCard, TableCard, TimeLinkCard
from workgym.envs.warehouse.schema.column_roles import (
    EVENT_TIME_FAMILIES,
    EVENT_TIME_MAX_NULL,
    is_text_date,
    singular,
    versioned_columns,
)
from workgym.envs.warehouse.source.duck import qi

LINK_FAMILIES = ("date", "timestamp")
OWN_TIME_FAMILIES = EVENT_TIME_FAMILIES
MAX_NULL_RATE = EVENT_TIME_MAX_NULL


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
        link = _link(con, fk, dim, dates[0].name, "dimension")
        if link is not None:
            out.append(link)
    dimension = {t.table for t in out}
    for fk in fks:
        if len(fk.columns) != 1 or fk.ref_table == fk.table or fk.ref_table not in by_name:
            continue
        if fk.table in dimension or fk.table not in by_name:
            continue
        date = header_date(by_name[fk.table], by_name[fk.ref_table], fk.ref_columns[0])
        if date is None:
            continue
        link = _link(con, fk, by_name[fk.ref_table], date, "header")
        if link is not None:
            out.append(link)
    return out


def _squash(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def has_own_time(table: TableCard) -> bool:
    """The table has an event date of its own (then no time is inherited)."""
    versions = versioned_columns(table)
    return any(
        (c.family in OWN_TIME_FAMILIES or is_text_date(c))
        and c.null_rate < MAX_NULL_RATE
        and c.name not in versions
        for c in table.columns
    )


def header_date(line: TableCard, header: TableCard, key: str) -> str | None:
    """The header's event date a line inherits through `key`, or None when `header` is not the
    line's header (see the module docstring for the rules)."""
    if has_own_time(line) or header.rows < 2 or key not in header.single_keys():
        return None
    if not _named_as_lines(line, header, key):
        return None
    versions = versioned_columns(header)
    dates = [
        c
        for c in header.columns
        if c.family in LINK_FAMILIES
        and c.null_rate < MAX_NULL_RATE
        and c.name not in versions
        and c.distinct_count < header.rows - c.null_count  # unique dates are a dimension
    ]
    return dates[0].name if dates else None


def _named_as_lines(line: TableCard, header: TableCard, key: str) -> bool:
    """The names say header and line: the line's name starts with the header's singular
    (order_lines for orders), or both names share their first word and the line's declared key
    is the header key plus a number (changelog_change (entry_id, item_no) for changelog_entry:
    the items of one entry)."""
    stem = _squash(singular(header.name))
    squashed = _squash(line.name)
    if squashed == _squash(header.name):
        return False
    if len(stem) >= 3 and squashed.startswith(stem):
        return True
    first_line, first_header = _first_word(line.name), _first_word(header.name)
    if len(first_line) < 3 or first_line != first_header:
        return False
    return any(
        k.source == "declared" and len(k.columns) > 1 and k.columns[0] == key for k in line.keys
    )


def _first_word(name: str) -> str:
    return re.split(r"[_\s]|(?<=[a-z])(?=[A-Z])", name)[0].lower()


def _link(
    con: duckdb.DuckDBPyConnection,
    fk: ForeignKeyCard,
    dim: TableCard,
    time_column: str,
    via: Literal["dimension", "header"],
) -> TimeLinkCard | None:
    """The link from `fk`'s table through `fk` to `dim.time_column`, with the range of dates
    the table's rows reach; None when no row reaches one."""
    date = dim.column(time_column)
    fact, key, column = qi(fk.table), qi(fk.ref_columns[0]), qi(fk.columns[0])
    row = con.execute(
        f"SELECT CAST(min(d.{qi(date.name)}) AS VARCHAR), CAST(max(d.{qi(date.name)}) AS "
        f"VARCHAR), count(d.{qi(date.name)}), count(f.{column}), count(*) FROM {fact} AS f "
        f"LEFT JOIN {qi(dim.name)} AS d ON f.{column} = d.{key}"
    ).fetchone()
    assert row is not None
    lo, hi, resolved, non_null, rows = row
    if lo is None or not non_null:
        return None
    anchor = (
        _anchor(con, dim, fk.ref_columns[0], date.name)
        if via == "dimension" and date.family == "date"
        else None
    )
    return TimeLinkCard(
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
        via=via,
    )


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
