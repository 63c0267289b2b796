"""How a task reads: surface templates per family, and a lexicon built from the schema card.

A question is a surface template (3-6 per family) filled with slots the family computes. The
lexicon turns identifiers into words through schema/naming.py (`dep_delay` -> "departure delay"
where the comment says so, a table-wide prefix like `l_` dropped, glued words split), reads units
from column comments ("in minutes"), names table rows ("flights", "weather observations") and
labels codes through foreign keys ("UA (United Air Lines Inc.)"). `Lexicon.naturalize` rewrites
any raw identifier a family still printed in the prose into those words, so a question prints a
raw name only inside a `table.column` definition (F8, which asks for a column, is left alone).
Clauses that change the answer (rounding, time zone, population, ties, empty results) are always
spelled out, so a question has exactly one right answer under the verifier's semantics.

The template index is part of the task's template key (`F2.t3`): some templates of every family
are held out for the test split, so a policy cannot pass test by recognising a phrasing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from workgym.envs.warehouse.schema.card import ColumnCard, SchemaCard, TableCard
from workgym.envs.warehouse.schema.naming import (
    NEVER_EXPAND,
    Namer,
    column_words,
    count,
    split_words,
)

TEMPLATES: dict[str, list[str]] = {
    "F1": [
        "What is the {metric} of {rows} where {conds}?",
        "Compute the {metric} for {rows} for which {conds}.",
        "Among all {rows}, what is the {metric} of those where {conds}?",
        "Considering only {rows} for which {conds}, what is the {metric}?",
        "Report the {metric} of the {rows} where {conds}.",
    ],
    "F2": [
        "Which {k} {groups} have the highest {metric}{among}?",
        "List the top {k} {groups} by {metric}{among}.",
        "Rank the {groups} by {metric}{among} and give the first {k}.",
        "What are the {k} {groups} with the largest {metric}{among}?",
        "Find the {k} leading {groups} in terms of {metric}{among}.",
    ],
    "F3": [
        "What is the {metric} of {rows} where {conds}?",
        "Compute the {metric} over {rows} for which {conds}.",
        "Across {rows} for which {conds}, what is the {metric}?",
        "Give the {metric} for {rows} where {conds}.",
    ],
    "F4": [
        "By how much did the {metric}{among} change from {p1} to {p2}?",
        "What is the change in the {metric}{among} between {p1} and {p2}?",
        "Compare {p1} with {p2}: how did the {metric}{among} change?",
        "From {p1} to {p2}, what was the change in the {metric}{among}?",
    ],
    "F5": [
        "Among {rows}{among}, what percentage are those where {cond}?",
        "Of all {rows}{among}, what share (in percent) are those for which {cond}?",
        "In percent, how many of the {rows}{among} meet the condition that {cond}?",
        "Compute the proportion, in percent, of {rows}{among} for which {cond}.",
    ],
    "F6": [
        "Which {keys} have no {rows}{where}?",
        "List the {keys} with no {rows}{where}.",
        "Find every one of the {keys} that has no {rows}{where}.",
        "For which {keys} are there no {rows}{where}?",
    ],
    "F7": [
        "What is {quality}?",
        "Data check: report {quality}.",
        "For a data-quality review, compute {quality}.",
        "Measure {quality}.",
    ],
    "F8": [
        "Which column holds {concept}?",
        "Where in the warehouse is {concept} stored?",
        "In which table and column would you find {concept}?",
        "Name the column that records {concept}.",
    ],
    "F10": [
        "What is the {metric} of {rows}{where}?",
        "Compute the {metric} for {rows}{where}.",
        "Report the {metric} across {rows}{where}.",
        "I need the {metric} of {rows}{where}.",
    ],
}

# A count asked as an analyst asks it ("How many flights ...", not "What is the count of
# flights ..."): the same template index as TEMPLATES, so held-out templates stay held out.
COUNT_TEMPLATES: dict[str, list[str]] = {
    "F1": [
        "How many {rows} are there where {conds}?",
        "Count the {rows} for which {conds}.",
        "Among all {rows}, how many are there where {conds}?",
        "Considering only {rows} for which {conds}, how many are there?",
        "What is the number of {rows} where {conds}?",
    ],
    "F3": [
        "How many {rows} are there where {conds}?",
        "Count the {rows} for which {conds}.",
        "Across all {rows}, how many are there for which {conds}?",
        "Give the number of {rows} where {conds}.",
    ],
    "F10": [
        "How many {rows} are there{where}?",
        "Count the {rows}{where}.",
        "Report the number of {rows}{where}.",
        "I need the number of {rows}{where}.",
    ],
}
MONTHS = (
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
)  # fmt: skip
_UNIT = re.compile(
    r"\b(?:in|of) (minutes|hours|seconds|days|miles|feet|mph|inches|millibars|degrees|F|"
    r"USD|dollars|cents|percent)\b"
)
# Units a column's name may end in (`installed_size_kib`, `weight_kg`), as a reader writes them.
NAME_UNITS = {
    "kib": "KiB", "mib": "MiB", "gib": "GiB", "kb": "kB", "mb": "MB", "gb": "GB",
    "km": "km", "kg": "kg", "usd": "USD", "eur": "EUR", "pct": "percent", "ms": "milliseconds",
    "secs": "seconds", "mins": "minutes", "hrs": "hours",
}  # fmt: skip
_ZONE = re.compile(r"\b((?:America|Europe|Asia|Africa|Australia|Pacific|Atlantic)/[A-Za-z_]+)\b")


def split_identifier(name: str) -> list[str]:
    """`dep_delay` -> [dep, delay]; `schedDepTime` -> [sched, dep, time]; glued words split
    with the dictionary of schema/naming.py (`extendedprice` -> [extended, price])."""
    return split_words(name)


def words_for(table: TableCard, column: str) -> str:
    """The identifier of a column as words, without the table-wide prefix; an abbreviation is
    expanded only where the column's or table's comment spells it out (schema/naming.py)."""
    return column_words(table, column)


def unit_of(col: ColumnCard) -> str | None:
    if not col.comment:
        return None
    m = _UNIT.search(col.comment)
    return m.group(1) if m else None


def time_zone_in(table: TableCard) -> str | None:
    """An IANA zone named in the table's or its columns' comments (America/New_York)."""
    for text in [table.comment or ""] + [c.comment or "" for c in table.columns]:
        m = _ZONE.search(text)
        if m:
            return m.group(1)
    return None


def month_name(value: Any) -> str | None:
    if isinstance(value, int) and 1 <= value <= 12:
        return MONTHS[value - 1]
    return None


def format_number(value: Any) -> str:
    """A number as the question shows it: every digit the query's literal has (`:g` would show
    202679.4 as 202679, a different threshold), no float noise (15 significant digits)."""
    if isinstance(value, float):
        return f"{value:.15g}" if abs(value) < 1e15 else repr(value)
    return str(value)


Labeler = Callable[[str, str, Any], "str | None"]


class Lexicon:
    """Words for the card's identifiers and values; `labeler` labels codes through FKs."""

    def __init__(self, card: SchemaCard, labeler: Labeler | None = None) -> None:
        self.card = card
        self.labeler = labeler
        self.namer = Namer(card)
        self._tables: Mapping[str, TableCard] = {t.name: t for t in card.tables}
        # Families ask for the same columns thousands of times (TPC-DS's F3 drafts ask 21,722
        # times, each comparing all of a wide table's columns); the card does not change.
        self._columns: dict[tuple[str, str], str] = {}

    def column(self, table: str, column: str) -> str:
        """The column in words. When two columns of a table read alike (`tz` "timezone" and
        `tzone` "time zone"), each is named by its comment's first clause if that tells them
        apart, else by its qualified `table.column` (a definition, not prose)."""
        key = (table, column)
        if key not in self._columns:
            t = self._tables[table]
            phrase = self.namer.column(table, column)
            alike = [
                c.name for c in t.columns if same_words(self.namer.column(table, c.name), phrase)
            ]
            if len(alike) > 1:
                described = {c: self._comment_clause(table, c) for c in alike}
                mine = described[column]
                if mine and list(described.values()).count(mine) == 1:
                    phrase = mine
                else:
                    phrase = f"{phrase} ({table}.{column})"
            self._columns[key] = phrase
        return self._columns[key]

    def _comment_clause(self, table: str, column: str) -> str | None:
        comment = self._tables[table].column(column).comment
        if comment:
            text = re.split(r"[;(:]|, in |, format ", comment)[0].strip().rstrip(".,")
            if 0 < len(text) <= 60:
                return text[0].lower() + text[1:] if not text[:2].isupper() else text
        return None

    def naturalize(self, text: str, tables: Sequence[str] = (), *, qualify: bool = False) -> str:
        """`text` with every raw column or table identifier of the prose in words: a column of
        `tables` (or of any table) becomes its words, a table its rows ("not found in
        catalog_returns" -> "not found in catalog returns"). Quoted values and qualified
        `table.column` definitions are left alone; with `qualify`, a column is written as its
        `table.column` definition instead (answer instructions, which name what to return)."""
        order = [t for t in tables if t in self._tables]
        order += [t for t in self._tables if t not in order]
        owners: dict[str, str] = {}
        for t in order:
            for c in self._tables[t].columns:
                owners.setdefault(c.name, t)

        def swap(m: re.Match[str]) -> str:
            token = m.group(0)
            if m.group("kept") is not None or not (_raw_looking(token) or _rare(token)):
                return token  # a definition, or an English word that happens to be a name
            if token in owners:
                table = owners[token]
                if qualify:
                    return f"{table}.{token}" if _raw_looking(token) else token
                words = self.column(table, token)
                return words if words.lower() != token.lower() else token
            if token in self._tables and not qualify and _raw_looking(token):
                return self.rows(token)  # a plain word (`inventory`) is already prose
            return token

        return _TOKENS.sub(swap, text)

    def referenced(self, table: str, column: str, ref_table: str, ref_column: str) -> str:
        """The row a foreign key reaches, as a noun a question can use in a possessive: "the
        plane" (flights.tailnum -> planes.tailnum), "the country" (country_code -> alpha_2),
        "the origin airport" (origin -> faa), "the sold date" (ss_sold_date_sk -> date_dim).
        Issue 40: "its tailnum refers to a plane whose ..." was key-path talk on every
        warehouse judged; an analyst writes "flights whose plane's manufacturer is ...".
        The role is kept where it says which of several references is meant (origin or
        destination), dropped where it only repeats the key's name; of a role's words only the
        English ones are kept (an abbreviation such as `cdemo` reads worse than the table's
        own name)."""
        noun = self.row(ref_table)
        if noun.endswith(" record"):
            noun = noun[: -len(" record")]
        role = self.column(table, column).lower()
        if same_words(role, self.column(ref_table, ref_column)):
            return noun
        parts = role.split(" ")
        while parts and parts[-1] in _KEY_WORDS:
            parts.pop()
        kept = " ".join(parts)
        plural = self.rows(ref_table)
        low = noun.lower()  # an acronym's case ("vertical CRS") is no other word
        if not kept or kept in (low, plural.lower()) or low.endswith(" " + kept) or "(" in kept:
            return noun
        # the role ends in the table's name: its head is the role
        for said in (low, plural.lower()):
            if kept.endswith(" " + said):
                return f"{kept[: -len(said)]}{noun}"
        if kept.split(" ")[-1] == low.split(" ")[-1]:
            return kept
        common = [w for w in parts if count(w) >= ROLE_WORD_COUNT]
        # abbreviations dropped, the English words of the role kept: `cs_bill_cdemo_sk` ->
        # "bill customer demographic", beside `cs_ship_cdemo_sk`'s "ship customer demographic"
        return f"{' '.join(common)} {noun}" if common else noun

    def number_of(self, table: str, column: str) -> str:
        """ "number of games" for a count-of-events column; a column already named so
        (`change_count`: "number of changes") is not "number of number of changes"."""
        words = self.column(table, column)
        return words if words.startswith("number of ") else f"number of {words}"

    def total(self, table: str, column: str) -> str:
        """ "total X" for a sum, said once: Chinook's `invoice.total` is "total", not "total
        total" (round 10's blind judge)."""
        what = self.column_with_unit(table, column)
        return what if what.split(" ")[0] == "total" else f"total {what}"

    def column_with_unit(self, table: str, column: str) -> str:
        """The column and its unit: from its comment ("in minutes"), or from a unit its name
        ends in (`installed_size_kib` -> "installed size (in KiB)", not "installed size kib")."""
        unit = unit_of(self._tables[table].column(column))
        phrase = self.column(table, column)
        *head, last = phrase.split(" ")
        if unit is None and head and last.lower() in NAME_UNITS:
            return f"{' '.join(head)} (in {NAME_UNITS[last.lower()]})"
        return f"{phrase} (in {unit})" if unit else phrase

    def describe(self, table: str, column: str) -> str:
        """The column's meaning in words: its comment's first clause when short, else its name."""
        comment = self._tables[table].column(column).comment
        if comment:
            text = re.split(r"[;(]|, in |, format ", comment)[0].strip().rstrip(".,")
            if 0 < len(text) <= 60:
                return text[0].lower() + text[1:] if not text[:2].isupper() else text
        return self.column(table, column)

    def rows(self, table: str) -> str:
        return self.namer.rows(table)[1]

    def row(self, table: str) -> str:
        return self.namer.rows(table)[0]

    def value(self, table: str, column: str, value: Any) -> str:
        """A value as the question shows it: strings quoted, codes labelled, months named."""
        if isinstance(value, str):
            label = self.labeler(table, column, value) if self.labeler else None
            shown = f"'{value}'"
            if label and label != value:
                return f"{shown} ({label})"
            if _SNAKE_TOKEN.fullmatch(value):
                # a stored token in words first, its spelling after: "de facto official
                # ('de_facto_official')"; round 16's blind judge read the bare token as a raw
                # name three times (world_reference #9, #11, #13; decision 0197)
                return f"{value.replace('_', ' ')} ({shown})"
            return shown
        if isinstance(value, bool):
            return "true" if value else "false"  # a flag reads as a word, not Python's True
        if column.lower() == "month" and month_name(value):
            return f"{value} ({month_name(value)})"
        label = self.labeler(table, column, value) if self.labeler else None
        text = format_number(value)
        return f"{text} ({label})" if label else text

    def condition(
        self, table: str, column: str, op: str, value: Any = None, owner: str | None = None
    ) -> str:
        """One predicate in words, e.g. "carrier is 'UA' (United Air Lines Inc.)"; with an
        `owner`, about that row: "the plane's manufacturer is 'BOEING'"."""
        card = self._tables[table].column(column)
        if card.family == "boolean" and isinstance(value, bool) and op in ("=", "!="):
            return _flag(owner or f"the {self.row(table)}", self.column(table, column),
                         value == (op == "="))  # fmt: skip
        said = self._condition(table, column, op, value)
        return f"{owner}'s {said}" if owner else said

    def _condition(self, table: str, column: str, op: str, value: Any = None) -> str:
        name = self.column(table, column)
        if op == "is_null":
            return f"no recorded {name}"
        if op == "not_null":
            return f"a recorded {name}"
        card = self._tables[table].column(column)
        unit = unit_of(card)
        suffix = f" {unit}" if unit else ""
        shown = self.value(table, column, value)
        words = {
            "=": "is",
            "!=": "is not",
            ">": "is greater than",
            ">=": "is at least",
            "<": "is less than",
            "<=": "is at most",
        }
        if op == "=" or op == "!=":
            return f"{name} {words[op]} {shown}"
        share = _share_of(name, card)
        if share is not None and not suffix:
            return f"{share} {words[op]} {shown}%"
        return f"{name} {words[op]} {shown}{suffix}"


