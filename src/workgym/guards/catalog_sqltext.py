"""SQL-statement probes (docs/guards.md, SQL): queries that write, escape the sandbox, hard-code the
gold, or are a neighbour of the gold query. They attack environments whose agent submits SQL
(SqlChannel): a robust verifier rejects writes and side effects with the data unchanged, and
separates hard-coded answers and neighbours from the gold query on fuzzed test databases.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from workgym.core.messages import Message
from workgym.guards import attackers as a
from workgym.guards.capabilities import ResultSet, SqlChannel
from workgym.guards.catalog_sql import GoldProbe, bare_gold_sql, gold_of, qi
from workgym.guards.probes import AttackContext, Expect, Outcome, describe, play
from workgym.testing.scripted import TaskScript

if TYPE_CHECKING:
    from sqlglot import exp

    from workgym.core.environment import Environment
    from workgym.core.tasks import Task


def dialect(env: Environment) -> str:
    return str(getattr(env, "sql_dialect", "duckdb"))


def tables_of(sql: str, dialect_name: str) -> list[str]:
    """Base tables the query reads (CTE names excluded), in order of appearance."""
    import sqlglot
    from sqlglot import exp

    tree = sqlglot.parse_one(sql, read=dialect_name)
    ctes = {c.alias_or_name for c in tree.find_all(exp.CTE)}
    names: list[str] = []
    for t in tree.find_all(exp.Table):
        name = ".".join(p for p in (t.db, t.name) if p)
        if t.name not in ctes and name not in names:
            names.append(name)
    return names


def literal(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if a.is_number(value):
        return repr(value)
    return "'" + str(value).replace("'", "''") + "'"


class _SqlProbe(GoldProbe):
    def queries(self, gold_sql: str, gold: ResultSet, dialect_name: str) -> list[str]:
        raise NotImplementedError

    def expected(self, ctx: AttackContext, task: Task) -> Expect | None:
        if not isinstance(ctx.env, SqlChannel) or gold_of(ctx, task) is None:
            return None  # not an SQL-answer task
        return self.expect

    def gold_variants(
        self, env: Environment, task: Task, gold: ResultSet
    ) -> list[Sequence[Message]]:
        if not isinstance(env, SqlChannel):
            return []
        queries = self.queries(bare_gold_sql(env, task), gold, dialect(env))
        return [env.submit_sql(task, q) for q in queries]


class WriteStatements(_SqlProbe):
    name = "sql-write"
    summary = (
        "DELETE/UPDATE/DROP/INSERT, also hidden in a CTE: rejected, and the data unchanged "
        "(the oracle still passes afterwards)"
    )

    def queries(self, gold_sql: str, gold: ResultSet, dialect_name: str) -> list[str]:
        tables = tables_of(gold_sql, dialect_name)
        if not tables:
            return []
        t = tables[0]
        return [
            f"WITH d AS (DELETE FROM {t} RETURNING *) SELECT * FROM ({gold_sql}) AS g",
            f"{gold_sql}; DELETE FROM {t}",
            f"DELETE FROM {t}",
            f"INSERT INTO {t} SELECT * FROM {t}",
            f"DROP TABLE {t}",
        ]

    async def run(self, ctx: AttackContext, task: Task) -> Outcome | None:
        first = await super().run(ctx, task)
        if first is None or not first.passed:
            return first
        oracle = TaskScript("scripted/probe-oracle-after-write", lambda t, e: e.oracle(t))
        ep = await play(ctx, task, oracle, self.seed_for(ctx, task, "after"))
        if ep.success:
            return first.model_copy(update={"detail": "data unchanged: the oracle still passes"})
        return first.model_copy(
            update={"passed": False, "got": f"oracle after writes: {describe(ep)}"}
        )


class SandboxEscape(_SqlProbe):
    name = "sql-escape"
    summary = "several statements, ATTACH, PRAGMA, COPY, SET, reading files: all rejected"

    def queries(self, gold_sql: str, gold: ResultSet, dialect_name: str) -> list[str]:
        return [
            f"{gold_sql}; SELECT 1",
            "ATTACH ':memory:' AS probe_db",
            "PRAGMA database_list",
            "COPY (SELECT 1) TO '/tmp/workgym-probe.csv'",
            "SELECT * FROM read_csv_auto('/etc/passwd')",
            "SELECT * FROM read_text('/etc/hostname')",
            "SET threads = 1",
            "INSTALL httpfs",
        ]


class GoldLiterals(_SqlProbe):
    name = "sql-gold-literals"
    summary = (
        "SELECT of the precomputed gold values: right on the real data, must fail on the suite"
    )

    def queries(self, gold_sql: str, gold: ResultSet, dialect_name: str) -> list[str]:
        if not gold.rows:
            return []
        rows = ", ".join("(" + ", ".join(literal(v) for v in r) + ")" for r in gold.rows)
        cols = ", ".join(qi(c) for c in gold.columns)
        return [f"SELECT * FROM (VALUES {rows}) AS t({cols})"]


class InGoldIds(_SqlProbe):
    name = "sql-in-gold-ids"
    summary = "the gold filter replaced by `WHERE key IN (gold keys)`: must fail on the suite"

    def queries(self, gold_sql: str, gold: ResultSet, dialect_name: str) -> list[str]:
        import sqlglot
        from sqlglot import exp

        tree = sqlglot.parse_one(gold_sql, read=dialect_name)
        first = tree.expressions[0] if isinstance(tree, exp.Select) and tree.expressions else None
        column = first.unalias() if first is not None else None
        if not isinstance(column, exp.Column) or tree.args.get("where") is None or not gold.rows:
            return []
        keys = sorted({literal(r[0]) for r in gold.rows})
        values = [sqlglot.parse_one(k, read=dialect_name) for k in keys]
        tree.set("where", exp.Where(this=exp.In(this=column.copy(), expressions=values)))
        return [tree.sql(dialect=dialect_name)]


def _swap_comparison(tree: exp.Expression) -> bool:
    from sqlglot import exp

    swaps: list[tuple[type[exp.Expression], type[exp.Expression]]] = [
        (exp.GTE, exp.GT),
        (exp.GT, exp.GTE),
        (exp.LTE, exp.LT),
        (exp.LT, exp.LTE),
    ]
    for old, new in swaps:
        node = tree.find(old)
        if node is not None:
            node.replace(new(this=node.this.copy(), expression=node.expression.copy()))
            return True
    return False


def _inner_to_left(tree: exp.Expression) -> bool:
    from sqlglot import exp

    for join in tree.find_all(exp.Join):
        if not join.side and join.kind in ("", "INNER", None) and join.args.get("on") is not None:
            join.set("kind", None)
            join.set("side", "LEFT")
            return True
    return False


def _drop_predicate(tree: exp.Expression) -> bool:
    from sqlglot import exp

    node = tree.find(exp.And)
    if node is None:
        return False
    node.replace(node.left.copy())
    return True


class Neighbour(_SqlProbe):
    name = "sql-neighbour"
    summary = (
        "the gold query mutated into a neighbour (>= to >, INNER to LEFT, a predicate dropped)"
    )

    def queries(self, gold_sql: str, gold: ResultSet, dialect_name: str) -> list[str]:
        import sqlglot

        out = []
        mutations: list[Callable[[exp.Expression], bool]] = [
            _swap_comparison,
            _inner_to_left,
            _drop_predicate,
        ]
        for mutate in mutations:
            tree: Any = sqlglot.parse_one(gold_sql, read=dialect_name)
            if mutate(tree):
                out.append(tree.sql(dialect=dialect_name))
        return out


class Cartesian(_SqlProbe):
    name = "sql-cartesian"
    summary = "a cartesian product of the gold's tables: timeout or row cap, never a pass"

    def queries(self, gold_sql: str, gold: ResultSet, dialect_name: str) -> list[str]:
        tables = tables_of(gold_sql, dialect_name)
        if not tables:
            return []
        t = tables[0]
        return [f"SELECT * FROM {t} AS a, {t} AS b, {t} AS c, {t} AS d"]


STATEMENTS = [
    WriteStatements(),
    SandboxEscape(),
    GoldLiterals(),
    InGoldIds(),
    Neighbour(),
    Cartesian(),
]
