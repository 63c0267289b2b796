"""A tiny DuckDB result-set environment, with weak and correct comparisons, for the SQL probes.

`Orders*` take the answer as rows; `OrdersSql` takes SQL, runs it read-only on the real data
and on a hand-made "fuzzed" copy (boundary values, orphans, duplicates, NULLs), and compares
bags there too. The correct comparison is a bag of whole rows under ONE column permutation with
a relative numeric tolerance; the weak ones are the set and per-column-sorting comparisons that
published scorers shipped with (VERIFIERS.md).
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import sqlglot
from sqlglot import exp

import workgym as wg
from workgym.core.messages import Message, ToolCall
from workgym.guards.capabilities import ResultSet, submit

REAL = [
    ("ann", "tea", 2, 3.5, None),
    ("ann", "tea", 2, 3.5, None),
    ("bob", "coffee", 1, 4.25, "gift"),
    ("bob", "tea", 3, 3.5, None),
    ("cid", "cocoa", 5, 6.0, "bulk"),
    ("dee", "tea", 1, 3.5, "rush"),
    ("eve", "spice", 4, 0.75, None),
]
# Separates the gold queries from their neighbours: qty exactly at the literals, an orphan
# customer, extra duplicates, NULLs.
FUZZED = [
    *REAL,
    ("fay", "tea", 2, 3.5, None),
    ("gus", "tea", 3, 2.0, "x"),
    ("ann", "coffee", 3, 4.0, None),
]
CITIES = [("ann", "Lyon"), ("bob", "Oslo"), ("cid", "Lima"), ("dee", "Rome"), ("eve", "Kyiv")]
FUZZED_CITIES = [*CITIES[:-1], ("fay", "Pune")]

QUERIES = {
    "dupes/customers": ("SELECT customer FROM orders WHERE qty >= 2", False),
    "pairs/tea": ("SELECT customer, qty FROM orders WHERE product = 'tea' AND qty > 1", False),
    "nulls/notes": ("SELECT customer, note FROM orders WHERE qty < 3", False),
    "ordered/totals": (
        "SELECT customer, sum(qty) AS total FROM orders GROUP BY customer "
        "ORDER BY total DESC, customer",
        True,
    ),
    "numbers/avg": ("SELECT product, avg(price) AS avg_price FROM orders GROUP BY product", False),
    "join/cities": (
        "SELECT o.customer, c.city FROM orders AS o JOIN cities AS c ON o.customer = c.name",
        False,
    ),
}


def build_db(path: Path, orders: list[tuple[Any, ...]], cities: list[tuple[str, str]]) -> None:
    con = duckdb.connect(str(path))
    con.execute(
        "CREATE TABLE orders (customer TEXT, product TEXT, qty INTEGER, price DOUBLE, note TEXT)"
    )
    con.executemany("INSERT INTO orders VALUES (?, ?, ?, ?, ?)", orders)
    con.execute("CREATE TABLE cities (name TEXT, city TEXT)")
    con.executemany("INSERT INTO cities VALUES (?, ?)", cities)
    con.close()


_CONNECTIONS: dict[Path, duckdb.DuckDBPyConnection] = {}


def read_only(path: Path) -> duckdb.DuckDBPyConnection:
    """One read-only connection per database file (external access off, configuration locked);
    every query gets its own cursor. Opening a connection costs ~40 ms on a busy machine."""
    if path not in _CONNECTIONS:
        _CONNECTIONS[path] = duckdb.connect(
            str(path),
            read_only=True,
            config={"enable_external_access": False, "lock_configuration": True},
        )
    return _CONNECTIONS[path].cursor()


def run_query(path: Path, sql: str, cap: int = 10_001, timeout_s: float = 5.0) -> list[list[Any]]:
    cur = read_only(path)
    timer = threading.Timer(timeout_s, cur.interrupt)
    timer.start()
    try:
        return [list(r) for r in cur.execute(sql).fetchmany(cap)]
    finally:
        timer.cancel()
        cur.close()


# -- comparisons ------------------------------------------------------------------------------


def _num(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def cell_equal(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if _num(a) and _num(b):
        return abs(a - b) <= max(1e-9, 1e-6 * max(abs(a), abs(b)))
    return type(a) is type(b) and a == b


def _key(row: list[Any]) -> str:
    return json.dumps([round(v, 6) if _num(v) else v for v in row], default=str)


def bag_equal(gold: list[list[Any]], got: list[list[Any]], ordered: bool) -> bool:
    """Bag of whole rows (a list when ordered), tolerant numbers, under ONE column permutation."""
    if len(gold) != len(got):
        return False
    width = len(gold[0]) if gold else (len(got[0]) if got else 0)
    if any(len(r) != width for r in [*gold, *got]):
        return False
    for perm in itertools.permutations(range(width)):
        moved = [[r[j] for j in perm] for r in got]
        a = gold if ordered else sorted(gold, key=_key)
        b = moved if ordered else sorted(moved, key=_key)
        if all(
            cell_equal(x, y)
            for ra, rb in zip(a, b, strict=True)
            for x, y in zip(ra, rb, strict=True)
        ):
            return True
    return False


def set_equal(gold: list[list[Any]], got: list[list[Any]], ordered: bool) -> bool:
    """Weak: duplicates ignored."""
    return {_key(r) for r in gold} == {_key(r) for r in got}


def per_column_equal(gold: list[list[Any]], got: list[list[Any]], ordered: bool) -> bool:
    """Weak: each column sorted on its own; rows never compared."""
    if len(gold) != len(got) or (gold and len(gold[0]) != len(got[0])):
        return False
    cols = len(gold[0]) if gold else 0
    return all(
        sorted(_key([r[j]]) for r in gold) == sorted(_key([r[j]]) for r in got) for j in range(cols)
    )


Compare = Callable[[list[list[Any]], list[list[Any]], bool], bool]


# -- the environments -------------------------------------------------------------------------


@wg.tool
def run_sql(ctx: wg.Ctx, sql: str) -> dict[str, Any]:
    """Run one read-only SQL query on the orders database (tables orders, cities).

    Args:
        sql: One SELECT statement.
    """
    try:
        rows = run_query(ctx.state, sql, cap=51)
    except duckdb.Error as exc:
        raise wg.ToolError(f"query failed: {exc}") from exc
    return {"rows": rows[:50], "truncated": len(rows) > 50}


@wg.tool(final=True)
def submit_rows(rows: list[list[str | int | float | None]]) -> str:
    """Submit the result rows. This ends the task.

    Args:
        rows: The rows of the result, each a list of values.
    """
    return "recorded"


class _Orders(wg.Environment):
    """Tasks, data and gold results shared by the rows and the SQL channel."""

    id = "test/orders"
    tools = [run_sql, submit_rows]
    limits = wg.Limits(max_turns=6)
    guard_tags = frozenset({"sql_answer"})
    compare: Compare = staticmethod(bag_equal)

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.real = root / "real.duckdb"
        self.fuzzed = root / "fuzzed.duckdb"
        if not self.real.exists():
            root.mkdir(parents=True, exist_ok=True)
            build_db(self.real, REAL, CITIES)
            build_db(self.fuzzed, FUZZED, FUZZED_CITIES)
        self._gold: dict[str, ResultSet] = {}

    def tasks(self) -> wg.TaskSet:
        tasks = [
            wg.Task(
                family=family,
                prompt=f"Answer with the rows of: {family.replace('/', ' ')}",
                meta={"sql": sql, "ordered": ordered, "relevant": ["orders"]},
            )
            for family, (sql, ordered) in QUERIES.items()
        ]
        overrides = {
            f: s
            for f, s in zip(QUERIES, ["train", "train", "dev", "dev", "test", "test"], strict=True)
        }
        return wg.TaskSet(tasks, wg.SplitSpec(salt="orders", overrides=overrides))  # type: ignore[arg-type]

    def state(self, task: wg.Task) -> Any:
        return self.real

    def gold_result(self, task: wg.Task) -> ResultSet:
        if task.id not in self._gold:
            cur = read_only(self.real)
            cur.execute(task.meta["sql"])
            columns = [d[0] for d in cur.description]
            rows = [list(r) for r in cur.fetchall()]
            cur.close()
            self._gold[task.id] = ResultSet(
                columns=columns, rows=rows, ordered=task.meta["ordered"]
            )
        return self._gold[task.id]


class Orders(_Orders):
    """Rows channel with the correct bag/permutation comparison."""

    id = "test/orders-rows"

    def submit_result(self, task: wg.Task, result: ResultSet) -> list[Message]:
        return submit(self, task, result.rows)

    def oracle(self, task: wg.Task) -> list[Message]:
        return submit(self, task, self.gold_result(task).rows)

    def verify(self, task: wg.Task, episode: Any) -> wg.Verdict:
        got = episode.answer
        if not isinstance(got, list):
            return wg.Verdict.wrong(wg.Status.parse_error)
        gold = self.gold_result(task)
        ok = type(self).compare(gold.rows, got, gold.ordered)
        return wg.Verdict.correct() if ok else wg.Verdict.wrong()


class OrdersSet(Orders):
    id = "test/orders-set"
    compare = staticmethod(set_equal)


class OrdersPerColumn(Orders):
    id = "test/orders-per-column"
    compare = staticmethod(per_column_equal)


@wg.tool(final=True)
def submit_sql(sql: str) -> str:
    """Submit the SQL whose result answers the question. This ends the task.

    Args:
        sql: One SELECT statement.
    """
    return "recorded"


MAX_SQL_CHARS = 20_000
WRITES = (exp.Insert, exp.Update, exp.Delete, exp.Drop, exp.Create, exp.Alter, exp.Command)


class OrdersSql(_Orders):
    """SQL channel: one read-only SELECT, run on the real and the fuzzed database."""

    id = "test/orders-sql"
    tools = [run_sql, submit_sql]

    def gold_sql(self, task: wg.Task) -> str:
        return str(task.meta["sql"])

    def databases(self) -> list[Path]:
        return [self.real, self.fuzzed]

    def submit_sql(self, task: wg.Task, sql: str) -> list[Message]:
        call = ToolCall(id="s", name="submit_sql", arguments=json.dumps({"sql": sql}))
        return [Message(role="assistant", tool_calls=[call])]

    def oracle(self, task: wg.Task) -> list[Message]:
        return self.submit_sql(task, self.gold_sql(task))

    def verify(self, task: wg.Task, episode: Any) -> wg.Verdict:
        sql = episode.answer
        if not isinstance(sql, str) or len(sql) > MAX_SQL_CHARS:
            # Parsing 10 MB with sqlglot takes minutes: the huge-output probe found that.
            return wg.Verdict.wrong(wg.Status.parse_error, why="SQL too long")
        try:
            trees = sqlglot.parse(sql, read="duckdb")
        except sqlglot.errors.ParseError:
            return wg.Verdict.wrong(wg.Status.parse_error)
        if len(trees) != 1 or trees[0] is None or not isinstance(trees[0], exp.Query):
            return wg.Verdict.wrong(wg.Status.forbidden_action, why="one SELECT only")
        if any(isinstance(node, WRITES) for node in trees[0].walk()):
            return wg.Verdict.wrong(wg.Status.forbidden_action, why="write")
        ordered = bool(task.meta["ordered"])
        for db in self.databases():
            gold = run_query(db, task.meta["sql"])
            try:
                got = run_query(db, sql, cap=max(10 * len(gold), 10_000) + 1)
            except duckdb.Error as exc:
                return wg.Verdict.wrong(error=str(exc))
            if len(got) > max(10 * len(gold), 10_000) or not bag_equal(gold, got, ordered):
                return wg.Verdict.wrong(db=db.name)
        return wg.Verdict.correct()


class OrdersSqlNoSuite(OrdersSql):
    """Weak: compares on the real data only (no fuzzed test databases)."""

    id = "test/orders-sql-no-suite"

    def databases(self) -> list[Path]:
        return [self.real]