_SNAKE_TOKEN = re.compile(r"[a-z]+(?:_[a-z]+)+")


def _share_of(name: str, card: ColumnCard) -> str | None:
    """ "the share of the population" for a column named "population percent" whose values are
    percentages (0-100, not fractions such as TPC-DS's tax percentage of 0.00-0.11). "Population
    percent is greater than 31" read the column out (round 16's blind judge, world_reference,
    four times; decision 0197); "the share of the population is greater than 31%" says it."""
    *head, last = name.split(" ")
    if not head or last not in ("percent", "percentage"):
        return None
    low, high = card.min, card.max
    numeric = all(isinstance(v, int | float) and not isinstance(v, bool) for v in (low, high))
    if not numeric or not 0 <= low <= high <= 100 or high <= 1:  # type: ignore[operator]
        return None
    return f"the share of the {' '.join(head)}"


def _flag(owner: str, name: str, on: bool) -> str:
    """A yes/no column as an analyst says it, about its row: "the territory currency is legal
    tender", "the customer is not active" (`is_active`), "the person has children"
    (`has_children`). Round 7 judged "legal tender is true" stilted, and round 9's blind judge
    "legal tender flag is set" too: both read the column out instead of saying what it means."""
    words = [w for w in name.split(" ") if w != "flag"] or ["flagged"]
    verb = "is"
    if words[0] in ("is", "has") and len(words) > 1:
        verb, words = words[0], words[1:]
    if verb == "has":
        return f"{owner} {'has' if on else 'does not have'} {' '.join(words)}"
    return f"{owner} {'is' if on else 'is not'} {' '.join(words)}"


