"""What a task family produces (drafts) and what it may look at (the card, through `CardView`).

A family proposes `Draft`s: a reference query (a sqlglot tree), optionally a naive neighbour for
an awkward variant, the answer kind it expects, and the words the question is made of. It never
runs SQL itself except through `Context.lookup` (labels, candidate values), so the validation
rules (time limit, size bounds, two runs agree, top-k gap) are applied in one place
(`families.validate`).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp

from workgym.envs.warehouse.generate.phrasing import Lexicon
from workgym.envs.warehouse.runtime.answers import AnswerKind
from workgym.envs.warehouse.schema.card import ColumnCard, ForeignKeyCard, SchemaCard, TableCard
from workgym.envs.warehouse.schema.column_roles import is_time, surrogate
from workgym.envs.warehouse.schema.meaning import averageable, category, summable
from workgym.envs.warehouse.source.typemap import NUMERIC_FAMILIES

MAX_DIM_VALUES = 200  # a dimension used for filters or groups has at most this many values
FILTER_VALUES = 4  # top values tried per filter column


@dataclass
class Draft:
    """One candidate task before validation and phrasing."""

    family: str  # F1 .. F10
    shape: str  # the query shape within the family (count, top_by_avg, orphan_rows, ...)
    kind: AnswerKind
    slots: dict[str, str]
    tables: tuple[str, ...]
    sql: exp.Expression | None = None
    naive: exp.Expression | None = None
    awkward: str | None = None  # one of awkward.KINDS
    clauses: list[str] = field(default_factory=list)
    decimals: int | None = None
    k: int | None = None
    may_be_empty: bool = False
    ordered: bool = False  # sql answers: the question declares an order
    answer_phrase: str = ""  # what the values are: "carrier codes", "rows with columns ..."
    static: Any = None  # gold submission for tasks without SQL (F8, F10)
    columns: list[str] = field(default_factory=list)  # F8: accepted table.column answers
    check_sql: exp.Expression | None = None  # F10: must return one row whose value is true
    min_rows: int = 1
    max_rows: int = 1
    nonzero: bool = False  # scalar answers: a zero result is not a useful task
    note: str = ""  # what the awkward variant tests, for the record
    sql_fallback: int = 0  # keys: above max_rows (and up to this), ask for an SQL answer instead
    sql_phrase: str = ""  # what the SQL answer returns, when the fallback applies
    declared: list[str] = field(default_factory=list)  # answer values the question itself names
    # Filters that matter (issue 40): a query counting the outer set of an anti-join, whose
    # answer must stay under `validate.VACUOUS_SHARE` of it; a share that must be strictly
    # between 0% and 100% (a total condition, city -> country, asks nothing).
    outer_sql: exp.Expression | None = None
    proper_share: bool = False
    # A count's population before the question's conditions: a count holding 95% or more of
    # it (a condition nearly every row meets) or a single row (a lookup) asks nothing.
    population_sql: exp.Expression | None = None

    @property
    def key(self) -> str:
        """Identity of the question's content (not its phrasing), for de-duplication."""
        if self.sql is not None:
            return f"{self.family}|{self.sql.sql(dialect='duckdb')}"
        return f"{self.family}|{self.shape}|{sorted(self.slots.items())}"


Lookup = Callable[[str], list[tuple[Any, ...]]]


@dataclass
class Context:
    """What a family sees: the card, words for it, a seeded rng, read-only lookups, a log."""

    card: SchemaCard
    lexicon: Lexicon
    rng: random.Random
    lookup: Lookup
    skipped: list[str] = field(default_factory=list)

    @property
    def view(self) -> CardView:
        return CardView(self.card)

    def skip(self, family: str, reason: str) -> None:
        """Record why something was not drafted, once (generators of one family share
        lookups, e.g. F4's periods, and would repeat the reason)."""
        entry = f"{family}: {reason}"
        if entry not in self.skipped:
            self.skipped.append(entry)


Family = Callable[[Context], Iterator[Draft]]


