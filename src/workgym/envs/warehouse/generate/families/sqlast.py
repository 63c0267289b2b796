"""Small builders for reference SQL as sqlglot ASTs (never string concatenation of values).

Reference queries are built as trees so that literals are always quoted by the generator,
identifiers are quoted only when they must be, and the fuzzing and neighbour code downstream can
walk the same tree. Every query is rendered in DuckDB's dialect, the snapshot's engine.
"""

from __future__ import annotations

from typing import Any

import sqlglot
from sqlglot import exp

DIALECT = "duckdb"


def col(name: str, table: str | None = None) -> exp.Column:
    return exp.column(name, table=table)


def lit(value: Any) -> exp.Expression:
    if value is None:
        return exp.Null()
    if isinstance(value, bool):
        return exp.Boolean(this=value)
    if isinstance(value, int | float):
        return exp.Literal.number(value)
    return exp.Literal.string(str(value))


def table(name: str, alias: str | None = None) -> exp.Table:
    t = exp.to_table(name) if "." not in name else exp.Table(this=exp.to_identifier(name))
    if alias and alias != name:
        t = t.as_(alias)  # type: ignore[assignment]
    return t


def compare(left: exp.Expression, op: str, value: Any) -> exp.Expression:
    right = value if isinstance(value, exp.Expression) else lit(value)
    if op == "is_null":
        return exp.Is(this=left, expression=exp.Null())
    if op == "not_null":
        return exp.Not(this=exp.Is(this=left, expression=exp.Null()))
    ops: dict[str, type[exp.Expression]] = {
        "=": exp.EQ,
        "!=": exp.NEQ,
        ">": exp.GT,
        ">=": exp.GTE,
        "<": exp.LT,
        "<=": exp.LTE,
    }
    return ops[op](this=left, expression=right)


def and_all(conditions: list[exp.Expression]) -> exp.Expression | None:
    if not conditions:
        return None
    out = conditions[0]
    for c in conditions[1:]:
        out = exp.And(this=out, expression=c)
    return out


def count_star() -> exp.Expression:
    return exp.Count(this=exp.Star())


def count_if(condition: exp.Expression) -> exp.Expression:
    return exp.Filter(this=exp.Count(this=exp.Star()), expression=exp.Where(this=condition))


def agg_if(func: str, value: exp.Expression, condition: exp.Expression) -> exp.Expression:
    return exp.Filter(this=agg(func, value), expression=exp.Where(this=condition))


def agg(func: str, value: exp.Expression) -> exp.Expression:
    funcs: dict[str, type[exp.Expression]] = {
        "count": exp.Count,
        "sum": exp.Sum,
        "avg": exp.Avg,
        "min": exp.Min,
        "max": exp.Max,
    }
    return funcs[func](this=value)


def percent(numerator: exp.Expression, denominator: exp.Expression) -> exp.Expression:
    """numerator * 100.0 / denominator, as a DOUBLE."""
    scaled = exp.Mul(this=numerator, expression=exp.Literal.number("100.0"))
    return exp.Div(this=scaled, expression=denominator)


def coalesce(value: exp.Expression, default: Any) -> exp.Expression:
    return exp.Coalesce(this=value, expressions=[lit(default)])


def cast(value: exp.Expression, to: str) -> exp.Expression:
    return exp.Cast(this=value, to=exp.DataType.build(to))


def parse(sql: str) -> exp.Expression:
    tree = sqlglot.parse_one(sql, read=DIALECT)
    assert isinstance(tree, exp.Expression)
    return tree


def to_sql(tree: exp.Expression) -> str:
    return tree.sql(dialect=DIALECT)


def tables_of(tree: exp.Expression) -> list[str]:
    """Base tables a query reads (CTE names excluded), sorted."""
    ctes = {c.alias_or_name for c in tree.find_all(exp.CTE)}
    return sorted({t.name for t in tree.find_all(exp.Table) if t.name not in ctes})