# A role word this frequent is English ("origin", "ship", "current"), not an abbreviation
# ("cdemo", "addr") that would read worse than the referenced table's own name.
ROLE_WORD_COUNT = 5_000_000
_KEY_WORDS = frozenset({"id", "key", "code", "number", "num", "no", "sk", "ref", "fk"})

# Prose tokens, or a quoted value / qualified `table.column` kept as it is ("kept").
_TOKENS = re.compile(
    r"(?P<kept>'[^']*'|\"[^\"]*\"|`[^`]*`|\b[A-Za-z_][A-Za-z0-9_]*\.[A-Za-z_][A-Za-z0-9_]*\b)"
    r"|\b[A-Za-z_][A-Za-z0-9_]*\b"
)


def _raw_looking(token: str) -> bool:
    """snake_case, camelCase or glued (two dictionary words run together)."""
    if "_" in token.strip("_") or re.search(r"[a-z][A-Z]", token):
        return True
    return len(split_words(token)) > 1


def _rare(token: str) -> bool:
    """Not a very common English word (`dest`, `tailnum`; not `order`, `no`, `year`)."""
    return count(token) < NEVER_EXPAND


def same_words(a: str, b: str) -> bool:
    """The same words, spacing and case aside ("time zone" and "timezone")."""
    return a.replace(" ", "").lower() == b.replace(" ", "").lower()


