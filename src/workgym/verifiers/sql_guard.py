"""Read-only proof #1: the parsed statement has no write, no side door, and is exactly one SELECT.

This runs before any engine sees the text, so a refusal costs nothing and tells the agent what to
change in one line. It is deliberately strict (a SELECT with a DELETE in a CTE is a write; a file
path used as a table name is a file read), and it is not trusted alone: `sql_exec` opens every
engine session read-only as well, so a statement that fools the parser still cannot write.
"""

from __future__ import annotations

import re
from typing import Literal, cast

from pydantic import BaseModel

from workgym.core.missing_extra import missing

try:
    import sqlglot
    from sqlglot import exp
    from sqlglot.errors import ParseError, SqlglotError, TokenError
except ImportError as exc:
    raise missing(exc, "warehouse", "SQL verification") from exc

from workgym.verifiers.sql_value_size import growth_problem, size_problem

Engine = Literal["duckdb", "sqlite", "postgres"]
DIALECTS: dict[str, str] = {"duckdb": "duckdb", "sqlite": "sqlite", "postgres": "postgres"}
MAX_SQL_CHARS = 100_000
ONLY = "only one read-only SELECT is allowed"

# Statement kinds that change state, configuration or the session, found anywhere in the tree.
_WRITE_NODES: dict[str, str] = {
    "Insert": "INSERT",
    "Update": "UPDATE",
    "Delete": "DELETE",
    "Merge": "MERGE",
    "Create": "CREATE",
    "Drop": "DROP",
    "Alter": "ALTER",
    "AlterTable": "ALTER",
    "TruncateTable": "TRUNCATE",
    "Copy": "COPY",
    "Attach": "ATTACH",
    "Detach": "DETACH",
    "Pragma": "PRAGMA",
    "Set": "SET",
    "Install": "INSTALL",
    "Load": "LOAD",
    "Export": "EXPORT",
    "Import": "IMPORT",
    "Use": "USE",
    "Transaction": "BEGIN",
    "Commit": "COMMIT",
    "Rollback": "ROLLBACK",
    "Into": "SELECT INTO",
    "Lock": "a locking clause (FOR UPDATE/SHARE)",
    "Grant": "GRANT",
    "Revoke": "REVOKE",
    "Cache": "CACHE",
    "Uncache": "UNCACHE",
    "LoadData": "LOAD DATA",
    "Analyze": "ANALYZE",
    "Refresh": "REFRESH",
    "Kill": "KILL",
    "Declare": "DECLARE",
}
_WRITE_TYPES: tuple[tuple[type[exp.Expression], str], ...] = tuple(
    (getattr(exp, name), label) for name, label in _WRITE_NODES.items() if hasattr(exp, name)
)

