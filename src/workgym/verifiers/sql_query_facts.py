"""What a gold query touches, read from its AST: the facts the fuzzer builds databases around.

sqlglot qualifies every column with its table, then we collect the literals each column is
compared with (to put rows just below, on and above the boundary), the equi-join pairs (to make
orphans), the single-table predicates (to sample real rows that satisfy them), and the ORDER BY
and GROUP BY columns (to make ties). A query the qualifier cannot handle still yields what the
unqualified tree shows.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import cast

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.qualify import qualify

ColumnRef = tuple[str, str]  # (table, column), both lower case
LOCAL_ALIAS = "_t"


@dataclass
class QueryFacts:
    tables: list[str] = field(default_factory=list)  # real tables, in order of appearance
    literals: list[tuple[ColumnRef, str]] = field(default_factory=list)  # column, literal SQL
    joins: list[tuple[ColumnRef, ColumnRef]] = field(default_factory=list)
    # table -> [(filter SQL on alias _t, columns it reads)]
    local: dict[str, list[tuple[str, frozenset[str]]]] = field(default_factory=dict)
    order: list[ColumnRef] = field(default_factory=list)
    group: list[ColumnRef] = field(default_factory=list)
    columns: dict[str, set[str]] = field(default_factory=dict)  # referenced columns per table


def _is_literal(node: exp.Expression) -> bool:
    if isinstance(node, exp.Literal | exp.Boolean):
        return True
    if isinstance(node, exp.Neg):
        return isinstance(node.this, exp.Literal)
    if isinstance(node, exp.Cast):
        return isinstance(node.this, exp.Literal)
    return False


class _Resolver:
    def __init__(self, tree: exp.Expression, schema: dict[str, dict[str, str]]):
        self.schema = schema
        self.aliases: dict[str, str] = {}
        self.tables: list[str] = []
        for table in tree.find_all(exp.Table):
            name = table.name.lower()
            if name in schema:
                self.aliases[table.alias_or_name.lower()] = name
                if name not in self.tables:
                    self.tables.append(name)

    def column(self, node: exp.Expression) -> ColumnRef | None:
        if not isinstance(node, exp.Column):
            return None
        name, qualifier = node.name.lower(), node.table.lower()
        if qualifier:
            table = self.aliases.get(qualifier)
            return (table, name) if table and name in self.schema[table] else None
        owners = [t for t in self.tables if name in self.schema[t]]
        return (owners[0], name) if len(owners) == 1 else None


def _conjuncts(cond: exp.Expression | None) -> list[exp.Expression]:
    if cond is None:
        return []
    if isinstance(cond, exp.And):
        return [cast(exp.Expression, c) for c in cond.flatten()]
    return [cond]


def _collect_literals(tree: exp.Expression, res: _Resolver, facts: QueryFacts) -> None:
    comparisons = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE)
    for node in tree.find_all(*comparisons):
        for col, lit in ((node.this, node.expression), (node.expression, node.this)):
            ref = res.column(col)
            if ref and _is_literal(lit):
                facts.literals.append((ref, lit.sql(dialect="duckdb")))
    for between in tree.find_all(exp.Between):
        ref = res.column(between.this)
        for bound in (between.args.get("low"), between.args.get("high")):
            if ref and bound is not None and _is_literal(bound):
                facts.literals.append((ref, bound.sql(dialect="duckdb")))
    for isin in tree.find_all(exp.In):
        ref = res.column(isin.this)
        for value in isin.expressions:
            if ref and _is_literal(value):
                facts.literals.append((ref, value.sql(dialect="duckdb")))


def _collect_joins(tree: exp.Expression, res: _Resolver, facts: QueryFacts) -> None:
    for node in tree.find_all(exp.EQ):
        left, right = res.column(node.this), res.column(node.expression)
        if left and right and left[0] != right[0]:
            facts.joins.append((left, right))
    for isin in tree.find_all(exp.In):
        query = isin.args.get("query")
        select = query.this if isinstance(query, exp.Subquery) else query
        outer = res.column(isin.this)
        if outer and isinstance(select, exp.Select) and len(select.expressions) == 1:
            inner = res.column(select.expressions[0].unalias())
            if inner and inner[0] != outer[0]:
                facts.joins.append((outer, inner))


def _collect_local(tree: exp.Expression, res: _Resolver, facts: QueryFacts) -> None:
    for holder in tree.find_all(exp.Where, exp.Join):
        cond = holder.args.get("on") if isinstance(holder, exp.Join) else holder.this
        for conj in _conjuncts(cond):
            if conj.find(exp.Select, exp.AggFunc, exp.Window):
                continue
            refs = [res.column(c) for c in conj.find_all(exp.Column)]
            owners = {r[0] for r in refs if r}
            if not refs or None in refs or len(owners) != 1:
                continue
            local = conj.copy()
            for col in local.find_all(exp.Column):
                col.set("table", exp.to_identifier(LOCAL_ALIAS))
            names = frozenset(r[1] for r in refs if r)
            entry = (local.sql(dialect="duckdb"), names)
            facts.local.setdefault(owners.pop(), []).append(entry)


def _collect_keys(tree: exp.Expression, res: _Resolver, facts: QueryFacts) -> None:
    select = tree if isinstance(tree, exp.Select) else None
    aliases = {}
    if select is not None:
        aliases = {e.alias.lower(): e.unalias() for e in select.expressions if e.alias}
    order = tree.args.get("order")
    for ordered in order.expressions if isinstance(order, exp.Order) else []:
        key = ordered.this
        if isinstance(key, exp.Column) and not key.table and key.name.lower() in aliases:
            key = aliases[key.name.lower()]
        ref = res.column(key)
        if ref:
            facts.order.append(ref)
    for select_node in tree.find_all(exp.Select):
        group = select_node.args.get("group")
        for key in group.expressions if isinstance(group, exp.Group) else []:
            ref = res.column(key)
            if ref and ref not in facts.group:
                facts.group.append(ref)


def query_facts(gold_sql: str, schema: dict[str, dict[str, str]]) -> QueryFacts:
    """Facts of `gold_sql` (DuckDB dialect) against `schema` ({table: {column: type}}, lower)."""
    tree = cast(exp.Expression, sqlglot.parse_one(gold_sql, read="duckdb"))
    with contextlib.suppress(SqlglotError, KeyError, ValueError):
        tree = qualify(
            tree,
            schema=cast(dict[str, object], schema),
            dialect="duckdb",
            validate_qualify_columns=False,
            quote_identifiers=False,
        )
    res = _Resolver(tree, schema)
    facts = QueryFacts(tables=list(res.tables))
    _collect_literals(tree, res, facts)
    _collect_joins(tree, res, facts)
    _collect_local(tree, res, facts)
    _collect_keys(tree, res, facts)
    for col in tree.find_all(exp.Column):
        ref = res.column(col)
        if ref:
            facts.columns.setdefault(ref[0], set()).add(ref[1])
    return facts