# F3's totals over the rows a fact reaches, once each: the rows are picked by what they have,
# not by a condition after "where" ("packages where they have at least one package relation
# ..." was judged ungrammatical three times in round 18, debian #7, #8, #13; decision 0197).
# The same template index as TEMPLATES, so held-out templates stay held out.
HAVING_TEMPLATES: dict[str, list[str]] = {
    "F3": [
        "What is the {metric} of {rows} that have at least one {having}?",
        "Compute the {metric} over {rows} with at least one {having}.",
        "Across {rows} that have at least one {having}, what is the {metric}?",
        "Give the {metric} for {rows} with at least one {having}.",
    ],
}


def render(family: str, index: int, slots: Mapping[str, Any]) -> str:
    """Fill template `index` of `family`; a missing slot is a bug in the family, so it raises."""
    template = TEMPLATES[family][index]
    if slots.get("metric") == "count" and family in COUNT_TEMPLATES:
        template = COUNT_TEMPLATES[family][index]
    if "having" in slots and family in HAVING_TEMPLATES:
        template = HAVING_TEMPLATES[family][index]
    return template.format(**slots)


def template_count(family: str) -> int:
    return len(TEMPLATES[family])


def article(noun: str) -> str:
    return f"an {noun}" if noun[:1].lower() in "aeiou" else f"a {noun}"


