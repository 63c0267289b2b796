"""Columns whose values are keys of their own table, though no constraint says so.

TPC-DS's `date_dim` keys each day by a Julian day number (`d_date_sk`, from 2,415,022) and holds
four more columns of such numbers: `d_same_day_ly` (the same day last year), `d_same_day_lq`,
`d_first_dom` and `d_last_dom` (the month's first and last day). They are references to other
days, not amounts, but nothing declares them and their names carry no key word, so they were
typed as additive measures, and decision 0191's regeneration drafted eighteen questions like
"the total same day ly of dates where ...", a sum of day numbers (issue 40's round 13 check).

The data says what they are: at least `COVERAGE` of a column's distinct values are values of its
table's own single integer key. That is evidence only where the key does not count from a small
number: a key from 1 holds every small integer, so a year or a quantity would fall inside it by
chance. So the key's smallest value must be at least `MIN_ORIGIN`, and the column must have
`MIN_DISTINCT` distinct values. One query per candidate column; most tables have none.
"""

from __future__ import annotations

import duckdb

from workgym.envs.warehouse.schema.card import TableCard
from workgym.envs.warehouse.source.duck import qi

COVERAGE = 0.95
MIN_ORIGIN = 1000
MIN_DISTINCT = 20


def own_key_columns(con: duckdb.DuckDBPyConnection, table: TableCard) -> list[str]:
    """Columns of `table` (besides its key) whose values are its own key's values."""
    declared = {k.columns[0] for k in table.keys if k.source == "declared" and len(k.columns) == 1}
    keys = [k for k in declared or table.single_keys() if table.column(k).family == "integer"]
    if len(keys) != 1:
        return []
    key = table.column(keys[0])
    if not isinstance(key.min, int) or not isinstance(key.max, int) or key.min < MIN_ORIGIN:
        return []
    found = []
    for col in table.columns:
        if col.name == key.name or col.family != "integer" or col.distinct_count < MIN_DISTINCT:
            continue
        low, high = col.min, col.max
        if not isinstance(low, int) or not isinstance(high, int):
            continue
        if high < key.min or low > key.max:
            continue  # no overlap with the key's range: no query needed
        c, k, t = qi(col.name), qi(key.name), qi(table.name)
        row = con.execute(
            f"SELECT count(*), count(*) FILTER (WHERE v IN (SELECT {k} FROM {t})) "
            f"FROM (SELECT DISTINCT {c} AS v FROM {t} WHERE {c} IS NOT NULL)"
        ).fetchone()
        if row is not None and int(row[0]) and int(row[1]) >= COVERAGE * int(row[0]):
            found.append(col.name)
    return found
