"""Refuse PostgreSQL agent SQL that would build a huge value from many rows, from its plan.

PostgreSQL has no per-session memory limit a non-superuser can set: `work_mem` bounds sorts and
hashes (they spill), but not the state of `string_agg`, `array_agg`, `json_agg`, `xmlagg`, an
`ARRAY(subquery)` or a running window aggregate, which grows with every row it is fed
(`string_agg(repeat('x', 1000), ',')` over 900,000 rows: +1.8 GB in the server backend, and the
timer does not help on a loaded machine). Memory use there is the sum of the values fed in, so
it is bounded before running: the statement is planned (`EXPLAIN`, never `ANALYZE`), and the
rows that can reach each aggregate are bounded from the plan, times the largest value each row
can contribute (`sql_value_size` sizes of the aggregate's arguments, plan widths for columns).

The row bound does not trust filter estimates, which a rewrite can fool (`WHERE a || '' = b || ''`
is estimated at 0.5%): a table scan counts every row of the table, a series its literal length
(a date or timestamp series too, from its literal bounds and step), a join the product of its
sides; only a hash or merge join on equal plain columns of analyzed tables keeps the planner's
join selectivity (from column statistics), applied to the unfiltered sides. Only the aggregate
nodes that compute a value builder are charged their input rows (a `count(*)` beside one is
not), and subplans only when an ARRAY(subquery) could collect them. A never-analyzed table is
counted once per process while its size and insert/delete counters stay the same. What a plan
cannot bound is refused: a value-building aggregate over a recursive CTE (PostgreSQL guesses
its row count), and `generate_series` with bounds that are not literal numbers, dates or
timestamps (the planner assumes 1,000 rows). A recursive step that grows a value by a factor is
refused by the guard (`sql_value_size.growth_problem`) on every engine. Decisions 0105, 0151.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import sqlglot
from sqlglot import exp

from workgym.verifiers.sql_value_size import amplification, built_size, function_name

# The most bytes of values a statement may feed into value-building aggregates, as bounded
# from its plan. The backend holds the aggregate's state and one copy of its result (about
# twice this), far below the 500 MB an agent's query may add; a result this large could not be
# returned anyway (run_sql's byte cap is 1 MiB), only measured (`length(string_agg(...))`).
MAX_FED_BYTES = 64 * 2**20
# Per-element overhead of an array, json or xml element besides the value itself.
_ELEMENT_OVERHEAD = 16
VALUE_AGGREGATES = frozenset({
    "string_agg", "array_agg", "json_agg", "jsonb_agg", "json_object_agg", "jsonb_object_agg",
    "json_agg_strict", "jsonb_agg_strict", "json_object_agg_strict", "jsonb_object_agg_strict",
    "json_object_agg_unique", "jsonb_object_agg_unique", "json_object_agg_unique_strict",
    "jsonb_object_agg_unique_strict", "json_arrayagg", "json_objectagg", "xmlagg", "range_agg",
    "range_intersect_agg", "group_concat", "listagg",
})  # fmt: skip
_CLASSES = (exp.GroupConcat, exp.ArrayAgg, exp.JSONObjectAgg, exp.JSONArrayAgg)
_NAME = re.compile(r"\b(" + "|".join(sorted(VALUE_AGGREGATES)) + r"|array)\s*\(", re.IGNORECASE)
_JOINS = ("Nested Loop", "Hash Join", "Merge Join")
_SUBPLANS = ("InitPlan", "SubPlan")


def _builders(tree: exp.Expr) -> list[exp.Expr]:
    """Aggregates and ARRAY(subquery) constructors that build one value from many rows."""
    found: list[exp.Expr] = []
    for node in tree.walk():
        aggregate = isinstance(node, _CLASSES) or (
            isinstance(node, exp.Func) and function_name(node) in VALUE_AGGREGATES
        )
        subquery_array = isinstance(node, exp.Array) and any(
            isinstance(e, exp.Select | exp.Subquery) for e in node.expressions
        )
        if aggregate or subquery_array:
            found.append(node)
    return found


def _row_size(node: exp.Expr, width: float) -> float:
    """Upper bound on the bytes one row contributes through `node` (columns count `width`)."""
    if isinstance(node, exp.Subquery):
        return _row_size(node.this, width)
    if isinstance(node, exp.Select):
        return sum(_row_size(e, width) for e in node.selects)
    if isinstance(node, exp.Column | exp.Star):
        return width
    if isinstance(node, exp.Literal):
        return float(len(node.this)) if node.is_string else 8.0
    if isinstance(node, exp.Replace | exp.RegexpReplace):
        factor = amplification(node)
        return _row_size(node.this, width) * (factor if factor is not None else width)
    built = built_size(node) if isinstance(node, exp.Expression) else None
    if built:
        return built
    parts = sum(_row_size(c, width) for c in node.iter_expressions())
    if isinstance(node, exp.Func) and function_name(node) == "encode":
        return 2 * parts
    return parts


_LITERAL_PARTS = (
    exp.Literal, exp.Cast, exp.DataType, exp.DataTypeParam, exp.Interval, exp.Var, exp.Neg,
    exp.Paren,
)  # fmt: skip
_SHORTEST_MONTH_S, _SHORTEST_DAY_S = 28 * 86400, 23 * 3600  # a DST day can be 23 hours


def _literal(node: exp.Expr | None) -> bool:
    return node is not None and all(isinstance(n, _LITERAL_PARTS) for n in node.walk())


def _time_series_rows(con: Any, series: exp.Expr) -> float | None:
    """Rows of a date or timestamp series with literal bounds and step (`generate_series(
    '2020-01-01'::date, '2020-12-31', '1 day')`), which PostgreSQL 15's planner guesses at
    1,000: the span over the shortest the step can be (a month 28 days, a day 23 hours), plus
    one. The literals are evaluated by the server (any date format it accepts), in a savepoint,
    and nothing else runs; None when they are not literals or not a date, time and interval."""
    parts = [series.args.get(k) for k in ("start", "end", "step")]
    if not all(_literal(p) for p in parts):
        return None
    start, end, step = (p.sql(dialect="postgres") for p in parts if p is not None)
    import psycopg

    try:
        with con.transaction():
            row = con.execute(
                f"SELECT extract(epoch FROM ({end})::timestamptz - ({start})::timestamptz),"
                f" extract(year FROM ({step})::interval) * 12"
                f" + extract(month FROM ({step})::interval), extract(day FROM ({step})::interval),"
                f" extract(hour FROM ({step})::interval) * 3600"
                f" + extract(minute FROM ({step})::interval) * 60"
                f" + extract(second FROM ({step})::interval)"
            ).fetchone()
    except psycopg.Error:
        return None
    span, months, days, seconds = (float(x) for x in row)
    sign = 1.0 if min(months, days, seconds) >= 0 else -1.0
    if sign * max(months, days, seconds) < 0 or not (months or days or seconds):
        return None  # a step of mixed signs, or none: not something to bound
    shortest = sign * (months * _SHORTEST_MONTH_S + days * _SHORTEST_DAY_S + seconds)
    return 0.0 if sign * span < 0 else float(int(sign * span // shortest) + 1)


def _series(con: Any, tree: exp.Expr) -> tuple[float, str | None]:
    """The most rows a literal date or timestamp series gives (0 if none; numeric ones the
    planner counts itself), and the first series whose length cannot be known before running."""
    most = 0.0
    for node in tree.find_all(exp.GenerateSeries, exp.ExplodingGenerateSeries):
        series = (
            node if isinstance(node, exp.GenerateSeries) else exp.GenerateSeries(**node.copy().args)
        )
        if built_size(series) is not None:
            continue
        rows = _time_series_rows(con, series)
        if rows is None:
            return most, node.sql(dialect="postgres")[:60]
        most = max(most, rows)
    return most, None


def _walk(plan: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield plan
    for child in plan.get("Plans", []):
        yield from _walk(child)


# Row counts of never-analyzed tables, by (host, port, database, table oid), with the fingerprint
# (bytes on disk, rows inserted, rows deleted) they were counted at.
_COUNTS: dict[tuple[str, str, str, int], tuple[tuple[Any, ...], float]] = {}
_MAX_COUNTS = 1024


class _Bounds:
    """Upper bounds on the rows each plan node can emit, ignoring filter estimates."""

    def __init__(self, con: Any, root: dict[str, Any], series_rows: float = 0.0) -> None:
        self.con = con
        self.series_rows = series_rows  # a literal date series' length, which the plan guesses
        self.ctes = {
            str(n["Subplan Name"]).removeprefix("CTE "): n
            for n in _walk(root)
            if str(n.get("Subplan Name", "")).startswith("CTE ")
        }
        self.tables: dict[str, tuple[float, bool]] = {}

    def table(self, name: str) -> tuple[float, bool]:
        """(rows, analyzed) of a table: its row count from the catalog, or counted when it was
        never analyzed; analyzed when it has column statistics."""
        if name not in self.tables:
            row = self.con.execute(
                "SELECT c.reltuples, to_regclass(%s)::text, EXISTS (SELECT 1 FROM pg_stats s"
                " WHERE s.schemaname = n.nspname AND s.tablename = c.relname), c.oid,"
                " pg_relation_size(c.oid), coalesce(st.n_tup_ins, 0), coalesce(st.n_tup_del, 0)"
                " FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
                " LEFT JOIN pg_stat_all_tables st ON st.relid = c.oid"
                " WHERE c.oid = to_regclass(%s)",
                [name, name],
            ).fetchone()
            if row is None:  # not a table this role can name: trust the planner
                self.tables[name] = (float("inf"), False)
            elif float(row[0]) >= 0:
                self.tables[name] = (float(row[0]), bool(row[2]))
            else:  # never analyzed nor vacuumed: the planner's guess is off (880 rows for 8)
                self.tables[name] = (self._counted(row[1], int(row[3]), tuple(row[4:])), False)
        return self.tables[name]

    def _counted(self, table: str, oid: int, fingerprint: tuple[Any, ...]) -> float:
        """`count(*)` of a never-analyzed table, once per process while its size on disk and its
        insert and delete counters stay the same (a reader cannot change them; the owner's
        loads do), not once per query."""
        info = self.con.info
        key = (str(info.host), str(info.port), str(info.dbname), oid)
        hit = _COUNTS.get(key)
        if hit is not None and hit[0] == fingerprint:
            return hit[1]
        rows = float(self.con.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
        if len(_COUNTS) >= _MAX_COUNTS:
            _COUNTS.pop(next(iter(_COUNTS)))
        _COUNTS[key] = (fingerprint, rows)
        return rows

    def analyzed(self, node: dict[str, Any]) -> bool:
        return all(
            self.table(str(n["Relation Name"]))[1] for n in _walk(node) if "Relation Name" in n
        )

    def rows(self, node: dict[str, Any]) -> float:
        estimate = float(node.get("Plan Rows", 0))
        kind = node.get("Node Type", "")
        inputs = [c for c in node.get("Plans", []) if c.get("Parent Relationship") not in _SUBPLANS]
        if "Relation Name" in node:
            rows = self.table(str(node["Relation Name"]))[0]
            return rows if rows < float("inf") else estimate
        if kind == "CTE Scan" and node.get("CTE Name") in self.ctes:
            return self.rows(self.ctes[node["CTE Name"]])
        if kind in _JOINS and len(inputs) == 2:
            outer, inner = self.rows(inputs[0]), self.rows(inputs[1])
            if kind != "Nested Loop" and self.analyzed(node) and _plain_equalities(node):
                # the planner's join selectivity from column statistics, applied to the
                # unfiltered inputs (a filter's estimate is what a rewrite can fool)
                selectivity = estimate / max(1.0, float(inputs[0]["Plan Rows"]))
                selectivity /= max(1.0, float(inputs[1]["Plan Rows"]))
                return max(estimate, min(1.0, selectivity) * outer * inner)
            return outer * inner
        if kind == "Aggregate" and node.get("Strategy") == "Plain":
            return estimate
        if not inputs or kind == "ProjectSet":  # a series, VALUES, or set-returning functions
            below = [self.rows(c) for c in inputs]
            series = (
                self.series_rows * max([1.0, *below])
                if kind in ("Function Scan", "ProjectSet")
                else 0.0
            )
            return max([estimate, *below, series])
        return sum(self.rows(c) for c in inputs)  # sorts, hashes, limits, groups, appends


_EQUALITY = re.compile(r"^[\w.]+ = [\w.]+$")


def _plain_equalities(join: dict[str, Any]) -> bool:
    """Whether a hash or merge join matches rows only on equal plain columns (no expressions,
    no extra filter), the one kind of condition column statistics estimate well."""
    if "Join Filter" in join:
        return False
    cond = str(join.get("Hash Cond") or join.get("Merge Cond") or "")
    parts = [
        p.strip().strip("()")
        for p in cond.strip().removeprefix("(").removesuffix(")").split(" AND ")
    ]
    return bool(cond) and all(_EQUALITY.match(p) for p in parts)


def _builds(node: dict[str, Any]) -> bool:
    """Whether an Aggregate or WindowAgg node computes a value builder (its VERBOSE output names
    one): `count(*)` or `sum` beside it, or alone, feeds nothing that grows."""
    return any(_NAME.search(str(out)) for out in node.get("Output", []))


def fed_bytes(
    con: Any, sql: str, tree: exp.Expr, series_rows: float = 0.0
) -> tuple[float, list[str]]:
    """Upper bound on the bytes `sql`'s value-building aggregates would be fed, with the plan
    nodes that refuse outright (a recursive union); run on `con` without executing `sql`.
    Only the aggregates that build a value are charged their input rows, and subplans only
    where an ARRAY(subquery) could collect them."""
    found = _builders(tree)
    arrays = any(isinstance(b, exp.Array) for b in found)
    explained = con.execute("EXPLAIN (FORMAT JSON, VERBOSE) " + sql).fetchone()[0]
    root = (json.loads(explained) if isinstance(explained, str) else explained)[0]["Plan"]
    nodes = list(_walk(root))
    if any(n.get("Node Type") == "Recursive Union" for n in nodes):
        return float("inf"), ["a recursive CTE"]
    width = float(max((n.get("Plan Width", 0) for n in nodes), default=0))
    per_row = sum(
        sum(_row_size(arg, width) for arg in b.iter_expressions()) + _ELEMENT_OVERHEAD
        for b in found
    )
    bounds = _Bounds(con, root, series_rows)
    fed = 0.0
    for node in nodes:
        if node.get("Node Type") in ("Aggregate", "WindowAgg") and _builds(node):
            inputs = [c for c in node.get("Plans", []) if c.get("Parent Relationship") == "Outer"]
            fed += sum(bounds.rows(c) for c in inputs)
        elif arrays and node.get("Parent Relationship") in _SUBPLANS:
            fed += bounds.rows(node)
    return fed * per_row, []


def plan_problem(con: Any, sql: str) -> str | None:
    """A one-line refusal when `sql` could build more than `MAX_FED_BYTES` in aggregates (or
    builds them from rows its plan cannot bound); None otherwise. Plans, never executes."""
    if not _NAME.search(sql):
        return None
    try:
        tree = sqlglot.parse_one(sql, read="postgres")
    except (sqlglot.errors.SqlglotError, RecursionError, ValueError, AssertionError):
        return (  # sqlglot asserts on some intervals ('1 month -3 days' as a series step)
            "refused before running: the query builds values with an aggregate but could not be "
            "parsed to bound them; simplify it"
        )
    if not _builders(tree):
        return None
    names = sorted({_label(b) for b in _builders(tree)})
    series_rows, series = _series(con, tree)
    if series:
        return (
            f"refused before running: {', '.join(names)} over {series}, whose bounds are not "
            "literal numbers, dates or timestamps (its row count is unknown before running); "
            "write literal bounds instead"
        )
    fed, why = fed_bytes(con, sql, tree, series_rows)
    if why:
        return (
            f"refused before running: {', '.join(names)} over {why[0]} (its row count is unknown "
            "before running); aggregate with count/sum/min/max or return the rows instead"
        )
    if fed <= MAX_FED_BYTES:
        return None
    return (
        f"refused before running: up to {fed / 2**20:,.0f} MB of rows could feed "
        f"{', '.join(names)} (the limit is {MAX_FED_BYTES // 2**20} MB); filter or group the "
        "rows first, use count/sum/min/max, or return rows with LIMIT instead of one value"
    )


def _label(node: exp.Expr) -> str:
    if isinstance(node, exp.Array):
        return "ARRAY(subquery)"
    return node.sql(dialect="postgres").split("(")[0].strip().lower()
