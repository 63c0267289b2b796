"""The schema card: everything generators may know about a warehouse, as pydantic models.

Generators see only the card, never the source, so it carries what task families bind their
slots from (real top values, ranges, keys, join paths) and what awkward variants need (null
rates, string shapes, sentinels, near-duplicate keys, orphan counts). It is written next to the
snapshot as `schema_card.json` and names the snapshot it describes by fingerprint digest.

Values are JSON scalars: integers and booleans as themselves, decimals and floats as numbers,
everything else (dates, timestamps, strings, uuids) as the text DuckDB prints for them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

Scalar = bool | int | float | str | None
ColumnRole = Literal["measure", "dimension", "time", "identifier"]
TableRole = Literal["fact", "dimension", "bridge"]
# What a column's values are and what one row is (schema/meaning.py); None in older cards.
ColumnMeaning = Literal[
    "additive_measure", "nonadditive_measure", "count", "calendar_part", "time_point",
    "identifier", "code", "label", "flag", "text",
]  # fmt: skip
TableGrain = Literal["event", "entity", "entity_period", "versioned_entity", "link", "snapshot"]

CARD_FILE = "schema_card.json"


class ValueCount(BaseModel):
    value: Scalar
    count: int


class ColumnCard(BaseModel):
    name: str
    type: str
    family: str
    source_type: str
    comment: str | None = None
    role: ColumnRole = "dimension"
    meaning: ColumnMeaning | None = None  # schema/meaning.py; None in cards made before it
    null_count: int
    null_rate: float
    distinct_count: int
    min: Scalar = None
    max: Scalar = None
    mean: float | None = None
    quantiles: dict[str, float] | None = None  # numerics: p01 .. p99
    top_values: list[ValueCount] = Field(default_factory=list)
    samples: list[Scalar] = Field(default_factory=list)
    # String-shape classes -> rows (only classes that occur): numeric_text, date_iso, date_slash,
    # date_named_month, padded, inner_spaces, case_space_variant, empty, sentinel.
    shapes: dict[str, int] = Field(default_factory=dict)
    sentinels: list[ValueCount] = Field(default_factory=list)
    variants: list[list[str]] = Field(default_factory=list)  # spellings of one normalized value
    free_text: bool = False  # most values contain spaces: prose, never a key
    # "hhmm": integer clock times such as 517 for 05:17; "iso_text": every value is an ISO date
    # or timestamp held as text (a SQLite file's dates)
    encoding: str | None = None


class KeyCard(BaseModel):
    """Columns that identify rows. `source` says whether the source declared it."""

    columns: list[str]
    source: Literal["declared", "data"]
    duplicate_rows: int = 0  # rows beyond the first for each repeated key value
    null_rows: int = 0


class ForeignKeyCard(BaseModel):
    table: str
    columns: list[str]
    ref_table: str
    ref_columns: list[str]
    source: Literal["declared", "inferred"]
    evidence: Literal["declared", "name", "values", "sibling"]
    coverage: float  # share of distinct non-null values found in the referenced key
    row_coverage: float  # share of non-null rows whose value is found
    orphan_values: int
    orphan_rows: int
    # Why an inferred key is trusted or only a candidate (schema/relations.py, `trust`):
    # "documented" (its comment names the referenced table), "names and coverage", or the
    # reason it is a candidate ("value coverage 0.82 < 0.99"). None on declared keys.
    trust: str | None = None


class TimeLinkCard(BaseModel):
    """Time reached through a key: `table.column` references `dim.key`, whose row carries the
    date (TPC-DS ws_sold_date_sk -> date_dim.d_date). `min`/`max` are the dates the fact's rows
    actually reach; `resolved` the share of non-NULL keys that find their date.

    `via` says what the referenced table is: "dimension", a calendar whose date is unique (one
    row per day), or "header", the header of a header/line pair (order_lines.order_id ->
    orders.order_date, many orders a day): the line inherits its header's date. Cards written
    before headers counted have no `via` and read as "dimension"."""

    table: str
    column: str
    dim: str
    key: str
    time_column: str
    family: str  # date or timestamp
    min: str
    max: str
    null_rate: float
    resolved: float
    # When the date is the key counted in days from an anchor (TPC-DS d_date_sk is a Julian day
    # number), date = anchor_date + (key - anchor_key) days: arithmetic instead of a lookup.
    anchor_key: int | None = None
    anchor_date: str | None = None
    via: Literal["dimension", "header"] = "dimension"


class TableCard(BaseModel):
    name: str
    kind: str = "table"
    comment: str | None = None
    role: TableRole = "fact"
    grain: TableGrain | None = None  # what one row is (schema/meaning.py); None: not told
    rows: int
    source_rows: int
    sample_fraction: float | None = None
    columns: list[ColumnCard]
    keys: list[KeyCard] = Field(default_factory=list)  # declared keys, then unique on the data
    near_keys: list[KeyCard] = Field(default_factory=list)  # unique but for a few duplicates
    # Abbreviations an identity in the rows spells out (`ext` -> extended): schema/identities.py
    abbreviations: dict[str, str] = Field(default_factory=dict)
    # Columns an identity shows to be per unit (`ext_X` = quantity x `X`: `X` is a unit price or
    # cost): their totals mean nothing (schema/identities.py, schema/meaning.py)
    per_unit: list[str] = Field(default_factory=list)
    # Columns whose values are this table's own keys though no constraint says so (TPC-DS
    # d_same_day_ly): references, never amounts (schema/own_key_values.py)
    own_key_refs: list[str] = Field(default_factory=list)

    def single_keys(self) -> set[str]:
        """Columns that alone identify rows (declared, or unique and non-NULL on the data)."""
        return {
            k.columns[0]
            for k in self.keys
            if len(k.columns) == 1 and (k.source == "declared" or k.duplicate_rows == 0)
        }

    def label_column(self) -> ColumnCard | None:
        """A column that names a row (name, *_name, title; else *_desc, label), used to label
        codes and to name a row instead of its surrogate key."""
        keys = self.single_keys()
        texts = [c for c in self.columns if c.family == "string" and c.name not in keys]
        for c in texts:
            low = c.name.lower()
            if "name" in low or low == "title":
                return c
        for c in texts:
            if c.name.lower().endswith(("_desc", "description", "label", "_title")):
                return c
        return None

    def column(self, name: str) -> ColumnCard:
        for c in self.columns:
            if c.name == name:
                return c
        raise KeyError(f"no column {name!r} in {self.name}; have {[c.name for c in self.columns]}")


class SchemaCard(BaseModel):
    version: int = 1
    source: str
    snapshot_digest: str
    tables: list[TableCard]
    foreign_keys: list[ForeignKeyCard] = Field(default_factory=list)  # declared or trusted
    # Inferred references the data does not confirm well enough: reported, never built on.
    candidate_foreign_keys: list[ForeignKeyCard] = Field(default_factory=list)
    time_links: list[TimeLinkCard] = Field(default_factory=list)
    issues: list[str] = Field(default_factory=list)

    def table(self, name: str) -> TableCard:
        for t in self.tables:
            if t.name == name:
                return t
        raise KeyError(f"no table {name!r} in the card; have {[t.name for t in self.tables]}")

    def time_link(self, table: str) -> TimeLinkCard | None:
        """The table's main time reached through a key (first in column order, mostly set)."""
        links = [t for t in self.time_links if t.table == table and t.null_rate < 0.05]
        if not links:
            return None
        order = [c.name for c in self.table(table).columns]
        return min(links, key=lambda t: order.index(t.column))

    def save(self, path: str | Path) -> Path:
        """Write JSON to `path` (a directory gets `schema_card.json`); return the file path."""
        target = Path(path)
        if target.is_dir():
            target = target / CARD_FILE
        target.write_text(self.model_dump_json(indent=2) + "\n")
        return target

    @classmethod
    def load(cls, path: str | Path) -> SchemaCard:
        source = Path(path)
        if source.is_dir():
            source = source / CARD_FILE
        return cls.model_validate_json(source.read_text())
