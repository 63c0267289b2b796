"""The agent's tools in a warehouse episode: list_tables, describe_table, run_sql, submit_answer.

All of them read through the episode's `WarehouseState`, built fresh per episode: the schema card
(for descriptions) and one database (the snapshot, or an investigation's planted copy, whose own
row counts the listings show). run_sql
goes through `workgym.verifiers.sql_exec`, so every query is one read-only statement, checked by
the parser guard and run on a fresh locked-down connection (DuckDB read_only with external access
off; SQLite mode=ro with an authorizer; PostgreSQL read-only transaction), with a time limit,
a row cap, an output cap and a per-episode query budget. Nothing here can see a task's answer,
the manifests or any other file: the tools hold a database path and a card, nothing else.

`describe_table` in hard mode shows only what the source declared (no inferred keys, foreign
keys or roles), so an agent has to find join paths in the data itself.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workgym.core.errors import ToolError
from workgym.core.tools import Ctx, tool
from workgym.envs.warehouse.runtime.answers import SubmittedAnswer, plain
from workgym.envs.warehouse.schema.card import SchemaCard, TableCard
from workgym.envs.warehouse.source.duck import qi
from workgym.verifiers.sql_exec import SqlResult, execute_sql
from workgym.verifiers.sql_guard import Engine

RUN_SQL_TIMEOUT_S = 5.0
MAX_ROWS_LIMIT = 200
OUTPUT_CHARS = 4000
# What run_sql fetches at most: the agent reads OUTPUT_CHARS of it, so more is only memory.
RUN_SQL_MAX_BYTES = 2**20
QUERY_BUDGET = 30
SAMPLE_ROWS = 5
DESCRIBE_CHARS = 8000  # a wide table's description is still one readable JSON object


@dataclass
class WarehouseState:
    """One episode's view of the warehouse: where queries go, what describe_table reads."""

    database: Path | str
    card: SchemaCard
    engine: Engine = "duckdb"
    hard: bool = False
    query_budget: int = QUERY_BUDGET
    timeout_s: float = RUN_SQL_TIMEOUT_S
    queries: int = 0
    refused: int = 0
    copy: bool = False  # the database is an investigation's copy, not the carded snapshot

    def run(self, sql: str, max_rows: int) -> SqlResult:
        return execute_sql(
            sql,
            self.database,
            engine=self.engine,
            timeout_s=self.timeout_s,
            max_rows=max_rows,
            max_bytes=RUN_SQL_MAX_BYTES,
        )

    def rows(self, table: TableCard) -> int:
        """The table's row count in this episode's database. The card counts the snapshot; a
        copy differs (every copy drops its own sliver of rows, a plant may add or drop more),
        so a copy's counts are read from the file, once per file, and not charged to the
        agent's query budget."""
        if not self.copy:
            return table.rows
        return _copy_counts(self).get(table.name, table.rows)


_COUNTS: dict[tuple[str, int, int], dict[str, int]] = {}


def _copy_counts(state: WarehouseState) -> dict[str, int]:
    path = Path(state.database)
    stat = path.stat()
    key = (str(path), stat.st_mtime_ns, stat.st_size)
    if key not in _COUNTS:
        names = [t.name for t in state.card.tables]
        sql = "SELECT " + ", ".join(f"(SELECT count(*) FROM {qi(n)})" for n in names)
        result = state.run(sql, 1)
        if not result.ok or not result.rows:
            raise ToolError(f"cannot count the rows of this episode's tables: {result.error}")
        _COUNTS[key] = {n: int(v) for n, v in zip(names, result.rows[0], strict=True)}
    return _COUNTS[key]


def _state(ctx: Ctx) -> WarehouseState:
    state = ctx.state
    if not isinstance(state, WarehouseState):
        raise ToolError("this tool needs a warehouse episode; load the environment with wg.load")
    return state


def fit_rows(
    columns: list[str], rows: list[list[Any]], budget: int = OUTPUT_CHARS
) -> tuple[list[list[Any]], bool]:
    """As many leading rows as fit in `budget` characters of JSON; True when rows were cut."""
    size = len(json.dumps(columns, default=str)) + 120
    kept: list[list[Any]] = []
    for row in rows:
        size += len(json.dumps(row, default=str)) + 2
        if size > budget:
            return kept, True
        kept.append(row)
    return kept, False


