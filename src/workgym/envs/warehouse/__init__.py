"""Warehouse environments: from a real SQL warehouse to tasks an agent can investigate.

This first slice reads a source read-only (`sources`), copies the tables in scope into a DuckDB
snapshot with a fingerprint (`snapshot`), and profiles the snapshot into a schema card
(`profile`, `card`, `relations`). Generators downstream see only the card, never the source.
"""

from workgym.core.missing_extra import require

# Every stage reads or writes DuckDB and parses SQL: one line naming the extra, before any of
# them imports either (a lookup, not an import).
require("warehouse", "the warehouse", "duckdb", "sqlglot")
