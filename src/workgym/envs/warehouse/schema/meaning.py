"""What each column means and what one row of each table is (issue 40, "meaning first").

Roles (`column_roles`) say how a generator may treat a column; meanings say what its values
are, so that a question can be refused when it is meaningless for them: nobody sums a
day-of-month, averages a year, ranks the values of a count of games as categories or calls the
open end of a versioned record "missing". Every meaning comes from the card alone (names,
types and the profiled data), so old cards can be typed again after loading.

Column meanings:
- additive_measure: a quantity whose sum means something (amounts, distances, durations);
- nonadditive_measure: a level, price, rate or coordinate (averages and extremes, never sums);
- count: a count of events held in a column (`games`, `quantity`, `n_orders`): summed when the
  row is not the event, never ranked as a category;
- calendar_part: a part of a date held as a number (year, month, day of month, day of week,
  hour, quarter, week): grouped and filtered, never summed or averaged;
- time_point: a date, a timestamp, a clock time or a yyyymmdd integer;
- identifier: a key of its own table or a reference to another (surrogate or natural), or a
  column whose values are its own table's keys though nothing declares it (`own_key_refs`);
- code: a category held as a short text or a small integer (carrier, status, type);
- label: text that names a row (name, title, description);
- flag: two values, yes or no;
- text: free prose.

Table grains (None where the card cannot tell):
- versioned_entity: valid-from / valid-to dates (SCD2 rec_start_date / rec_end_date): several
  rows per entity, the current one with an open (NULL) end;
- link: a bridge between other tables;
- entity_period: an entity per period (person-season, organisation-year): a calendar part or
  period column next to a reference, and no point in time;
- event: a row at a point in time (a flight, a sale, an hourly reading), its own or reached
  through a key into a date dimension (TPC-DS ss_sold_date_sk);
- snapshot: a stock level per entity and date (TPC-DS inventory: an item in a warehouse in a
  week, with its quantity on hand): its rows are no events, and its levels add up over
  entities, never over time;
- entity: a keyed row others refer to (a carrier, an item, a customer).
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Sequence

from workgym.envs.warehouse.schema.card import (
    ColumnCard,
    ColumnMeaning,
    ForeignKeyCard,
    SchemaCard,
    TableCard,
    TableGrain,
    TimeLinkCard,
)
from workgym.envs.warehouse.schema.column_roles import (
    TIME_UNITS,
    id_like,
    is_text_date,
    is_time,
    is_yyyymmdd,
    versioned_columns,
)
from workgym.envs.warehouse.schema.naming import stem
from workgym.envs.warehouse.source.typemap import NUMERIC_FAMILIES, TEMPORAL_FAMILIES

# Calendar parts beyond column_roles.TIME_UNITS: TPC-DS abbreviations (d_dom, d_moy, d_qoy,
# d_fy_year) and common spellings; a name ending in one of these, in range, is a calendar part.
CALENDAR_PARTS: dict[str, tuple[int, int]] = {
    **TIME_UNITS,
    "dom": (1, 31), "moy": (1, 12), "qoy": (1, 4), "yr": (1000, 3000), "yearid": (1000, 3000),
    "birthday": (1, 31), "birthmonth": (1, 12), "birthyear": (1000, 3000),
    "deathday": (1, 31), "deathmonth": (1, 12), "deathyear": (1000, 3000),
    "season": (1000, 3000), "day_of_week": (0, 7), "day_of_month": (1, 31),
}  # fmt: skip
# Words that name a count of events (a column holding how many times something happened).
COUNT_WORDS = frozenset({
    "count", "cnt", "counts", "qty", "quantity", "games", "matches", "visits", "wins", "losses",
    "goals", "appearances", "orders", "trips", "calls", "passengers", "attempts", "births",
    "deaths", "cases", "tickets", "transactions", "hits", "runs", "errors",
})  # fmt: skip
# Words that make a number a level rather than an amount: its sum means nothing.
NONADDITIVE_WORDS = frozenset({
    "price", "rate", "ratio", "pct", "percent", "percentage", "avg", "average", "mean", "median",
    "temp", "temperature", "humidity", "humid", "dewp", "pressure", "speed", "lat", "latitude",
    "lon", "lng", "longitude", "altitude", "alt", "elevation", "score", "rating", "age",
    "balance", "dir", "gust", "precip", "visib", "tz", "offset", "share", "index",
})  # fmt: skip
CODE_WORDS = frozenset({
    "code", "cd", "type", "status", "category", "class", "kind", "group", "state",
})  # fmt: skip
LABEL_WORDS = frozenset(["name", "title", "desc", "description", "label"])
FLAG_VALUES = ({0, 1}, {"Y", "N"}, {"y", "n"}, {"yes", "no"}, {"true", "false"}, {"T", "F"})
MAX_CODE_VALUES = 200  # a text with more distinct values than this, mostly distinct, is a label


def words(name: str) -> list[str]:
    """A column name's words: snake_case, camelCase and digits split, lower-cased."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    return [w for w in re.split(r"[^A-Za-z0-9]+", spaced.lower()) if w]