class CardView:
    """Questions a generator asks of the card: which columns can filter, group, aggregate."""

    def __init__(self, card: SchemaCard) -> None:
        self.card = card

    def tables(self) -> list[TableCard]:
        return list(self.card.tables)

    def facts(self) -> list[TableCard]:
        """Tables whose rows are events to count, total and trend. A snapshot (stock levels by
        date) is left out: counting its rows counts item-weeks, not anything that happened,
        and no family asks a snapshot's own questions yet (the level on a date)."""
        facts = [t for t in self.card.tables if t.role == "fact" and t.grain != "snapshot"]
        return facts or sorted(self.card.tables, key=lambda t: -t.rows)[:1]

    def dims(self, table: TableCard) -> list[ColumnCard]:
        """Columns whose top values make readable filters and groups (never a surrogate key:
        "reason sk is 2" names a row by its number; joins name it by its label instead)."""
        out = []
        fk_cols = {c for f in self.card.foreign_keys if f.table == table.name for c in f.columns}
        for c in table.columns:
            if c.free_text or c.family not in ("string", "integer", "boolean"):
                continue
            if surrogate(table, c, c.name in fk_cols):
                continue
            if is_time(c) or c.role == "measure" or not category(c):
                continue  # a count of games or an amount is no category (issue 40)
            if not 2 <= c.distinct_count <= MAX_DIM_VALUES:
                continue
            if c.top_values and any(v.value is not None for v in c.top_values):
                out.append(c)
        return out

    def measures(self, table: TableCard, *, nullable: bool | None = None) -> list[ColumnCard]:
        out = []
        for c in table.columns:
            if c.role != "measure" or c.family not in NUMERIC_FAMILIES or c.encoding:
                continue
            if c.distinct_count < 3 or not averageable(table, c):
                continue  # no average of a day of month, a code or an identifier
            if nullable is not None and (c.null_count > 0) != nullable:
                continue
            out.append(c)
        return out

    def nullable(self, table: TableCard) -> list[ColumnCard]:
        return [c for c in table.columns if c.null_count > 0]

    def fks_from(self, table: str) -> list[ForeignKeyCard]:
        return [f for f in self.card.foreign_keys if f.table == table and len(f.columns) == 1]

    def fks(self) -> list[ForeignKeyCard]:
        return [f for f in self.card.foreign_keys if len(f.columns) == 1]

    def label_column(self, table: TableCard) -> ColumnCard | None:
        """A column that names a row (name, *_name, title), used to label codes."""
        return table.label_column()

    def time_parts(self, table: TableCard) -> dict[str, ColumnCard]:
        parts = {}
        for c in table.columns:
            low = c.name.lower()
            if low in ("year", "month", "day", "hour") and c.family == "integer" and is_time(c):
                parts[low] = c
        return parts

    def timestamps(self, table: TableCard) -> list[ColumnCard]:
        return [c for c in table.columns if c.family in ("timestamp", "date")]

    def hhmm(self, table: TableCard) -> list[ColumnCard]:
        return [c for c in table.columns if c.encoding == "hhmm"]


def top_values(col: ColumnCard, n: int = FILTER_VALUES) -> list[Any]:
    return [v.value for v in col.top_values if v.value is not None][:n]


def threshold(col: ColumnCard, quantile: str) -> int | float | None:
    """A readable threshold at a quantile of a numeric column (a round number near it)."""
    if not col.quantiles or quantile not in col.quantiles:
        return None
    q = col.quantiles[quantile]
    if col.family == "integer":
        step = 10 if abs(q) >= 50 else (5 if abs(q) >= 10 else 1)
        return int(round(q / step) * step)
    return round(q, 1)


# Quantities whose total means nothing (a sum of latitudes or temperatures): averaged, never summed.
NOT_ADDITIVE = (
    "lat", "lon", "lng", "latitude", "longitude", "alt", "altitude", "temp", "temperature",
    "dewp", "dew", "humid", "humidity", "pressure", "dir", "direction", "visib", "visibility",
    "speed", "year", "rate", "ratio", "pct", "percent", "tz", "offset", "gmt", "seq", "dom",
    "moy", "qoy", "dow",
)  # fmt: skip


def additive(col: ColumnCard) -> bool:
    """Whether a total of this measure is meaningful: by its meaning (an amount or a count of
    events, schema/meaning.py) and by the words of its name."""
    from workgym.envs.warehouse.generate.phrasing import split_identifier

    words = set(split_identifier(col.name))
    by_name = not words & set(NOT_ADDITIVE) and col.name.lower() not in NOT_ADDITIVE
    return by_name and summable(col)


def total_answer(col: ColumnCard) -> tuple[AnswerKind, int | None]:
    """(answer kind, decimals) of a total of this measure: whole numbers stay exact integers."""
    return ("integer", None) if col.family == "integer" else ("number", 2)