def join_conditions(parts: list[str]) -> str:
    if not parts:
        return ""
    if len(parts) == 1:
        return parts[0]
    return ", ".join(parts[:-1]) + " and " + parts[-1]


def answer_instruction(
    kind: str,
    *,
    decimals: int | None = None,
    k: int | None = None,
    phrase: str = "",
    may_be_empty: bool = False,
) -> str:
    """The sentence that states the answer's form: kind, rounding, order, emptiness."""
    if kind == "integer":
        return 'Answer with submit_answer, kind "integer": a whole number.'
    if kind == "number":
        return (
            f'Answer with submit_answer, kind "number", rounded to {decimals} decimal places '
            "(half away from zero)."
        )
    if kind == "keys":
        empty = " If there are none, submit an empty list." if may_be_empty else ""
        return (
            f'Answer with submit_answer, kind "keys": the {phrase} as text, in any order, '
            f"each once.{empty}"
        )
    if kind == "top_k":
        return (
            f'Answer with submit_answer, kind "top_k": the {k} {phrase} as text, '
            "in rank order, first place first."
        )
    if kind == "column":
        return 'Answer with submit_answer, kind "column": the column as table.column.'
    if kind == "sql":
        return f'Answer with submit_answer, kind "sql": one read-only SELECT that returns {phrase}.'
    raise ValueError(f"no answer instruction for kind {kind!r}")