# Functions that read files or other databases, run SQL from a string, change settings or
# sequences, or reach the server's administration. Names are compared in lower case.
_FORBIDDEN_FUNCTIONS = frozenset(
    {
        "glob",
        "sniff_csv",
        "query",
        "query_table",
        "sqlite_scan",
        "sqlite_attach",
        "sqlite_query",
        "scan_arrow_ipc",
        "st_read",
        "duckdb_secrets",
        "which_secret",
        "checkpoint",
        "force_checkpoint",
        "getenv",
        "load_extension",
        "readfile",
        "writefile",
        "edit",
        "fts3_tokenizer",
        "set_config",
        "setval",
        "nextval",
        "currval",
        "lastval",
        "pg_sleep_for",
        "pg_stat_file",
        "txid_current",
        # SQL given as a (serialized) string runs unseen by this guard.
        "json_execute_serialized_sql",
        # Catalogs that show file paths of the environment, settings or temp files.
        "duckdb_databases",
        "duckdb_settings",
        "duckdb_extensions",
        "duckdb_temporary_files",
        "duckdb_logs",
        # Other sessions' SQL text (concurrent gold queries) on PostgreSQL.
        "pg_stat_get_activity",
        "pg_stat_get_backend_activity",
    }
)
# Catalog views named as tables that show paths or other sessions' SQL (see _FORBIDDEN_FUNCTIONS).
_FORBIDDEN_TABLES = frozenset(
    {
        "duckdb_databases",
        "duckdb_settings",
        "duckdb_extensions",
        "duckdb_temporary_files",
        "duckdb_logs",
        "pg_stat_activity",
        "pg_stat_statements",
        "pg_settings",
        "pg_file_settings",
        "pg_hba_file_rules",
    }
)
_FORBIDDEN_PREFIXES = (
    "read_",
    "parquet_",
    "postgres_",
    "mysql_",
    "iceberg_",
    "delta_",
    "lo_",
    "dblink",
    "pg_read",
    "pg_ls_",
    "pg_file",
    "pg_terminate",
    "pg_cancel",
    "pg_reload",
    "pg_rotate",
    "pg_promote",
    "pg_create_",
    "pg_drop_",
    "pg_replication",
    "pg_logical",
    "pg_advisory",
    "pg_try_advisory",
    "pg_switch",
    "pg_backup",
    "pg_import",
    "pragma_",
    "pg_stat_statements",
    # SQL given as a string runs unseen by this guard (query_to_xml('SELECT ...')).
    "query_to_xml",
    "cursor_to_xml",
    "table_to_xml",
    "schema_to_xml",
    "database_to_xml",
    "ts_stat",
    "ts_rewrite",
    "crosstab",
    "connectby",
    "xpath_table",
)
# Settings an agent may read with current_setting(): none shows a path (temp_directory does).
_SETTINGS = frozenset(
    {"timezone", "datestyle", "intervalstyle", "search_path", "server_version", "threads",
     "memory_limit", "lock_configuration", "enable_external_access", "default_null_order",
     "default_order", "max_temp_directory_size", "statement_timeout", "work_mem"}
)  # fmt: skip
_PATHLIKE = re.compile(r"[/\\:.~]")


class GuardResult(BaseModel):
    """Whether one SQL text may run; `reason` is a one-line instruction the agent can act on."""

    ok: bool
    kind: Literal["ok", "parse_error", "forbidden"] = "ok"
    reason: str = ""


def _refuse(reason: str) -> GuardResult:
    return GuardResult(ok=False, kind="forbidden", reason=reason)


def _parse_error(err: Exception, engine: str) -> GuardResult:
    detail = str(err)
    errors = getattr(err, "errors", None)
    if errors:
        first = errors[0]
        detail = f"{first.get('description', 'invalid syntax')} at line {first.get('line')}"
        detail += f", column {first.get('col')}"
    detail = " ".join(re.sub(r"\x1b\[[0-9;]*m", "", detail).split())[:200]
    return GuardResult(
        ok=False,
        kind="parse_error",
        reason=f"could not parse the SQL as {engine}: {detail}; send one valid SELECT statement",
    )


def function_name(node: exp.Expression) -> str:
    """The SQL name of a function node, lower case (`read_csv`, `pg_read_file`)."""
    if isinstance(node, exp.Anonymous):
        return str(node.name).lower()
    if isinstance(node, exp.Func):
        return str(node.sql_name()).lower()
    return ""


def _where(node: exp.Expression) -> str:
    """Say where a node sits, so that the refusal points at the hidden part."""
    parent = node.parent
    while parent is not None:
        if isinstance(parent, exp.CTE):
            return " inside a CTE"
        if isinstance(parent, exp.Subquery):
            return " inside a subquery"
        parent = parent.parent
    return ""


def _forbidden_function(name: str) -> bool:
    return name in _FORBIDDEN_FUNCTIONS or name.startswith(_FORBIDDEN_PREFIXES)


def _harmless_setting(node: exp.Expression) -> bool:
    args = list(node.expressions) if isinstance(node, exp.Anonymous) else [node.this]
    first = args[0] if args else None
    return (
        len(args) == 1
        and isinstance(first, exp.Literal)
        and first.is_string
        and str(first.this).lower() in _SETTINGS
    )