def _in_range(col: ColumnCard, lo: int, hi: int) -> bool:
    low, high = col.min, col.max
    if isinstance(low, bool) or isinstance(high, bool):
        return False
    lo_ok = not isinstance(low, int | float) or low >= lo
    hi_ok = not isinstance(high, int | float) or high <= hi
    return lo_ok and hi_ok


def is_calendar_part(col: ColumnCard) -> bool:
    """An integer that is a part of a date: year, month, day of month, weekday, hour, quarter."""
    if col.family != "integer" or col.encoding == "hhmm" or is_yyyymmdd(col):
        return False
    low = col.name.lower()
    parts = words(col.name)
    for unit, (lo, hi) in CALENDAR_PARTS.items():
        glued = low == unit or low.endswith("_" + unit) or low.replace("_", "") == unit
        if glued or (parts and parts[-1] == unit) or (len(parts) > 1 and parts[0] == unit):
            return _in_range(col, lo, hi)
    return False


def is_flag(col: ColumnCard) -> bool:
    if col.family == "boolean":
        return True
    if col.distinct_count != 2 or len(col.top_values) != 2:
        return False
    values = {v.value for v in col.top_values}
    return any(values == f for f in FLAG_VALUES)


def _is_count(col: ColumnCard) -> bool:
    if col.family != "integer" or (isinstance(col.min, int) and col.min < 0):
        return False
    parts = words(col.name)
    if not parts:
        return False
    if parts[-1] in COUNT_WORDS or "_".join(parts[-2:]) in COUNT_WORDS:
        return True
    return len(parts) > 1 and parts[0] in ("n", "num", "number")  # n_orders, number_of_x


def column_meaning(table: TableCard, col: ColumnCard, is_fk: bool, keys: set[str]) -> ColumnMeaning:
    """What `col` of `table` means (see the module docs), from its name, type and profile."""
    if col.family in TEMPORAL_FAMILIES or col.encoding == "hhmm":
        return "time_point"
    if is_yyyymmdd(col) or is_text_date(col):
        return "time_point"
    if is_calendar_part(col):
        return "calendar_part"
    if col.name in keys or is_fk or id_like(table, col) or col.name in table.own_key_refs:
        return "identifier"
    if is_flag(col):
        return "flag"
    parts = set(words(col.name))
    if col.family in NUMERIC_FAMILIES or col.family == "interval":
        if is_time(col):  # an in-range unit column_roles knows and CALENDAR_PARTS spells alike
            return "calendar_part"
        if _is_count(col):
            return "count"
        if parts & NONADDITIVE_WORDS:
            return "nonadditive_measure"
        if parts & CODE_WORDS or (col.family == "integer" and col.role == "dimension"):
            return "code"
        return "additive_measure"
    if col.family == "string":
        label = table.label_column()
        if (label is not None and label.name == col.name) or parts & LABEL_WORDS:
            return "label"
        if col.free_text:
            return "text"
        if parts & CODE_WORDS:
            return "code"
        mostly_distinct = col.distinct_count > MAX_CODE_VALUES and (
            col.distinct_count * 2 > table.rows - col.null_count
        )
        return "label" if mostly_distinct else "code"
    return "code"


def table_grain(table: TableCard, linked: bool, timed: bool = False) -> TableGrain | None:
    """What one row of `table` is (see the module docs); None where the card cannot tell.
    `linked`: other tables refer to this one; `timed`: it reaches a date through a key."""
    if versioned_columns(table):
        return "versioned_entity"
    if table.role == "bridge":
        return "link"
    meanings = {c.name: c.meaning for c in table.columns}
    has_point = timed or any(m == "time_point" for m in meanings.values())
    has_period = any(
        m == "calendar_part" and words(n)[-1] in ("year", "yearid", "season", "yr")
        for n, m in meanings.items()
    )
    refs = any(m == "identifier" for m in meanings.values())
    if has_period and not has_point and refs and not linked:
        return "entity_period"
    if has_point and table.role == "fact":
        return "snapshot" if _stock_levels(table) else "event"
    if table.role == "dimension" and table.single_keys():
        return "entity"
    if has_point:
        return "event"
    return None


