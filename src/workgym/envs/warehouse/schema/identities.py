"""Abbreviations a table's own arithmetic spells out (issue 40, "natural names").

Names are expanded only when the data supports the reading (`naming`): a comment, a reference
or a calendar range. Accounting tables abbreviate words no comment spells out: TPC-DS has
`ss_ext_sales_price` and `sr_return_amt_inc_tax`, and "ext sales price" or "return amt inc tax"
is no question an analyst writes (round 8: 4 of TPC-DS's 5 stilted samples). Their meaning is
not a guess, though: it is an identity the rows satisfy, and that can be checked.

- `ext` reads "extended" when some `ext_X` column equals quantity times `X` (an extended price
  is by definition the line's quantity times the unit price);
- `inc` reads "including" when some `A_inc_T` column equals `A` plus a column named for `T`
  (`return_amt_inc_tax` = `return_amt` + `return_tax`);
- `exc` / `excl` read "excluding" when `A_exc_T` equals `A` minus the `T` column.

An identity must hold on `IDENTITY_SHARE` of the rows where every operand is recorded (real data
carries rounding and injected noise: TPC-DS holds it on 94-99%), over at least `MIN_ROWS` rows.
One verified column spells the word out for its whole table: a table uses one abbreviation in
one sense (`ss_ext_tax` reads "extended tax" once `ss_ext_sales_price` has shown what `ext` is).
Nothing else is expanded here: a word with no identity keeps its spelling.

The same identity says what `X` is: a value per unit (a unit price, a unit wholesale cost), since
the line's total is quantity times it. `per_unit_columns` returns those columns, so that no
question sums one (round 12's one meaningless TPC-DS task summed `i_wholesale_cost` over items;
decision 0191).
"""

from __future__ import annotations

from collections.abc import Iterator

import duckdb

from workgym.envs.warehouse.schema.card import TableCard
from workgym.envs.warehouse.schema.naming import abbreviates, split_words, stem
from workgym.envs.warehouse.source.duck import qi
from workgym.envs.warehouse.source.typemap import NUMERIC_FAMILIES

IDENTITY_SHARE = 0.9
MIN_ROWS = 20
TOLERANCE = 0.011  # absolute: cents, with the rounding of a stored product
QUANTITY_WORDS = frozenset({"quantity", "qty"})
# word -> (its reading, the operation its identity uses)
READINGS: dict[str, tuple[str, str]] = {
    "ext": ("extended", "*"),
    "inc": ("including", "+"),
    "exc": ("excluding", "-"),
    "excl": ("excluding", "-"),
}


def verified_abbreviations(con: duckdb.DuckDBPyConnection, table: TableCard) -> dict[str, str]:
    """The words of `READINGS` that an identity in `table`'s rows spells out, with their
    readings (empty for most tables: one query per candidate identity, and few have any)."""
    words = _numeric_words(table)
    found: dict[str, str] = {}
    for word, (reading, op) in READINGS.items():
        for target, left, right in _candidates(words, word, op):
            if _holds(con, table.name, target, left, right, op):
                found[word] = reading
                break
    return found


def per_unit_columns(con: duckdb.DuckDBPyConnection, table: TableCard) -> list[str]:
    """The columns `X` of `table` for which some `ext_X` equals quantity times `X` on the rows:
    values per unit, whose sum over lines or entities is no quantity anybody holds."""
    found: list[str] = []
    for target, quantity, base in _candidates(_numeric_words(table), "ext", "*"):
        if base not in found and _holds(con, table.name, target, quantity, base, "*"):
            found.append(base)
    return found


def _numeric_words(table: TableCard) -> dict[str, list[str]]:
    """Each numeric column's name as words, its table prefix dropped: what identities match."""
    return {
        c.name: split_words(stem(table, c.name))
        for c in table.columns
        if c.family in NUMERIC_FAMILIES
    }


def _candidates(words: dict[str, list[str]], word: str, op: str) -> Iterator[tuple[str, str, str]]:
    """(column, left operand, right operand) triples whose names fit the identity of `word`."""

    def named(parts: list[str]) -> str | None:
        """The column these words name, an abbreviated word matching its spelled-out form
        (catalog returns' `return_amt_inc_tax` sums `return_amount`)."""
        for other, w in words.items():
            if len(w) == len(parts) and all(_same(a, b) for a, b in zip(parts, w, strict=True)):
                return other
        return None

    quantities = [n for n, w in words.items() if w and w[-1] in QUANTITY_WORDS]
    for name, parts in words.items():
        if word not in parts:
            continue
        i = parts.index(word)
        head, tail = parts[:i], parts[i + 1 :]
        if op == "*":  # ext_X = quantity * X
            base = named(tail) if not head and tail else None
            if base is not None:
                for quantity in quantities:
                    yield name, quantity, base
        else:  # A_inc_T = A + T-column; A_exc_T = A - T-column
            base = named(head) if head and tail else None
            if base is not None:
                for other, w in words.items():
                    if w and w[-1] == tail[-1] and other not in (name, base):
                        yield name, base, other


def _same(a: str, b: str) -> bool:
    return a == b or abbreviates(a, b) or abbreviates(b, a)


def _holds(
    con: duckdb.DuckDBPyConnection, table: str, target: str, left: str, right: str, op: str
) -> bool:
    t, a, b = qi(target), qi(left), qi(right)
    row = con.execute(
        f"SELECT count(*), count(*) FILTER (WHERE abs({t} - ({a} {op} {b})) <= {TOLERANCE}) "
        f"FROM {qi(table)} WHERE {t} IS NOT NULL AND {a} IS NOT NULL AND {b} IS NOT NULL"
    ).fetchone()
    if row is None or int(row[0]) < MIN_ROWS:
        return False
    return int(row[1]) >= IDENTITY_SHARE * int(row[0])
