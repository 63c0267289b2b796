"""Read-only proof #2: run one statement in an engine session that cannot write.

Every query gets a fresh connection, a time limit, a row cap and a byte cap; errors and timeouts
come back as statuses, never as rows. The caps apply while rows stream in (`sql_budget`): DuckDB
gets the row cap pushed down as a LIMIT (it computes a whole vector of rows at once, so a result
with text columns is first asked for 8 rows and only then for more), SQLite steps row by row, and
PostgreSQL streams rows one at a time (single-row mode) instead of buffering the result.

Each engine is locked down by its own means, so this layer holds even when the parser guard
(`sql_guard`, proof #1) is bypassed:

- DuckDB: file opened `read_only`, `enable_external_access=false` (no files, no ATTACH of other
  files, no extension loading), TimeZone pinned to UTC and then `lock_configuration=true`, and
  DuckDB's own parser must see exactly one SELECT. Timeout: `interrupt()` from a timer thread.
- SQLite: URI `mode=ro`, an authorizer that allows only reads (no PRAGMA, ATTACH, writes or
  transactions), one statement per `execute`. Timeout: a progress handler.
- PostgreSQL (psycopg 3, imported lazily): `default_transaction_read_only=on` and a READ ONLY
  transaction that is always rolled back, the statement prepared server-side (one statement only),
  `statement_timeout`, and the role itself must be a SELECT-only reader (`pg_reader`): a role
  that can write, create, run SQL from a string or signal sessions is refused before any query.
"""

from __future__ import annotations

import contextlib
import importlib
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Literal
from urllib.parse import quote

from pydantic import BaseModel, Field

from workgym.core.missing_extra import missing

try:
    import duckdb
except ImportError as exc:
    raise missing(exc, "warehouse", "SQL verification") from exc

from workgym.verifiers.duckdb_warm import ensure_warm
from workgym.verifiers.pg_plan_bound import plan_problem
from workgym.verifiers.pg_reader import checked_problems, refusal
from workgym.verifiers.sql_budget import DEFAULT_MAX_BYTES, ResultBudget
from workgym.verifiers.sql_guard import Engine, check_read_only

ExecStatus = Literal["ok", "error", "timeout", "forbidden", "parse_error"]

# Every DuckDB session in this process must use the same config: DuckDB shares one instance per
# file and refuses a second connection with a different one.
DUCKDB_CONFIG: dict[str, Any] = {
    "enable_external_access": False,
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "allow_community_extensions": False,
    "allow_unsigned_extensions": False,
    # Bounds the engine enforces itself (issue 39): aggregates, joins, sorts and windows stop at
    # the memory limit instead of growing to 80% of RAM, one thread per instance, no spilling.
    # Scalar calls that build one huge value are not tracked by it: sql_value_size refuses them.
    "memory_limit": "256MB",
    "threads": 1,
    "max_temp_directory_size": "0B",
}
DUCKDB_MEMORY_LIMIT_MB = 256
# SQLite: the longest string or blob one connection may build (sqlite3 limit, per connection),
# and the process-wide heap ceiling (PRAGMA hard_heap_limit only lowers it, never raises it).
SQLITE_MAX_LENGTH = 64 * 2**20
SQLITE_HARD_HEAP_LIMIT = 256 * 2**20
# PostgreSQL: memory for each sort or hash before it spills to disk (the reader may set it).
PG_WORK_MEM = "32MB"
_MARK = "workgym-row-over-size-cap"
_UTC = ("UTC", "Etc/UTC")
# DuckDB result types whose values have a small fixed size: such a result runs once, with the
# row cap as its LIMIT. Any other (text, blobs, lists) is first run with FIRST_LIMIT rows.
_FIXED_WIDTH = (
    "BOOLEAN", "TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT",
    "UINTEGER", "UBIGINT", "UHUGEINT", "FLOAT", "DOUBLE", "DECIMAL", "DATE", "TIME",
    "TIMESTAMP", "INTERVAL", "UUID",
)  # fmt: skip
FIRST_LIMIT = 8