def compose(question: str, clauses: list[str], instruction: str) -> str:
    """The prompt: the question, then every clause that fixes the answer, then its form."""
    parts = [question.strip(), *[c.strip() for c in clauses if c.strip()], instruction]
    return " ".join(parts)


def make_labeler(card: SchemaCard, lookup: Callable[[str], list[tuple[Any, ...]]]) -> Labeler:
    """Label codes through foreign keys: flights.carrier 'UA' -> 'United Air Lines Inc.'.

    A code is labelled when its column references (or is) the key of a table with a name-like
    column; the referenced table's labels are fetched once, and only for tables small enough
    to be a dimension.
    """
    targets: dict[tuple[str, str], tuple[str, str]] = {}
    for fk in card.foreign_keys:
        if len(fk.columns) == 1:
            targets[(fk.table, fk.columns[0])] = (fk.ref_table, fk.ref_columns[0])
    for t in card.tables:
        for key in t.single_keys():
            targets.setdefault((t.name, key), (t.name, key))
    labels: dict[tuple[str, str], dict[Any, str]] = {}

    def labeler(table: str, column: str, value: Any) -> str | None:
        target = targets.get((table, column))
        if target is None:
            return None
        if target not in labels:
            ref = next(t for t in card.tables if t.name == target[0])
            named = ref.label_column()
            labels[target] = {}
            if named is not None and ref.rows <= 50_000:
                q = (
                    f'SELECT "{target[1]}", "{named.name}" FROM "{ref.name}" '
                    f'WHERE "{named.name}" IS NOT NULL'
                )
                labels[target] = {k: str(v) for k, v in lookup(q)}
        return labels[target].get(value)

    return labeler