def query(state: WarehouseState, sql: str, max_rows: int = 50) -> dict[str, Any]:
    """run_sql's behaviour, usable on any engine (the tool calls it on the episode's state)."""
    if not 1 <= max_rows <= MAX_ROWS_LIMIT:
        raise ToolError(f"max_rows must be between 1 and {MAX_ROWS_LIMIT}; got {max_rows}")
    if state.queries >= state.query_budget:
        raise ToolError(
            f"query budget spent ({state.query_budget} queries this episode); submit your answer"
        )
    state.queries += 1
    result = state.run(sql, max_rows)
    if not result.ok:
        if result.status == "forbidden":
            state.refused += 1
        raise ToolError(f"{result.status}: {result.error}")
    rows = [[plain(v) for v in r] for r in result.rows]
    kept, cut = fit_rows(result.columns, rows)
    out: dict[str, Any] = {
        "columns": result.columns,
        "rows": kept,
        "row_count": len(kept),
        "truncated": result.truncated or cut,
        "elapsed_s": round(result.elapsed_s, 4),
        "queries_left": state.query_budget - state.queries,
    }
    if result.note or cut:
        shown = f"{len(kept)} rows fit the {OUTPUT_CHARS}-character output"
        out["note"] = f"{result.note}; {shown}" if result.note else f"truncated: {shown}"
    return out


@tool
def list_tables(ctx: Ctx) -> list[dict[str, Any]]:
    """List the warehouse's tables with their row counts, column counts and descriptions."""
    state = _state(ctx)
    return [
        {"table": t.name, "rows": state.rows(t), "columns": len(t.columns), "comment": t.comment}
        for t in state.card.tables
    ]


def describe(state: WarehouseState, table: TableCard) -> dict[str, Any]:
    """describe_table's payload: declared facts always, inferred ones unless in hard mode."""
    hard = state.hard
    keys = [
        {
            "columns": k.columns,
            "source": "declared" if k.source == "declared" else "inferred",
            "confidence": 1.0,
        }
        for k in table.keys
        if not hard or k.source == "declared"
    ]
    if not hard:
        keys += [
            {
                "columns": k.columns,
                "source": "inferred",
                "confidence": round(1 - k.duplicate_rows / max(table.rows, 1), 4),
                "note": f"almost unique: {k.duplicate_rows} duplicate rows",
            }
            for k in table.near_keys
        ]
    fks = [
        {
            "columns": f.columns,
            "references": f"{f.ref_table}({', '.join(f.ref_columns)})",
            "source": f.source,
            "confidence": round(f.coverage, 4),
        }
        for f in state.card.foreign_keys
        if f.table == table.name and (not hard or f.source == "declared")
    ]
    columns = []
    for c in table.columns:
        entry: dict[str, Any] = {
            "name": c.name,
            "type": c.type,
            "null_rate": round(c.null_rate, 4),
            "distinct": c.distinct_count,
        }
        if c.comment:
            entry["comment"] = c.comment
        if not hard:
            entry["role"] = c.role
        columns.append(entry)
    out: dict[str, Any] = {"table": table.name, "rows": state.rows(table), "comment": table.comment}
    if not hard:
        out["role"] = table.role
    out |= {"columns": columns, "keys": keys, "foreign_keys": fks}
    sample = state.run(f"SELECT * FROM {qi(table.name)} LIMIT {SAMPLE_ROWS}", SAMPLE_ROWS)
    if sample.ok:
        out["sample_rows"] = [[plain(v) for v in r] for r in sample.rows]
    return out


@tool(blocking=True, max_output_chars=DESCRIBE_CHARS)
def describe_table(ctx: Ctx, name: str) -> dict[str, Any]:
    """Describe one table: columns (type, null rate, distinct count, comment), keys and foreign
    keys with their confidence, and 5 sample rows.

    Args:
        name: The table name, as list_tables shows it.
    """
    state = _state(ctx)
    for t in state.card.tables:
        if t.name == name:
            return describe(state, t)
    names = ", ".join(t.name for t in state.card.tables)
    raise ToolError(f"no table {name!r}; tables: {names}")


@tool(blocking=True, timeout_s=RUN_SQL_TIMEOUT_S + 10, max_output_chars=OUTPUT_CHARS + 500)
def run_sql(ctx: Ctx, sql: str, max_rows: int = 50) -> dict[str, Any]:
    """Run one read-only SELECT on the warehouse and return columns, rows, a truncated flag and
    the elapsed time (5 s limit, output cut near 4000 characters, a query budget per task).

    Args:
        sql: One SELECT statement (WITH ... SELECT is fine); writes and file access are refused.
        max_rows: Most rows to return (1-200).
    """
    return query(_state(ctx), sql, max_rows)


@tool(final=True)
def submit_answer(answer: SubmittedAnswer) -> str:
    """Submit the final answer; this ends the task. Use the kind the question asks for:
    integer, number (rounded as stated), keys (a set), top_k (an ordered list), column
    (table.column), sql (a query whose result is compared), conclusion (investigations), or
    abstain (with a reason: missing_data or out_of_range) when the warehouse cannot answer.

    Args:
        answer: The answer object; its "kind" field says which form it takes.
    """
    return "answer recorded"