def is_grid(table: TableCard) -> bool:
    """Every combination of the table's attributes, one row each: an enumeration of profiles,
    not things that occurred. TPC-DS's household_demographics is 20 income bands x 6 buy
    potentials x 10 dependant counts x 6 vehicle counts = 7,200 rows. "Which profiles does no
    'Dr.' customer use?" lists hundreds of grid cells, and round 11's judge called three such
    questions meaningless (#16-18). The evidence is in the profile: the distinct counts of the
    non-key columns multiply to the row count, with at least two attributes, none NULL and none
    unique."""
    keys = table.single_keys()
    attrs = [c for c in table.columns if c.name not in keys]
    if len(attrs) < 2 or table.rows < 2:
        return False
    if any(c.null_count or not 2 <= c.distinct_count < table.rows for c in attrs):
        return False
    return math.prod(c.distinct_count for c in attrs) == table.rows


STOCK_WORDS = frozenset({"balance", "stock", "level", "inventory"})


def _stock_levels(table: TableCard) -> bool:
    """Every measure of the table is a level held at a date (`inv_quantity_on_hand`, a
    balance), not an amount that happened: the table is a snapshot (issue 40's round 7
    judged "the top item colors by number of inventory records" meaningless)."""
    kinds = ("additive_measure", "nonadditive_measure", "count")
    measures = [c for c in table.columns if c.meaning in kinds]

    def level(name: str) -> bool:
        parts = words(name)
        on_hand = ("on", "hand") in set(itertools.pairwise(parts))
        return on_hand or bool(set(parts) & STOCK_WORDS)

    return bool(measures) and all(level(c.name) for c in measures)


def ensure_meanings(card: SchemaCard) -> SchemaCard:
    """Type a card profiled before meanings existed (its columns' `meaning` is None), in place."""
    if any(c.meaning is None for t in card.tables for c in t.columns):
        assign_meanings(card.tables, card.foreign_keys, card.time_links)
    return card


def assign_meanings(
    tables: Sequence[TableCard],
    fks: Sequence[ForeignKeyCard],
    links: Sequence[TimeLinkCard] = (),
) -> None:
    """Set `meaning` on every column and `grain` on every table, in place (after roles and
    time links)."""
    fk_cols = {(f.table, c) for f in fks for c in f.columns}
    incoming = {f.ref_table for f in fks if f.ref_table != f.table}
    timed = {link.table for link in links if link.null_rate < 0.05}
    for table in tables:
        keys = table.single_keys()
        for col in table.columns:
            col.meaning = column_meaning(table, col, (table.name, col.name) in fk_cols, keys)
        table.grain = table_grain(table, table.name in incoming, table.name in timed)
    _per_unit_measures(tables)


ENTITY_GRAINS = ("entity", "versioned_entity")


def _per_unit_measures(tables: Sequence[TableCard]) -> None:
    """Amounts shown to be per unit are levels, not amounts (decision 0191).

    A column an identity shows to be per unit (`TableCard.per_unit`: `ext_X` = quantity x `X`)
    is a non-additive measure, and so is an entity's column of the same name without its table
    prefix (`i_wholesale_cost` beside store_sales' per-unit `ss_wholesale_cost`): an item's
    wholesale cost is a cost per unit too, and "the total wholesale cost of items" (round 12,
    TPC-DS #13) sums 1,029 unit costs into nothing. Line totals (`ss_ext_wholesale_cost`) stay
    additive. Without an identity nothing changes: a `cost` may well be a total."""
    per_unit = {stem(t, name) for t in tables for name in t.per_unit}
    if not per_unit:
        return
    for table in tables:
        for col in table.columns:
            if col.meaning != "additive_measure":
                continue
            own = col.name in table.per_unit
            sibling = table.grain in ENTITY_GRAINS and stem(table, col.name) in per_unit
            if own or sibling:
                col.meaning = "nonadditive_measure"


# -- what a family may ask of a column (issue 40, "meaning first"; decision 0145) -------------
# Families ask these before drafting, so a meaningless question is never drafted; the lint's
# warning rules (runtime/lint.py) stay as the measurement of what slips through. A column of a
# card typed before meanings existed (meaning None) keeps the older, name-based behaviour.