class SqlResult(BaseModel):
    """What one read-only query returned: rows, or a status that says why there are none."""

    status: ExecStatus
    columns: list[str] = Field(default_factory=list)
    rows: list[tuple[Any, ...]] = Field(default_factory=list)
    truncated: bool = False
    elapsed_s: float = 0.0
    error: str | None = None
    note: str | None = None  # why the result was truncated, for whoever reads the rows

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def _one_line(err: BaseException) -> str:
    text = " ".join(str(err).split()) or type(err).__name__
    return text[:300]


def open_duckdb(path: str | Path) -> Any:
    """A read-only, locked-down DuckDB session on `path`, TimeZone pinned to UTC (on an instance
    kept open by `warm_sessions()` when one is active)."""
    if ensure_warm(path, _pinned):  # our pinned instance is loaded: connecting reuses it as is
        return duckdb.connect(str(path), read_only=True, config=DUCKDB_CONFIG)
    return _pinned(path)


def _pinned(path: str | Path) -> Any:
    if not Path(path).is_file():
        raise FileNotFoundError(f"no DuckDB file at {path}: pass the path of an existing database")
    con = duckdb.connect(str(path), read_only=True, config=DUCKDB_CONFIG)
    try:
        con.execute("SET GLOBAL TimeZone = 'UTC'")
        con.execute("SET GLOBAL lock_configuration = true")
    except duckdb.Error:
        # Another session of this process already locked the shared instance: check its pins.
        pins = con.execute(
            "SELECT current_setting('TimeZone'), current_setting('lock_configuration'),"
            " current_setting('enable_external_access')"
        ).fetchone()
        if pins is None or pins[0] not in _UTC or not pins[1] or pins[2]:
            con.close()
            raise RuntimeError(
                f"DuckDB file {path} is already open in this process without the read-only pins;"
                " open it only through workgym.verifiers.sql_exec"
            ) from None
    return con


@contextlib.contextmanager
def hold_open(databases: Iterable[str | Path]) -> Iterator[None]:
    """Keep one idle pinned session per DuckDB file open for the duration of the block.

    Every query still gets its own fresh connection, but DuckDB then reuses the open database
    instance (read-only, configuration locked) instead of loading the file again: about 1 ms per
    connection instead of about 30. Files that are not DuckDB databases are skipped.
    """
    anchors = []
    try:
        for database in databases:
            with contextlib.suppress(duckdb.Error, OSError, RuntimeError):
                anchors.append(open_duckdb(database))
        yield
    finally:
        for con in anchors:
            con.close()


def _drain(fetch: Any, budget: ResultBudget) -> bool:
    """Feed `fetch(n)` batches into `budget`; True when the source ran out of rows."""
    while True:
        batch = fetch(budget.room())
        if not batch:
            return True
        for row in batch:
            if not budget.add(row):
                return False


def _duckdb_rows(
    con: Any, sql: str, max_rows: int, max_bytes: int, deadline: float
) -> tuple[list[str], ResultBudget]:
    """Run the SELECT with the row cap pushed down as a LIMIT; results with wide types start
    with FIRST_LIMIT rows and are re-run for more only while the rows seen stay small."""
    rel = con.sql(sql)
    columns = list(rel.columns)
    cap = max_rows + 1
    fixed = all(str(t).startswith(_FIXED_WIDTH) for t in rel.types)
    limit = cap if fixed else min(cap, FIRST_LIMIT)
    while True:
        run = ResultBudget(max_rows, max_bytes, deadline)
        ended = _drain(rel.limit(limit).fetchmany, run)
        if run.truncated or run.timed_out or limit >= cap or (ended and len(run.rows) < limit):
            return columns, run
        small = run.largest_row * 64 * cap <= max_bytes
        limit = cap if small else min(cap, limit * 8)


