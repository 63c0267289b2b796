"""Which DuckDB column types a snapshot keeps, and the family each one belongs to.

Profiling, key discovery and (later) task generation reason about *families* (integer, string,
timestamp, ...) rather than exact types, so one table maps every source type to a family or to
"unsupported". Unsupported columns (nested values, blobs, bit strings) are skipped and reported
rather than silently mangled. Time-zone-aware timestamps become plain TIMESTAMP holding UTC wall
time: every session pins TimeZone=UTC, and the Python client cannot fetch TIMESTAMPTZ without
pytz, which is not a dependency.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

NUMERIC_FAMILIES = frozenset({"integer", "decimal", "float"})
TEMPORAL_FAMILIES = frozenset({"date", "time", "timestamp"})

_INTEGER = {
    "TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT",
    "UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT", "UHUGEINT",
    "INT1", "INT2", "INT4", "INT8", "INT", "SHORT", "LONG", "SIGNED",
}  # fmt: skip
_FLOAT = {"FLOAT", "REAL", "DOUBLE", "FLOAT4", "FLOAT8"}
_STRING = {"VARCHAR", "TEXT", "STRING", "CHAR", "BPCHAR"}
_UNSUPPORTED = {"BLOB", "BYTEA", "BINARY", "VARBINARY", "BIT", "BITSTRING", "VARINT", "BIGNUM"}


@dataclass(frozen=True)
class Mapped:
    """How one source column lands in the snapshot."""

    type: str  # DuckDB type in the snapshot
    family: str
    cast: bool  # True when the snapshot value is CAST(source AS type)


@dataclass(frozen=True)
class Unsupported:
    """Why a column is left out of the snapshot."""

    reason: str


def map_duckdb_type(type_name: str) -> Mapped | Unsupported:
    """Map a DuckDB type string (as `duckdb_columns()` spells it) to its snapshot type."""
    t = type_name.strip().upper()
    base = re.sub(r"\(.*\)$", "", t).strip()
    if t.endswith("]") or base in {"STRUCT", "MAP", "UNION", "LIST", "ARRAY"}:
        return Unsupported(f"nested type {type_name} has no scalar value to profile")
    if base in _UNSUPPORTED:
        return Unsupported(f"type {type_name} holds binary data")
    if base == "BOOLEAN" or base == "BOOL":
        return Mapped("BOOLEAN", "boolean", False)
    if base in _INTEGER:
        return Mapped(t, "integer", False)
    if base in {"DECIMAL", "NUMERIC"}:
        return Mapped(t, "decimal", False)
    if base in _FLOAT:
        return Mapped(t, "float", False)
    if base in _STRING:
        return Mapped("VARCHAR", "string", base != "VARCHAR")
    if base in {"ENUM", "JSON"}:
        return Mapped("VARCHAR", "string", True)
    if base == "UUID":
        return Mapped("UUID", "uuid", False)
    if base == "DATE":
        return Mapped("DATE", "date", False)
    if base in {"TIME", "TIME_NS"}:
        return Mapped("TIME", "time", base != "TIME")
    if base in {"TIME WITH TIME ZONE", "TIMETZ"}:
        return Unsupported(f"type {type_name} has no unambiguous UTC value")
    if base in {"TIMESTAMP", "DATETIME"}:
        return Mapped("TIMESTAMP", "timestamp", False)
    if base in {"TIMESTAMP_S", "TIMESTAMP_MS", "TIMESTAMP_NS", "TIMESTAMP_US"}:
        return Mapped("TIMESTAMP", "timestamp", True)
    if base in {"TIMESTAMP WITH TIME ZONE", "TIMESTAMPTZ"}:
        return Mapped("TIMESTAMP", "timestamp", True)
    if base == "INTERVAL":
        return Mapped("INTERVAL", "interval", False)
    return Unsupported(f"type {type_name} is not supported")
