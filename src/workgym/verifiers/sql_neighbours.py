"""Near-miss mutations of a gold query: what a test suite of databases must tell apart.

A fuzzed database is only worth keeping if some plausible wrong answer gives a different result
on it than the gold does. These are the wrong answers we know agents write: `>=` for `>`, a LEFT
join for an INNER one, a predicate forgotten, DISTINCT added or dropped, a LIMIT off by one, the
sort direction flipped, COUNT vs COUNT(DISTINCT), IS NULL vs IS NOT NULL, MIN vs MAX.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import cast

import sqlglot
from pydantic import BaseModel
from sqlglot import exp

_STRICTNESS: dict[type[exp.Expression], type[exp.Expression]] = {
    exp.GT: exp.GTE,
    exp.GTE: exp.GT,
    exp.LT: exp.LTE,
    exp.LTE: exp.LT,
}


class Neighbour(BaseModel):
    kind: str
    sql: str


Mutation = Callable[[exp.Expression], bool]


def _each(
    tree: exp.Expression, kinds: tuple[type[exp.Expression], ...], mutate: Mutation
) -> Iterator[exp.Expression]:
    """One mutated copy of the tree per node of the given kinds that `mutate` accepts."""
    count = sum(1 for _ in tree.find_all(*kinds))
    for index in range(count):
        copy = tree.copy()
        node = list(copy.find_all(*kinds))[index]
        if mutate(node):
            yield copy


def _flip_strictness(node: exp.Expression) -> bool:
    swapped = _STRICTNESS[type(node)](this=node.this.copy(), expression=node.expression.copy())
    node.replace(swapped)
    return True


def _literal_shifts(tree: exp.Expression) -> Iterator[exp.Expression]:
    for delta in (-1, 1):

        def shift(node: exp.Expression, delta: int = delta) -> bool:
            parent = node.parent
            if node.is_string or not isinstance(parent, exp.Predicate | exp.Between | exp.In):
                return False
            value = float(node.name)
            new = int(value) + delta if node.is_int else value + delta
            node.replace(exp.Literal.number(new))
            return True

        yield from _each(tree, (exp.Literal,), shift)


def _join_kind(node: exp.Expression) -> bool:
    if not (node.args.get("on") or node.args.get("using")):
        return False  # comma or cross join: no side to change
    side = str(node.args.get("side") or "").upper()
    node.set("kind", None)
    node.set("side", None if side in ("LEFT", "RIGHT") else "LEFT")
    return True


def _drop_conjuncts(tree: exp.Expression) -> Iterator[exp.Expression]:
    holders = [n for n in tree.find_all(exp.Where, exp.Having, exp.Join)]
    for h_index, holder in enumerate(holders):
        cond = holder.args.get("on") if isinstance(holder, exp.Join) else holder.this
        if cond is None:
            continue
        conjuncts = list(cond.flatten()) if isinstance(cond, exp.And) else [cond]
        for c_index in range(len(conjuncts)):
            copy = tree.copy()
            target = [n for n in copy.find_all(exp.Where, exp.Having, exp.Join)][h_index]
            if isinstance(target, exp.Join):
                parts = list(target.args["on"].flatten()) if len(conjuncts) > 1 else []
                if len(parts) < 2:
                    continue  # dropping the only join condition gives a cross join
                rest = [p.copy() for i, p in enumerate(parts) if i != c_index]
                target.set("on", exp.and_(*rest))
            elif len(conjuncts) == 1:
                target.pop()
            else:
                parts = list(target.this.flatten())
                rest = [p.copy() for i, p in enumerate(parts) if i != c_index]
                target.set("this", exp.and_(*rest))
            yield copy


def _toggle_count_distinct(node: exp.Expression) -> bool:
    arg = node.this
    if isinstance(arg, exp.Star) or arg is None:
        return False
    if isinstance(arg, exp.Distinct):
        if len(arg.expressions) != 1:
            return False
        node.set("this", arg.expressions[0].copy())
    else:
        node.set("this", exp.Distinct(expressions=[arg.copy()]))
    return True


def _toggle_is_null(node: exp.Expression) -> bool:
    if not isinstance(node.expression, exp.Null):
        return False
    parent = node.parent
    if isinstance(parent, exp.Not):
        parent.replace(node.copy())
    else:
        node.replace(exp.Not(this=node.copy()))
    return True


def _swap_min_max(node: exp.Expression) -> bool:
    other = exp.Max if isinstance(node, exp.Min) else exp.Min
    node.replace(other(this=node.this.copy()))
    return True


def _top_level(tree: exp.Expression) -> Iterator[tuple[str, exp.Expression]]:
    if not isinstance(tree, exp.Select):
        return
    # DISTINCT cannot change a grouped or aggregated result: not a neighbour there.
    if tree.args.get("distinct") or not (tree.args.get("group") or tree.find(exp.AggFunc)):
        copy = tree.copy()
        copy.set("distinct", None if tree.args.get("distinct") else exp.Distinct())
        yield "distinct", copy
    limit = tree.args.get("limit")
    count = limit.expression if isinstance(limit, exp.Limit) else None
    if isinstance(count, exp.Literal) and count.is_int:
        n = int(count.name)
        for new in (n + 1, n - 1):
            if new >= 1:
                copy = tree.copy()
                copy.args["limit"].set("expression", exp.Literal.number(new))
                yield "limit", copy
        copy = tree.copy()
        copy.set("limit", None)
        yield "limit", copy
    order = tree.args.get("order")
    if isinstance(order, exp.Order) and order.expressions and limit is not None:
        copy = tree.copy()
        first = copy.args["order"].expressions[0]
        first.set("desc", not first.args.get("desc"))
        yield "order", copy


def neighbours(gold_sql: str, dialect: str = "duckdb", limit: int = 80) -> list[Neighbour]:
    """Distinct single-step mutations of the gold query, most telling kinds first."""
    tree = cast(exp.Expression, sqlglot.parse_one(gold_sql, read=dialect))
    gold = tree.sql(dialect=dialect)
    found: list[Neighbour] = []
    seen = {gold}

    def add(kind: str, mutated: exp.Expression) -> None:
        sql = mutated.sql(dialect=dialect)
        if sql not in seen and len(found) < limit:
            seen.add(sql)
            found.append(Neighbour(kind=kind, sql=sql))

    for m in _each(tree, tuple(_STRICTNESS), _flip_strictness):
        add("strictness", m)
    for m in _each(tree, (exp.Join,), _join_kind):
        add("join", m)
    for m in _drop_conjuncts(tree):
        add("drop_predicate", m)
    for kind, m in _top_level(tree):
        add(kind, m)
    for m in _each(tree, (exp.Count,), _toggle_count_distinct):
        add("count_distinct", m)
    for m in _each(tree, (exp.Is,), _toggle_is_null):
        add("is_null", m)
    for m in _each(tree, (exp.Min, exp.Max), _swap_min_max):
        add("min_max", m)
    for m in _literal_shifts(tree):
        add("literal", m)
    return found


MAX_PASTED_KEYS = 5000  # a longer list of answer values makes a query no agent would write


def pasted_keys(
    gold_sql: str, values: Sequence[object], dialect: str = "duckdb"
) -> Neighbour | None:
    """The gold's filter replaced by `first column IN (the real answer's first-column values)`.

    This wrong answer knows the real answer and nothing else, and it matches the gold on every
    copy whose rows keep the real data's verdicts: an anti-join copy where no kept row gains or
    loses its inner match (decision 0162). As a neighbour, the suite picks a copy that catches
    it when one exists, and reports it uncaught when none does. None when the gold has no WHERE,
    its first output is not a plain column, or the answer is empty or too long to paste.
    """
    tree = sqlglot.parse_one(gold_sql, read=dialect)
    if not isinstance(tree, exp.Select) or tree.args.get("where") is None or not tree.expressions:
        return None
    column = tree.expressions[0].unalias()
    kept = [v for v in dict.fromkeys(values) if v is not None]
    if not isinstance(column, exp.Column) or not kept or len(kept) > MAX_PASTED_KEYS:
        return None
    numbers = [v for v in kept if isinstance(v, int | float) and not isinstance(v, bool)]
    texts = [v for v in kept if isinstance(v, str)]
    if len(numbers) == len(kept):
        items = [exp.Literal.number(v) for v in sorted(numbers)]
    elif len(texts) == len(kept):
        items = [exp.Literal.string(v) for v in sorted(texts)]
    else:
        return None  # dates, decimals, mixed: their literal spelling is the dialect's business
    tree = tree.copy()
    tree.set("where", exp.Where(this=exp.In(this=column.copy(), expressions=items)))
    return Neighbour(kind="pasted_keys", sql=tree.sql(dialect=dialect))