def _duckdb(
    sql: str, path: str | Path, timeout_s: float, max_rows: int, max_bytes: int
) -> SqlResult:
    start = time.perf_counter()
    try:
        con = open_duckdb(path)
    except (duckdb.Error, OSError, RuntimeError) as err:
        return SqlResult(status="error", error=_one_line(err))
    timer = threading.Timer(timeout_s, con.interrupt)
    try:
        try:
            statements = con.extract_statements(sql)
        except duckdb.Error as err:
            return SqlResult(status="error", error=_one_line(err), elapsed_s=_since(start))
        if len(statements) != 1:
            return SqlResult(
                status="forbidden",
                error=f"engine refused: one SELECT statement only, got {len(statements)}",
            )
        kind = statements[0].type
        if kind != duckdb.StatementType.SELECT:
            return SqlResult(
                status="forbidden", error=f"engine refused: {kind.name} is not a SELECT"
            )
        timer.start()
        deadline = time.monotonic() + timeout_s
        columns, budget = _duckdb_rows(con, sql, max_rows, max_bytes, deadline)
        return _rows(columns, budget, timeout_s, start)
    except duckdb.InterruptException:
        return _timeout(timeout_s, start)
    except duckdb.Error as err:
        return SqlResult(status=_classify(err), error=_one_line(err), elapsed_s=_since(start))
    finally:
        timer.cancel()
        con.close()


# Authorizer action codes a pure read needs; everything else (PRAGMA, ATTACH, writes,
# transactions, temp objects) is denied by the engine itself.
_SQLITE_READS = {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION, 33}
_SQLITE_DENIED_FUNCTIONS = {"load_extension", "readfile", "writefile", "edit", "fts3_tokenizer"}


def _sqlite_authorizer(action: int, arg1: str | None, arg2: str | None, *_: Any) -> int:
    if action == sqlite3.SQLITE_FUNCTION and (arg2 or "").lower() in _SQLITE_DENIED_FUNCTIONS:
        return sqlite3.SQLITE_DENY
    return sqlite3.SQLITE_OK if action in _SQLITE_READS else sqlite3.SQLITE_DENY


def _sqlite(
    sql: str, path: str | Path, timeout_s: float, max_rows: int, max_bytes: int
) -> SqlResult:
    start = time.perf_counter()
    if not Path(path).is_file():
        return SqlResult(status="error", error=f"no SQLite file at {path}")
    uri = f"file:{quote(str(Path(path).resolve()))}?mode=ro"
    try:
        con = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
    except sqlite3.Error as err:
        return SqlResult(status="error", error=_one_line(err))
    deadline = time.monotonic() + timeout_s
    # The watchdog: a step that never reaches the progress handler is interrupted anyway.
    timer = threading.Timer(timeout_s, con.interrupt)
    try:
        con.execute("PRAGMA query_only = ON")
        con.execute(f"PRAGMA hard_heap_limit = {SQLITE_HARD_HEAP_LIMIT}")
        con.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, SQLITE_MAX_LENGTH)
        con.set_authorizer(_sqlite_authorizer)
        con.set_progress_handler(lambda: int(time.monotonic() > deadline), 1000)
        timer.start()
        cur = con.execute(sql)
        if cur.description is None:
            return SqlResult(status="forbidden", error="engine refused: not a SELECT")
        columns = [d[0] for d in cur.description]
        budget = ResultBudget(max_rows, max_bytes, deadline)
        _drain(cur.fetchmany, budget)
        return _rows(columns, budget, timeout_s, start)
    except (sqlite3.Error, sqlite3.Warning) as err:
        if time.monotonic() > deadline and "interrupt" in str(err).lower():
            return _timeout(timeout_s, start)
        return SqlResult(status=_classify(err), error=_one_line(err), elapsed_s=_since(start))
    finally:
        timer.cancel()
        con.close()


def _psycopg() -> Any:
    try:
        return importlib.import_module("psycopg")
    except ImportError:
        raise RuntimeError("PostgreSQL needs psycopg 3: pip install 'workgym[postgres]'") from None


