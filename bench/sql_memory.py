"""Peak memory and time of one huge-result query through run_sql, on all three engines.

The attack of issue 18: `SELECT repeat('x', 5000000) FROM range(200)` (200 rows of 5 MB). Each
engine runs it in a fresh worker process through the warehouse's run_sql path (max_rows 200,
the tool's byte cap), and the worker's peak RSS and wall time are printed with the message the
agent reads. Targets: < 300 MB and < 6 s per engine.

    python bench/sql_memory.py                # DuckDB and SQLite
    WORKGYM_TEST_PG=postgresql://... python bench/sql_memory.py   # and PostgreSQL

With WORKGYM_TEST_PG (a role that may create roles and schemas, as `.ci/run` makes), the query
runs as a fresh SELECT-only reader (workgym.verifiers.pg_reader), which is dropped afterwards.
The server side is measured per backend: the private memory (RssAnon in /proc/<pid>/status) of
the backends of that reader role, sampled every 10 ms while the query runs (needs the server on
this machine and /proc readable). To compare with the code before a change, run this script
with PYTHONPATH pointing at that checkout's src.
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
from urllib.parse import urlsplit

import duckdb

QUERIES = {
    "duckdb": "SELECT repeat('x', 5000000) FROM range(200)",
    "sqlite": "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < 200)"
    " SELECT replace(hex(zeroblob(2500000)), '0', 'x') FROM r",
    "postgres": "SELECT repeat('x', 5000000) FROM generate_series(1, 200)",
}
TARGET_MB, TARGET_S = 300, 6.0
# Issue 39: queries that build one huge value or aggregate. Each must be refused or end within
# run_sql's 5 s limit + 1 s, adding < 500 MB to the worker (and, on PostgreSQL, to the server).
BOUNDS = {
    "duckdb": [
        "SELECT string_agg(repeat('x',1000), ',') AS s FROM range(3000000)",
        "SELECT length(repeat('x', 2000000000))",
        "SELECT sum(a.i) OVER (ORDER BY b.i, a.i) AS w FROM range(20000) a(i), range(20000) b(i)",
    ],
    "sqlite": ["SELECT hex(randomblob(450000000))"],
    "postgres": [
        "SELECT string_agg(repeat('x', 1000), ',') FROM generate_series(1, 900000)",
        # rewrites of it: array_agg, ARRAY(subquery), a recursive CTE that doubles or appends
        "SELECT array_to_string(array_agg(repeat('x', 1000)), ',') FROM generate_series(1, 900000)",
        "SELECT array_to_string(ARRAY(SELECT repeat('x', 1000) FROM generate_series(1, 900000)),"
        " ',')",
        "WITH RECURSIVE r(i, s) AS (SELECT 1, 'x'::text UNION ALL SELECT i + 1, s || s FROM r"
        " WHERE i < 30) SELECT length(s) FROM r ORDER BY i DESC LIMIT 1",
        "WITH RECURSIVE r(i, s) AS (SELECT 1, ''::text UNION ALL SELECT i + 1, s || repeat('x',"
        " 1000) FROM r WHERE i < 900000) SELECT length(s) FROM r ORDER BY i DESC LIMIT 1",
    ],
}
BOUND_MB, BOUND_S = 500, 6.0


def worker(engine: str, database: str, sql: str | None = None) -> None:
    """One run_sql call in this process; prints a JSON line with peak RSS, time and the note."""
    from workgym.core.tools import ToolError
    from workgym.envs.warehouse.runtime.tools import MAX_ROWS_LIMIT, WarehouseState, query

    state = WarehouseState(database=database, card=None, engine=engine)  # type: ignore[arg-type]
    base_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    start = time.perf_counter()
    try:
        out = query(state, sql or QUERIES[engine], max_rows=MAX_ROWS_LIMIT)
        note, rows = out.get("note"), out["row_count"]
    except ToolError as err:
        note, rows = f"error: {err}", 0
    elapsed = time.perf_counter() - start
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"engine": engine, "peak_mb": peak_mb, "s": elapsed, "rows": rows,
                      "note": note, "added_mb": peak_mb - base_mb}))  # fmt: skip


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
    began = time.perf_counter()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
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
            note = str(r["note"])
            truncated = note.startswith("result truncated") or "size cap" in note
            ok = r["peak_mb"] < TARGET_MB and r["s"] < TARGET_S and truncated
            failed |= not ok
            print(
                f"{engine:8s} peak RSS {r['peak_mb']:6.0f} MB  time {r['s']:5.2f} s  "
                f"rows shown {r['rows']}  {'ok' if ok else 'MISSED TARGET'}\n"
                f"         agent reads: {r['note']}"
            )
        print(f"targets: < {TARGET_MB} MB peak RSS of the worker, < {TARGET_S:g} s, a note")
        failed |= bounds(targets)
        print(
            f"wall time {time.perf_counter() - began:.1f} s, load average at the end"
            f" {os.getloadavg()[0]:.1f}"
        )
        sys.exit(1 if failed else 0)


def backend_mb(role: str) -> float:
    """The largest private (anonymous) memory of a PostgreSQL backend serving `role` (0 if
    none): what one agent query makes the server build, apart from shared buffers. The one
    probe: tests/verifiers/test_sql_bounds.py loads it from here."""
    best = 0
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            if f" {role} ".encode() not in (status.parent / "cmdline").read_bytes():
                continue
            text = status.read_text()
        except OSError:
            continue
        for line in text.splitlines():
            if line.startswith("RssAnon:"):
                best = max(best, int(line.split()[1]))
    return best / 1024


def server_visible() -> bool:
    """Whether this machine's /proc shows the PostgreSQL server (else a backend peak of 0 would
    mean nothing: the server runs elsewhere)."""
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if b"postgres" in cmdline.read_bytes().split(b"\0", 1)[0]:
                return True
        except OSError:
            continue
    return False


def bounds(targets: dict[str, str]) -> bool:
    """Issue 39's payloads, each in a fresh worker; True when one missed its target."""
    failed = False
    print("issue 39: one huge value or aggregate per query")
    if "postgres" in targets and not server_visible():
        print("the PostgreSQL server is not visible in /proc here: its backends go unmeasured")
        failed = True
    for engine, database in targets.items():
        for sql in BOUNDS[engine]:
            cmd = [sys.executable, __file__, "--worker", engine, database, sql]
            role = (urlsplit(database).username or "") if engine == "postgres" else ""
            server = [0.0]
            with subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True) as proc:
                while proc.poll() is None:
                    if role:
                        server.append(backend_mb(role))
                    time.sleep(0.01)
                stdout = proc.stdout.read() if proc.stdout else ""
            r = json.loads(stdout.strip().splitlines()[-1])
            extra = max(server)
            refused = r["rows"] == 0
            ok = refused and r["added_mb"] < BOUND_MB and r["s"] < BOUND_S
            ok = ok and (engine != "postgres" or extra < BOUND_MB)
            failed |= not ok
            srv = f"  server backend {extra:5.0f} MB" if engine == "postgres" else ""
            print(
                f"{engine:8s} +{r['added_mb']:5.0f} MB  {r['s']:5.2f} s{srv}  "
                f"{'ok' if ok else 'MISSED TARGET'}  {sql[:60]}\n         agent reads: "
                f"{str(r['note'])[:150]}"
            )
    print(
        f"targets: refused or stopped, < {BOUND_MB} MB added, < {BOUND_S:g} s (PostgreSQL: the"
        " backend's private memory, RssAnon, sampled every 10 ms)"
    )
    return failed


if __name__ == "__main__":
    if len(sys.argv) in (4, 5) and sys.argv[1] == "--worker":
        worker(sys.argv[2], sys.argv[3], sys.argv[4] if len(sys.argv) == 5 else None)
    else:
        main()
