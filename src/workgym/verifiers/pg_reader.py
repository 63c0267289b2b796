"""The PostgreSQL role agent and verifier SQL runs as: SELECT on the snapshot's tables, nothing
else (the third wall, after the parser guard and the read-only transaction).

`query_to_xml('SELECT pg_terminate_backend(...)', ...)` passed the guard (the inner SQL is a
string) and killed other sessions of the same role. So `execute_sql` checks, once per DSN and
process, that the role it connects as cannot write, create, run SQL from a string or signal
sessions, nor read other sessions' SQL text (`pg_stat_activity` shows the query of every session
of the same role: a concurrent gold query), and refuses to run anything otherwise. Make such a
role with `reader_role_sql` (as a role with CREATEROLE that owns the schema), after a superuser
ran `pg_reader.sql` once in that database (`hardening_sql()`).
"""

from __future__ import annotations

import re
import threading
from pathlib import Path
from typing import Any

# Functions that must not be executable by the reader (pg_reader.sql revokes them from PUBLIC).
UNREACHABLE = (
    "query_to_xml(text, boolean, boolean, text)",
    "query_to_xmlschema(text, boolean, boolean, text)",
    "query_to_xml_and_xmlschema(text, boolean, boolean, text)",
    "cursor_to_xml(refcursor, integer, boolean, boolean, text)",
    "ts_stat(text)",
    "ts_rewrite(tsquery, text)",
    "pg_terminate_backend(integer, bigint)",
    "pg_cancel_backend(integer)",
    "set_config(text, text, boolean)",
    "pg_stat_get_activity(integer)",
    "pg_stat_get_backend_activity(integer)",
)
# Bounds every session of the reader role starts with (a connection may only lower them):
# a statement stops at the timeout, sorts and hashes spill past work_mem, an idle open
# transaction ends. Set by `reader_role_sql`; `sql_exec` also sets its own per query.
ROLE_SETTINGS = {
    "statement_timeout": "30s",
    "work_mem": "32MB",
    "idle_in_transaction_session_timeout": "60s",
}
_IDENT = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")
_checked: dict[str, list[str]] = {}
_lock = threading.Lock()


def hardening_sql() -> str:
    """What a superuser runs once per warehouse database (the contents of pg_reader.sql)."""
    return (Path(__file__).parent / "pg_reader.sql").read_text()


def reader_role_sql(role: str, password: str, schema: str) -> list[str]:
    """Statements that create `role`: it logs in, reads every table of `schema`, and can do
    nothing else (no inheritance, no CREATE, read-only by default, `schema` as its path)."""
    for name in (role, schema):
        if not _IDENT.match(name):
            raise ValueError(f"{name!r} is not a plain lower-case identifier; pick another name")
    if "'" in password:
        raise ValueError("the password may not contain a quote; pick another")
    return [
        f"CREATE ROLE {role} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT NOREPLICATION"
        f" NOBYPASSRLS PASSWORD '{password}'",
        f"GRANT USAGE ON SCHEMA {schema} TO {role}",
        f"GRANT SELECT ON ALL TABLES IN SCHEMA {schema} TO {role}",
        f"ALTER ROLE {role} SET search_path = {schema}",
        f"ALTER ROLE {role} SET default_transaction_read_only = on",
        *(f"ALTER ROLE {role} SET {k} = '{v}'" for k, v in ROLE_SETTINGS.items()),
    ]


_PROBLEMS = """
SELECT r.rolsuper, r.rolcreaterole, r.rolcreatedb, r.rolbypassrls,
       has_database_privilege(current_database(), 'CREATE'),
       (SELECT count(*) FROM pg_namespace n WHERE has_schema_privilege(n.oid, 'CREATE')),
       (SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE c.relkind IN ('r', 'p', 'v', 'm') AND n.nspname NOT IN ('pg_catalog',
               'information_schema') AND (has_table_privilege(c.oid, 'INSERT')
               OR has_table_privilege(c.oid, 'UPDATE') OR has_table_privilege(c.oid, 'DELETE')
               OR has_table_privilege(c.oid, 'TRUNCATE')))
FROM pg_roles r WHERE r.rolname = current_user
"""


def role_problems(con: Any) -> list[str]:
    """What the connected role can do besides reading tables; empty for a proper reader."""
    row = con.execute(_PROBLEMS).fetchone()
    labels = ["is a superuser", "can create roles", "can create databases", "bypasses RLS",
              "can create schemas"]  # fmt: skip
    problems = [label for label, bad in zip(labels, row[:5], strict=True) if bad]
    if row[5]:
        problems.append(f"can create objects in {row[5]} schemas")
    if row[6]:
        problems.append(f"can write to {row[6]} tables")
    activity = con.execute(
        "SELECT has_table_privilege('pg_catalog.pg_stat_activity', 'SELECT')"
    ).fetchone()
    if activity and activity[0]:
        problems.append("can read other sessions' SQL in pg_stat_activity")
    for signature in UNREACHABLE:
        found = con.execute("SELECT to_regprocedure(%s)", [signature]).fetchone()
        if found and found[0] is not None:
            can = con.execute("SELECT has_function_privilege(%s, 'EXECUTE')", [signature])
            if can.fetchone()[0]:
                problems.append(f"can execute {signature.split('(')[0]}()")
    return problems


def checked_problems(dsn: str, con: Any) -> list[str]:
    """`role_problems` for `dsn`, computed once per process."""
    with _lock:
        if dsn not in _checked:
            _checked[dsn] = role_problems(con)
        return _checked[dsn]


def refusal(problems: list[str]) -> str:
    """The one-line error for a role that is not a reader."""
    return (
        f"refusing to run agent SQL as this PostgreSQL role: it {', '.join(problems[:4])}"
        f"{' ...' if len(problems) > 4 else ''}; connect as a SELECT-only role made with "
        "workgym.verifiers.pg_reader.reader_role_sql, after a superuser ran pg_reader.sql"
    )