def _postgres(sql: str, dsn: str, timeout_s: float, max_rows: int, max_bytes: int) -> SqlResult:
    psycopg = _psycopg()
    start = time.perf_counter()
    ms = max(1, int(timeout_s * 1000))
    options = (
        f"-c default_transaction_read_only=on -c statement_timeout={ms} -c lock_timeout={ms}"
        f" -c idle_in_transaction_session_timeout={2 * ms + 1000} -c TimeZone=UTC"
        f" -c work_mem={PG_WORK_MEM} -c max_parallel_workers_per_gather=0 -c jit=off"
    )
    try:
        con = psycopg.connect(
            dsn, autocommit=False, options=options, connect_timeout=max(2, int(timeout_s) + 1)
        )
    except psycopg.Error as err:
        return SqlResult(status="error", error=_one_line(err))
    # The watchdog: statement_timeout stops the server, the cancel also stops the transfer.
    timer = threading.Timer(timeout_s, _cancel, args=(con,))
    try:
        con.execute("SET TRANSACTION READ ONLY")
        problems = checked_problems(dsn, con)
        if problems:
            return SqlResult(status="forbidden", error=refusal(problems))
        timer.start()
        deadline = time.monotonic() + timeout_s
        budget = ResultBudget(max_rows, max_bytes, deadline)
        names = _pg_describe(con, sql)
        if not names:
            return SqlResult(status="forbidden", error="engine refused: not a SELECT")
        too_big = plan_problem(con, sql)
        if too_big:
            return SqlResult(status="forbidden", error=too_big, elapsed_s=_since(start))
        columns = _pg_stream(con, _pg_capped(sql, names, max_bytes), budget)
        if columns is None:
            return SqlResult(status="forbidden", error="engine refused: not a SELECT")
        return _rows(columns, budget, timeout_s, start)
    except psycopg.errors.QueryCanceled:
        return _timeout(timeout_s, start)
    except psycopg.errors.InvalidTextRepresentation as err:
        if _MARK not in str(err):
            return SqlResult(status="error", error=_one_line(err), elapsed_s=_since(start))
        return SqlResult(
            status="error",
            error=f"a result row is larger than the {max_bytes // 1024} KiB size cap; select "
            "fewer or narrower columns",
            elapsed_s=_since(start),
        )
    except psycopg.errors.ReadOnlySqlTransaction as err:
        return SqlResult(status="forbidden", error=_one_line(err), elapsed_s=_since(start))
    except psycopg.errors.InsufficientPrivilege as err:
        return SqlResult(status="forbidden", error=_one_line(err), elapsed_s=_since(start))
    except psycopg.Error as err:
        return SqlResult(status="error", error=_one_line(err), elapsed_s=_since(start))
    finally:
        timer.cancel()
        with contextlib.suppress(Exception):
            con.close()  # never committed: anything the statement did is rolled back


def _pg_stream(con: Any, sql: str, budget: ResultBudget) -> list[str] | None:
    """Stream `sql`'s rows into `budget`; its column names, or None when it is not a query.

    Single-row mode over the extended protocol: the server refuses more than one statement,
    and rows arrive one at a time instead of as one buffered result."""
    psycopg = _psycopg()
    cur = con.cursor()
    columns: list[str] | None = None
    stream = cur.stream(sql)
    try:
        for row in stream:
            if columns is None:
                columns = [d.name for d in cur.description or []]
            if not budget.add(row):
                break
    except psycopg.ProgrammingError as err:
        if "didn't produce a result" in str(err):
            return None
        raise
    finally:
        stream.close()
    if columns is None:  # no rows: the stream forgets the columns, so ask once more
        cur.execute(sql, prepare=True)
        if cur.description is None:
            return None
        columns = [d.name for d in cur.description]
    return columns


def _cancel(con: Any) -> None:
    with contextlib.suppress(Exception):
        con.cancel_safe(timeout=2.0)


def _pg_describe(con: Any, sql: str) -> list[str]:
    """The column names `sql` would return, asked of the server without running it (parse and
    describe an unnamed statement); empty for a statement that returns no rows."""
    psycopg = _psycopg()
    pgconn = con.pgconn
    described: Any = pgconn.prepare(b"", sql.encode())
    if described.status != psycopg.pq.ExecStatus.FATAL_ERROR:
        described = pgconn.describe_prepared(b"")
    if described.status == psycopg.pq.ExecStatus.FATAL_ERROR:
        raise psycopg.errors.error_from_result(described, encoding=con.info.encoding)
    return [(described.fname(i) or b"").decode() for i in range(described.nfields)]


