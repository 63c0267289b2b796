"""Peak memory and time of one huge-result query through run_sql, on all three engines.

The attack of issue 18: `SELECT repeat('x', 5000000) FROM range(200)` (200 rows of 5 MB). Each
engine runs it in a fresh worker process through the warehouse's run_sql path (max_rows 200,
the tool's byte cap), and the worker's peak RSS and wall time are printed with the message the
agent reads. Targets: < 300 MB and < 6 s per engine.

    python bench/sql_memory.py                # DuckDB and SQLite
    WORKGYM_TEST_PG=postgresql://... python bench/sql_memory.py   # and PostgreSQL

With WORKGYM_TEST_PG (a role that may create roles and schemas, as `.ci/run` makes), the query
runs as a fresh SELECT-only reader (workgym.verifiers.pg_reader), which is dropped afterwards.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import sqlite3
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import duckdb

QUERIES = {
    "duckdb": "SELECT repeat('x', 5000000) FROM range(200)",
    "sqlite": "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < 200)"
    " SELECT replace(hex(zeroblob(2500000)), '0', 'x') FROM r",
    "postgres": "SELECT repeat('x', 5000000) FROM generate_series(1, 200)",
}
TARGET_MB, TARGET_S = 300, 6.0


def worker(engine: str, database: str) -> None:
    """One run_sql call in this process; prints a JSON line with peak RSS, time and the note."""
    from workgym.core.tools import ToolError
    from workgym.envs.warehouse.runtime.tools import MAX_ROWS_LIMIT, WarehouseState, query

    state = WarehouseState(database=database, card=None, engine=engine)  # type: ignore[arg-type]
    start = time.perf_counter()
    try:
        out = query(state, QUERIES[engine], max_rows=MAX_ROWS_LIMIT)
        note, rows = out.get("note"), out["row_count"]
    except ToolError as err:
        note, rows = f"error: {err}", 0
    elapsed = time.perf_counter() - start
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"engine": engine, "peak_mb": peak_mb, "s": elapsed, "rows": rows,
                      "note": note}))  # fmt: skip


@contextlib.contextmanager
def pg_reader(admin: str) -> Iterator[str]:
    """DSN of a throwaway SELECT-only role on an empty schema of the `admin` database."""
    import psycopg

    from workgym.verifiers.pg_reader import reader_role_sql

    tag = uuid.uuid4().hex[:8]
    schema, role, password = f"wg_bench_{tag}", f"wg_bench_reader_{tag}", uuid.uuid4().hex
    con = psycopg.connect(admin, autocommit=True)
    con.execute(f"CREATE SCHEMA {schema}")
    for statement in reader_role_sql(role, password, schema):
        con.execute(statement)
    info = con.info
    try:
        yield f"postgresql://{role}:{password}@{info.host}:{info.port}/{info.dbname}"
    finally:
        con.execute(f"DROP SCHEMA {schema} CASCADE")
        con.execute(f"DROP ROLE {role}")
        con.close()


def main() -> None:
    admin = os.environ.get("WORKGYM_TEST_PG")
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        duck = Path(tmp) / "w.duckdb"
        duckdb.connect(str(duck)).execute("CREATE TABLE t AS SELECT 1 AS x").close()
        lite = Path(tmp) / "w.sqlite"
        with sqlite3.connect(lite) as con:
            con.execute("CREATE TABLE t (x INTEGER)")
        targets = {"duckdb": str(duck), "sqlite": str(lite)}
        if admin:
            targets["postgres"] = stack.enter_context(pg_reader(admin))
        else:
            print("postgres: skipped (set WORKGYM_TEST_PG to a server to include it)")
        failed = False
        for engine, database in targets.items():
            cmd = [sys.executable, __file__, "--worker", engine, database]
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
            if done.returncode != 0:
                print(f"{engine}: worker failed: {done.stderr.strip()[-500:]}")
                failed = True
                continue
            r = json.loads(done.stdout.strip().splitlines()[-1])
            truncated = str(r["note"]).startswith("result truncated")
            ok = r["peak_mb"] < TARGET_MB and r["s"] < TARGET_S and truncated
            failed |= not ok
            print(
                f"{engine:8s} peak RSS {r['peak_mb']:6.0f} MB  time {r['s']:5.2f} s  "
                f"rows shown {r['rows']}  {'ok' if ok else 'MISSED TARGET'}\n"
                f"         agent reads: {r['note']}"
            )
        print(f"targets: < {TARGET_MB} MB peak RSS of the worker, < {TARGET_S:g} s, a note")
        sys.exit(1 if failed else 0)


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--worker":
        worker(sys.argv[2], sys.argv[3])
    else:
        main()
