"""Stream rows fetched by a Python DB-API cursor into a typed DuckDB table.

SQLite and PostgreSQL rows arrive as Python values. Each batch is handed to DuckDB as columns of
text (numpy object arrays, no pandas) and cast to the target types in SQL. Going through text
keeps one exact conversion path for every driver: ints and decimals print exactly, floats print
with `repr` (round-trip exact), aware datetimes are converted to UTC first.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from decimal import Decimal

import duckdb
import numpy as np

from workgym.envs.warehouse.source.duck import qi

_BATCH_VIEW = "_workgym_rows_batch"


def as_text(value: object) -> str | None:
    """The text DuckDB casts back to the same value; None stays NULL."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, int | Decimal):
        return str(value)
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(dt.UTC).replace(tzinfo=None)
        return value.isoformat(sep=" ")
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return f"{value.days} days {value.seconds}.{value.microseconds:06d} seconds"
    return str(value)


def load_rows(
    con: duckdb.DuckDBPyConnection,
    target: str,
    columns: Sequence[tuple[str, str]],
    batches: Iterable[Sequence[Sequence[object]]],
) -> int:
    """Create `target` with (name, DuckDB type) `columns` and insert every batch; return rows."""
    defs = ", ".join(f"{qi(n)} {t}" for n, t in columns)
    con.execute(f"CREATE TABLE {target} ({defs})")
    total = 0
    for batch in batches:
        if not batch:
            continue
        # DuckDB's scan of an object array that holds only None fails (it calls a pandas method,
        # `first_valid_index`, on the numpy array): such a column is cast from NULL instead.
        data: dict[str, np.ndarray] = {"_row": np.arange(len(batch))}
        casts = []
        for i, col in enumerate(zip(*batch, strict=True)):
            texts = [as_text(v) for v in col]
            if all(t is None for t in texts):
                casts.append(f"CAST(NULL AS {columns[i][1]})")
                continue
            data[f"c{i}"] = np.array(texts, dtype=object)
            casts.append(f"CAST(c{i} AS {columns[i][1]})")
        con.register(_BATCH_VIEW, data)
        try:
            con.execute(
                f"INSERT INTO {target} SELECT {', '.join(casts)} FROM {_BATCH_VIEW} ORDER BY _row"
            )
        finally:
            con.unregister(_BATCH_VIEW)
        total += len(batch)
    return total