def _pg_capped(sql: str, names: list[str], max_bytes: int) -> str:
    """The statement wrapped so that the server refuses to send a row larger than the byte cap.

    A 900 MB `string_agg` value used to arrive whole (libpq buffers a row before psycopg sees
    it) and then be copied into Python: about 2 GB in the worker before any cap could apply.
    The wrapper keeps the statement's column names (duplicates included) and order, and sums
    the stored size of each value (no copy of the row); a row over the cap raises an error that
    carries `_MARK` (a text cast that depends on the row, so the planner cannot fold it).
    """
    body = sql.rstrip().rstrip(";").rstrip()
    inner = [f"wg_c{i}" for i in range(len(names))]
    quoted = ['"' + n.replace('"', '""') + '"' for n in names]
    outer = ", ".join(f"{c} AS {q}" for c, q in zip(inner, quoted, strict=True))
    size = " + ".join(f"coalesce(pg_column_size({c}), 0)" for c in inner)
    return (
        f"SELECT {outer} FROM (\n{body}\n) AS wg_row({', '.join(inner)}) WHERE (CASE WHEN"
        f" {size} > {int(max_bytes)} THEN ('{_MARK} ' || ({size})::text)::int END) IS NULL"
    )


# Engine messages that mean "the session refused to do this", as opposed to a wrong query.
_REFUSALS = (
    "read-only",
    "readonly",
    "configuration has been locked",
    "disabled by configuration",
    "disabled through configuration",
    "not authorized",
    "authorization denied",
    "one statement at a time",
)


def _classify(err: BaseException) -> ExecStatus:
    if isinstance(err, duckdb.PermissionException):
        return "forbidden"
    text = str(err).lower()
    return "forbidden" if any(word in text for word in _REFUSALS) else "error"


def _since(start: float) -> float:
    return time.perf_counter() - start


def _timeout(timeout_s: float, start: float) -> SqlResult:
    return SqlResult(
        status="timeout",
        error=f"query stopped after the {timeout_s:g} s limit; make it cheaper",
        elapsed_s=_since(start),
    )


def _rows(columns: list[str], budget: ResultBudget, timeout_s: float, start: float) -> SqlResult:
    if budget.timed_out:
        return _timeout(timeout_s, start)
    return SqlResult(
        status="ok",
        columns=columns,
        rows=budget.rows,
        truncated=budget.truncated,
        elapsed_s=_since(start),
        note=budget.message(),
    )


def execute_sql(
    sql: str,
    database: str | Path,
    *,
    engine: Engine = "duckdb",
    timeout_s: float = 5.0,
    max_rows: int = 50,
    max_bytes: int = DEFAULT_MAX_BYTES,
    guard: bool = True,
) -> SqlResult:
    """Run one read-only statement on `database` (a file path, or a DSN for PostgreSQL).

    `guard=False` skips the parser check; only tests use it, to prove the engine layer alone.
    At most `max_rows` rows and about `max_bytes` bytes of values come back; `truncated` says
    there were more and `note` says which cap cut them. `timeout_s` covers fetching too.
    """
    if timeout_s <= 0 or max_rows < 0 or max_bytes <= 0:
        raise ValueError("timeout_s and max_bytes must be positive and max_rows non-negative")
    if guard:
        verdict = check_read_only(sql, engine)
        if not verdict.ok:
            status: ExecStatus = "parse_error" if verdict.kind == "parse_error" else "forbidden"
            return SqlResult(status=status, error=verdict.reason)
    if engine == "duckdb":
        return _duckdb(sql, database, timeout_s, max_rows, max_bytes)
    if engine == "sqlite":
        return _sqlite(sql, database, timeout_s, max_rows, max_bytes)
    if engine == "postgres":
        return _postgres(sql, str(database), timeout_s, max_rows, max_bytes)
    raise ValueError(f"unknown engine {engine!r}: use duckdb, sqlite or postgres")