SUMMABLE = frozenset({"additive_measure", "count"})
AVERAGEABLE = frozenset({"additive_measure", "nonadditive_measure", "count"})
NOT_CATEGORIES = frozenset({"count", "additive_measure"})
YEAR_WORDS = ("year", "yr", "yearid", "season")
# Counts of events named for what they count, preferred in this order when a row holds several.
EVENT_WORDS = ("games", "matches", "appearances", "visits", "trips", "orders", "calls")


def summable(col: ColumnCard) -> bool:
    """A total of this column means something: an additive amount or a count of events."""
    return col.meaning is None or col.meaning in SUMMABLE


def averageable(table: TableCard, col: ColumnCard) -> bool:
    """An average of this column means something: a measure or a count, or an entity's year
    (the average build year of planes is a fleet's age; an average season is nothing)."""
    if col.meaning is None or col.meaning in AVERAGEABLE:
        return True
    is_year = words(col.name)[-1:] in [[w] for w in YEAR_WORDS]
    return col.meaning == "calendar_part" and is_year and table.grain == "entity"


VERSION_WORDS = frozenset({"version", "ver", "revision", "rev"})


def category(col: ColumnCard) -> bool:
    """Its values may be groups or filter values: not a count of events nor an amount, and not
    a version string (versions of different things are no common categories: "the top 3
    target versions" ranked '12' first because five unrelated packages had a version 12;
    issue 40's judge called it meaningless)."""
    if words(col.name)[-1:] and words(col.name)[-1] in VERSION_WORDS:
        return False
    return col.meaning not in NOT_CATEGORIES


def event_count(table: TableCard) -> ColumnCard | None:
    """The column holding "how many events" when one row of `table` is not itself an event (an
    entity-period row with a `games` column): "number of games" is its sum, not a row count.
    None where the row is the event (a flight, a sale: count the rows)."""
    if table.grain != "entity_period":
        return None
    counts = [c for c in table.columns if c.meaning == "count" and c.null_count < table.rows]
    if not counts:
        return None

    def rank(c: ColumnCard) -> tuple[int, str]:
        last = words(c.name)[-1:]
        return (EVENT_WORDS.index(last[0]) if last and last[0] in EVENT_WORDS else 99, c.name)

    return min(counts, key=rank)


def candidate_key(table: TableCard, columns: Sequence[str], references: set[str]) -> bool:
    """Whether `columns` can be a key of `table`, so that a repeat is a defect worth counting.

    Declared keys are; a versioned table's business id without its validity dates is not (it
    repeats once per version by design); columns that are all references of an event table are
    not (a return's date, time and item keys: unique in the data by chance); a column that is
    neither an identifier, a time nor a code is not (a measure repeats by nature); nor is a
    column holding other rows' keys (`own_key_refs`: many days share a same day last year)."""
    names = set(columns)
    if any(k.source == "declared" and set(k.columns) == names for k in table.keys):
        return True
    if names & set(table.own_key_refs):
        return False
    versions = versioned_columns(table)
    if table.grain == "versioned_entity" and (not names & versions or names <= versions):
        return False  # the business id alone, or validity dates alone (many start one day)
    if table.grain == "event" and names <= references:
        return False
    fine = {"identifier", "time_point", "calendar_part", "code", None}
    by_name = {c.name: c for c in table.columns}
    return all(n in by_name and by_name[n].meaning in fine for n in names)


CLOSING_WORDS = frozenset({"closed", "close", "end", "expiry", "until"})


# A column naming the row above in a hierarchy: NULL there is the top, whether or not the
# reference is declared (world_reference's subdivisions, round 7 #28-29).
PARENT_WORDS = frozenset({"parent", "superior", "manager", "ancestor"})


def null_means_current(table: TableCard, column: str, self_refs: set[str]) -> bool:
    """A NULL here is no missing data: the open end of a versioned row (the current version), a
    closing date not reached yet (a call centre's `cc_closed_date_sk`: still open) or a
    self-reference (the top of a hierarchy: the manager of the chief executive), declared or
    named as one (a subdivision's `parent_code`: a province with none is top-level)."""
    if column in self_refs:
        return True
    parts = set(words(column))
    if parts & PARENT_WORDS:
        return True
    if column in versioned_columns(table) and parts & {"end", "to", "expiry", "until"}:
        return True
    try:
        meaning = table.column(column).meaning
    except KeyError:
        return False
    return bool(parts & CLOSING_WORDS) and (meaning == "time_point" or "date" in parts)