def _check_node(node: exp.Expression) -> str | None:
    for cls, label in _WRITE_TYPES:
        if isinstance(node, cls):
            return f"{ONLY}: found {label}{_where(node)}"
    if isinstance(node, exp.Command):
        word = str(node.this or "command").split()[0].upper()
        return f"{ONLY}: found {word}{_where(node)}"
    if isinstance(node, exp.Func):
        name = function_name(node)
        if _forbidden_function(name):
            return (
                f"{ONLY}: {name}() is not allowed (it reads files, paths, settings or other "
                "sessions, or changes state); query the tables directly"
            )
        if name == "current_setting" and not _harmless_setting(node):
            return (
                f"{ONLY}: current_setting() may read only {', '.join(sorted(_SETTINGS))} "
                "(other settings show paths); name one of them as a literal"
            )
        too_big = size_problem(node)
        if too_big:
            return too_big
    if isinstance(node, exp.CTE):
        grows = growth_problem(node)
        if grows:
            return grows
    if isinstance(node, exp.Table):
        table = str(node.name).lower()
        if table in _FORBIDDEN_TABLES or table.startswith("pragma_"):
            return (
                f"{ONLY}: {node.name} is not allowed (it shows paths, settings or other "
                "sessions' queries); query the warehouse's tables"
            )
        for part in node.parts:
            if isinstance(part, exp.Identifier | exp.Literal) and _PATHLIKE.search(str(part.name)):
                return (
                    f"{ONLY}: '{part.name}' looks like a file path used as a table; "
                    "query the tables by name"
                )
    return None


def _root_label(stmt: exp.Expression) -> str:
    if isinstance(stmt, exp.Describe | exp.Show | exp.Summarize | exp.Pivot | exp.Values):
        return type(stmt).__name__.upper()
    words = stmt.sql().split()
    return repr(" ".join(words)[:40]) if words else "an empty statement"


def _is_query(stmt: exp.Expression) -> bool:
    if isinstance(stmt, exp.Subquery):
        return _is_query(stmt.this)
    return isinstance(stmt, exp.Select | exp.SetOperation)


def check_read_only(sql: str, engine: Engine = "duckdb") -> GuardResult:
    """Refuse anything that is not exactly one read-only SELECT in `engine`'s dialect.

    SQL nested deeper than the parser's recursion can follow is the agent's parse error (a
    clear message, and a wrong verdict), never an exception that would make it a verifier error.
    """
    if engine not in DIALECTS:
        raise ValueError(f"unknown engine {engine!r}: use one of {sorted(DIALECTS)}")
    if len(sql) > MAX_SQL_CHARS:
        return _refuse(f"the query is longer than {MAX_SQL_CHARS} characters; shorten it")
    try:
        return _check(sql, engine)
    except RecursionError:
        return GuardResult(
            ok=False,
            kind="parse_error",
            reason="the query nests too deeply to parse (parentheses or subqueries hundreds of "
            "levels deep); flatten it into one plain SELECT",
        )


def _check(sql: str, engine: Engine) -> GuardResult:
    try:
        parsed = sqlglot.parse(sql, read=DIALECTS[engine])
    except (ParseError, TokenError) as err:
        return _parse_error(err, engine)
    except (SqlglotError, ValueError) as err:  # the agent's text, whatever the parser says
        return _parse_error(err, engine)
    statements = [s for s in parsed if s is not None]
    if not statements:
        return GuardResult(ok=False, kind="parse_error", reason="empty query: send one SELECT")
    if len(statements) > 1:
        return _refuse(f"{ONLY}: found {len(statements)} statements; send them one at a time")
    stmt = cast(exp.Expression, statements[0])
    for node in stmt.walk():
        reason = _check_node(cast(exp.Expression, node))
        if reason:
            return _refuse(reason)
    if not _is_query(stmt):
        return _refuse(f"{ONLY}: found {_root_label(stmt)}; write a SELECT (or WITH ... SELECT)")
    return GuardResult(ok=True)
