"""Natural names: a table or column identifier as the words a person would write (issue 40).

Questions are read by people and by models that should not be able to lean on the schema's
spelling, so a name is printed as words:
- snake_case, camelCase and digits are split (`dep_delay`, `schedDepTime`, `lgID`);
- a glued lower-case word is split with a word-frequency dictionary (`orderdate` -> order date,
  `tailnum` -> tail num), offline: the unigram counts of `wordsegment` (Apache-2.0, decision
  0140). A split is taken only when every part is a frequent word (or a word the schema itself
  uses), the whole is not itself a common word (`birthday`, `ordered` stay whole), and the
  parts together are likelier than the whole (`deprecation` is not "dep rec ation");
- a prefix shared by every column of a table (`ss_`, `d_`) is the schema's convention and is
  dropped, and so are the `dim` / `fact` words of a table name (`date_dim` rows are dates);
- an abbreviation is expanded only when the data supports the reading, never by guessing:
  1. the column's comment, then its table's comment, spells it out (`dep` with "Departure
     delay" -> departure; `tzone` with "IANA time zone" -> time zone; `dewp` with "Dewpoint");
  2. a reference names it: a foreign key column reads its word as the referenced table's
     (`ss_cdemo_sk` -> customer demographics, `sr_addr_sk` -> customer address);
  3. the values agree with a calendar abbreviation (`d_moy` in 1..12 -> month of year);
  anything else is kept as the column spells it (TPC-DS `cd_dep_count` -> "dep count": it
  counts dependents, not departures, and nothing in the data says so);
- a table's rows are the plural of its name in words (`package_relation` -> package relations,
  `person` -> people), "X records" only where English has no plural (decision 0181).
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from workgym.envs.warehouse.schema.card import ColumnCard, SchemaCard, TableCard

MIN_PART_COUNT = 1_000_000  # web-corpus count a part of a glued word needs (`visi` has 172k)
COMMON_WORD = 1_000_000  # a whole word at least this frequent is a word, not two glued ones
NEVER_EXPAND = 100_000_000  # words this common (day, time, name) are words, not abbreviations
RARE_SHORT = 10_000_000  # a sibling spells out only a word rarer than this (`amt`: 1.6M)
COUNTED_NOUN = 10_000_000  # `X_count` reads "number of Xs" for a word this common (change, link)
GLUE_MIN_LENGTH = 6  # shorter lower-case tokens are not split (dest, temp, faa)
SHORT_PARTS = frozenset({"of", "by", "to", "in", "on", "at", "id", "no", "per"})
TABLE_CONVENTION_WORDS = frozenset({"dim", "fact", "tbl"})
# Words that say "this is a table" at the end of a table's name: its rows are what comes
# before (`helmert_transformation_table` rows are Helmert transformations).
TABLE_SUFFIX_WORDS = frozenset({"table", "tab"})
# Calendar abbreviations, each accepted only when the column's values lie in the range.
CALENDAR_ABBREVIATIONS: dict[str, tuple[str, int, int]] = {
    "moy": ("month of year", 1, 12),
    "dom": ("day of month", 1, 31),
    "qoy": ("quarter of year", 1, 4),
    "dow": ("day of week", 0, 7),
    "doy": ("day of year", 1, 366),
    "woy": ("week of year", 1, 53),
}
KEY_WORDS = frozenset({"sk", "key", "id"})


@functools.cache
def _unigrams() -> Mapping[str, float]:
    """The dictionary: 333k English words with their web-corpus counts (loaded once, ~0.5 s)."""
    try:
        import wordsegment
    except ImportError as err:  # pragma: no cover - the warehouse extra installs it
        raise ImportError(
            "natural names need the word dictionary: pip install 'workgym[warehouse]'"
        ) from err
    # The unigram file only; its segmenter (with 258k bigrams) is loaded when a split is in doubt.
    counts: dict[str, float] = wordsegment.Segmenter.parse(wordsegment.Segmenter.UNIGRAMS_FILENAME)
    return counts


def count(word: str) -> float:
    """The word's count in the dictionary (0 when unknown)."""
    return _unigrams().get(word.lower(), 0.0)


def identifier_words(name: str) -> list[str]:
    """snake_case, camelCase, acronyms and digits split, lower-cased; no dictionary yet."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    spaced = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1 \2", spaced)
    spaced = re.sub(r"([A-Za-z])([0-9])|([0-9])([A-Za-z])", _space_digits, spaced)
    return [w for w in re.split(r"[^A-Za-z0-9]+", spaced.lower()) if w]


def _space_digits(m: re.Match[str]) -> str:
    return " ".join(g for g in m.groups() if g)


def unglue(token: str, known: Iterable[str] = (), *, whole: bool = False) -> list[str]:
    """A glued lower-case word split into its parts (`orderdate` -> [order, date]), or kept.

    Every part must be a frequent word, a short function word or a word in `known` (the
    schema's own words); the fewest parts win, then the most frequent. A common whole word is
    never split, unless `whole` asks for its parts anyway (`timezone` -> time, zone)."""
    if len(token) < GLUE_MIN_LENGTH or not token.isalpha():
        return [token]
    if count(token) >= COMMON_WORD and not whole:
        return [token]
    schema_words = set(known)
    n = len(token)
    best: list[tuple[int, float, list[str]] | None] = [None] * (n + 1)
    best[0] = (0, 0.0, [])
    for end in range(1, n + 1):
        for start in range(max(0, end - 20), end):
            prev = best[start]
            part = token[start:end]
            if prev is None or part == token or not _valid_part(part, schema_words):
                continue
            score = (prev[0] + 1, prev[1] - math.log(count(part) + 1.0), [*prev[2], part])
            current = best[end]
            if current is None or score[:2] < current[:2]:
                best[end] = score
    found = best[n]
    if found is None or found[0] < 2:
        return [token]
    if (
        not whole
        and _log_p(token) >= sum(_log_p(part) for part in found[2])
        and _segment(token) != found[2]
    ):
        # `deprecation` is likelier than "dep rec ation", `flattening` too; a compound the web
        # writes glued as often as its parts (`postalcode`, `firstname` as identifiers) is
        # split when the bigram segmenter reads the same parts (round 10: "billing postalcode")
        return [token]
    # a part the schema spells glued (`postalcode` beside `billingpostalcode`) splits too
    return [q for part in found[2] for q in unglue(part)]


@functools.cache
def _segment(token: str) -> list[str]:
    """`wordsegment`'s own reading of a glued word, with its bigram counts."""
    return list(_segmenter().segment(token))


@functools.cache
def _segmenter() -> Any:
    import wordsegment

    segmenter = wordsegment.Segmenter()
    segmenter.load()
    return segmenter


def _log_p(word: str) -> float:
    """The word's log probability as a unigram (add-one, so an unknown word is not -inf)."""
    return math.log((count(word) + 1.0) / _total())


@functools.cache
def _total() -> float:
    import wordsegment

    return float(wordsegment.Segmenter.TOTAL)


def _valid_part(part: str, schema_words: set[str]) -> bool:
    if part in SHORT_PARTS or (len(part) >= 2 and part in schema_words):
        return True
    return len(part) >= 3 and count(part) >= MIN_PART_COUNT


def split_words(name: str, known: Iterable[str] = ()) -> list[str]:
    """An identifier's words: split by case and punctuation, then glued words unglued."""
    schema_words = set(known)
    return [p for w in identifier_words(name) for p in unglue(w, schema_words)]


def expansion(word: str, evidence: Sequence[str]) -> str | None:
    """The words `word` abbreviates in one of the `evidence` texts, first text first; None when
    no text spells it out (or the word is itself written there, or is a very common word)."""
    if len(word) < 2 or not word.isalpha() or count(word) >= NEVER_EXPAND:
        return None
    for text in evidence:
        tokens = re.findall(r"[A-Za-z]+", text)
        lowered = [t.lower() for t in tokens]
        if word in lowered:  # the text uses the word itself: nothing to expand but its case
            shown = tokens[lowered.index(word)]
            return shown if len(shown) > 1 and shown.isupper() else None
        for k in (1, 2, 3):
            for i in range(len(tokens) - k + 1):
                span = lowered[i : i + k]
                if _abbreviates(word, span):
                    words = [_cased(t) for t in tokens[i : i + k]]
                    if k == 1:  # `auth` of "authorities" is an authority
                        words[0] = singular_word(words[0])
                    return " ".join(words)
    return None


def spelled_siblings(names: Iterable[list[str]], acronyms: Iterable[str] = ()) -> dict[str, str]:
    """Abbreviations the schema spells out in a sibling name: two names equal but for one word,
    one the other's abbreviation (TPC-DS `sr_return_amt` beside `cr_return_amount`: `amt` reads
    "amount" everywhere). The long form must be a common word and the short one a rare word
    that is no acronym (`date` is no abbreviation of "department", nor `CRS` of "conversion");
    an abbreviation with two readings is left as it is."""
    acronyms = set(acronyms)
    slots: dict[tuple[str, ...], set[str]] = {}
    for words in names:
        for i in range(len(words)):
            slots.setdefault((*words[:i], "*", *words[i + 1 :]), set()).add(words[i])
    readings: dict[str, set[str]] = {}
    for variants in slots.values():
        for short in variants:
            for full in variants:
                if (
                    short not in acronyms
                    and count(short) < RARE_SHORT
                    and count(full) >= COMMON_WORD
                    and _abbreviates(short, [full])
                ):
                    readings.setdefault(short, set()).add(full)
    return _one_reading(readings)


def table_initials(tables: Iterable[TableCard], known: Iterable[str] = ()) -> dict[str, str]:
    """Initials of a table's name of three words or more spell it out where a column uses them:
    EPSG's `uom_code` beside its `unit_of_measure` table reads "unit of measure code". Only a
    rare word (no English word that happens to match) with one table behind it."""
    found: dict[str, set[str]] = {}
    for t in tables:
        words = split_words(t.name, known)
        initials = "".join(w[0] for w in words)
        if len(words) >= 3 and count(initials) < RARE_SHORT:
            found.setdefault(initials, set()).add(" ".join(words))
    return _one_reading(found)


def _one_reading(readings: Mapping[str, set[str]]) -> dict[str, str]:
    """The words the evidence reads one way only (a word with two readings stays as it is)."""
    return {w: next(iter(r)) for w, r in readings.items() if len(r) == 1}


def singular_word(word: str) -> str:
    """A plural English word's singular (`authorities` -> authority); other words unchanged.
    An abbreviation in a name stands for the singular: `auth_name` is an authority's name.
    (`column_roles.singular` matches identifiers for key inference and stays as it is, so
    inferred keys do not move with prose.)"""
    if word.isupper() or len(word) < 3:
        return word
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("sses", "xes", "ches", "shes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def abbreviates(word: str, full: str) -> bool:
    """`word` is an abbreviation of the single word `full` (`amt` of amount, `qty` of quantity)."""
    return _abbreviates(word, [full])


def _abbreviates(word: str, span: list[str]) -> bool:
    if len(span) == 1:
        full = span[0]
        if len(full) < len(word) + 2 or full[0] != word[0]:
            return False
        if len(word) == 2:
            return _initials_inside(word, full)
        return full.startswith(word) or _subsequence(word, full)
    return _prefix_partition(word, span)


def _initials_inside(word: str, full: str) -> bool:
    """`tz` of `timezone`: the letters start the dictionary parts of the word."""
    parts = unglue(full, whole=True)
    return len(parts) == len(word) and all(p[0] == c for p, c in zip(parts, word, strict=True))


def _subsequence(word: str, full: str) -> bool:
    it = iter(full)
    return all(c in it for c in word)


def _prefix_partition(word: str, span: list[str]) -> bool:
    """`dst` of "daylight savings time", `tzone` of "time zone": consecutive prefixes."""
    if not span:
        return word == ""
    head, rest = span[0], span[1:]
    for cut in range(1, min(len(word), len(head)) + 1):
        if head.startswith(word[:cut]) and (
            _prefix_partition(word[cut:], rest) if rest else cut == len(word)
        ):
            return True
    return False


def _cased(token: str) -> str:
    """Acronyms keep their capitals (FAA, IANA); other words are lower-cased."""
    return token if len(token) > 1 and token.isupper() else token.lower()


def stem(table: TableCard, column: str) -> str:
    """Column name without a prefix shared by every column of its table (l_, ps_, ...)."""
    return _stem_cased(table, column).lower()


def _stem_cased(table: TableCard, column: str) -> str:
    """`stem` with the column's case kept: `playerID` splits at its capital, not by the
    dictionary (which finds "playerid" likelier whole)."""
    m = re.match(r"^([a-z]{1,3}_)", column.lower())
    if m and len(table.columns) > 1 and all(c.name.lower().startswith(m[1]) for c in table.columns):
        return column[len(m[1]) :]
    return column


def _calendar(word: str, col: ColumnCard | None) -> str | None:
    reading = CALENDAR_ABBREVIATIONS.get(word)
    if reading is None or col is None:
        return None
    low, high = col.min, col.max
    ok = all(isinstance(v, int) and not isinstance(v, bool) for v in (low, high))
    if ok and reading[1] <= int(low) and int(high) <= reading[2]:  # type: ignore[arg-type]
        return reading[0]
    return None


def column_words(
    table: TableCard,
    column: str,
    *,
    known: Iterable[str] = (),
    reference: str | None = None,
    acronyms: Iterable[str] = (),
    spelled: Mapping[str, str] | None = None,
) -> str:
    """A column's name in words: its table prefix dropped, glued words split, a trailing
    surrogate-key word dropped (`sold_date_sk` reads "sold date"), and each abbreviation
    expanded only from the column's comment, its table's comment or, for a reference, the
    referenced table's name (`reference`, already in words). `acronyms` are words the schema's
    table names use as acronyms (`crs`), printed in capitals as the tables' rows are."""
    col = next((c for c in table.columns if c.name == column), None)
    parts = split_words(_stem_cased(table, column), known)
    if len(parts) > 1 and parts[-1] == "sk":
        parts = parts[:-1]
    evidence = [t for t in (reference, col.comment if col else None, table.comment) if t]
    capitals = _acronyms(column) | set(acronyms)
    out: list[str] = []
    for word in parts:
        shown = word.upper() if word in capitals else word
        out.append(
            _calendar(word, col)
            or expansion(word, evidence)
            or table.abbreviations.get(word)
            or (spelled or {}).get(word)
            or shown
        )
    numbered = len(out) >= 2 and out[-1].isdigit() and out[-2].isalpha()
    if numbered and col is not None and col.meaning in ("code", "identifier"):
        # a code named by its scheme and a number is that scheme's code: ISO's `alpha_2` is
        # the "alpha-2 code" (round 11's blind judge, world_reference #29: "whose alpha 2
        # repeats" read the column out; decision 0196)
        return " ".join([*out[:-2], f"{out[-2]}-{out[-1]}", "code"])
    if len(out) == 2 and out[1] == "count" and count(out[0]) >= COUNTED_NOUN:
        # `change_count` is the number of changes (round 8: "the total change count" read the
        # column out); a rarer first word (`dep` of `cd_dep_count`) is kept as it is
        return f"number of {row_nouns(out[0])[1]}"
    return " ".join(out) if out else column


def _acronyms(name: str) -> set[str]:
    """Words the identifier writes in capitals (`HBP`, `RBI`, `yearID`'s ID... but not a
    common word such as `id`): printed in capitals, so an unexpanded abbreviation reads as one
    rather than as a lower-cased column name ("HBP", not "hbp"). An all-capitals identifier
    with underscores (`CUSTOMER_NAME`) is a naming style, not acronyms."""
    if "_" in name.strip("_") and name.isupper():
        return set()
    runs = re.findall(r"[A-Z]{2,5}(?![a-z])", name)
    return {r.lower() for r in runs if count(r) < NEVER_EXPAND}


def table_words(name: str, known: Iterable[str] = ()) -> str:
    """A table's name in words without the schema's `dim`/`fact` convention words."""
    parts = split_words(name, known)
    kept = [p for p in parts if p not in TABLE_CONVENTION_WORDS]
    if len(kept) > 1 and kept[-1] in TABLE_SUFFIX_WORDS:
        kept = kept[:-1]
    return " ".join(kept or parts)


ROW_NOUNS = {
    "weather": ("weather observation", "weather observations"),
    "lineitem": ("line item", "line items"),
    "partsupp": ("part-supplier record", "part-supplier records"),
    "nation": ("nation", "nations"),
    "region": ("region", "regions"),
    "supplier": ("supplier", "suppliers"),
    "customer": ("customer", "customers"),
    "part": ("part", "parts"),
}

# Nouns with no plural of their own: their rows are "X records" ("inventory records").
MASS_NOUNS = frozenset(
    {"data", "metadata", "info", "information", "history", "inventory", "status",
     "equipment", "stock", "staff", "feedback", "news", "traffic", "weather", "mapping",
     "membership", "attendance", "software", "hardware"}
)  # fmt: skip
IRREGULAR_PLURALS = {"person": "people", "child": "children", "man": "men", "woman": "women",
                     "axis": "axes", "analysis": "analyses", "index": "indices"}  # fmt: skip


def _acronym(word: str) -> bool:
    """A word without vowels (`crs`, `gmt`): an acronym, not a word with a plural."""
    return word.isascii() and word.isalpha() and len(word) > 1 and not re.search(r"[aeiouy]", word)


def row_nouns(table: str, known: Iterable[str] = ()) -> tuple[str, str]:
    """(singular, plural) noun for a table's rows, from its name in words: a table named by a
    count noun is its rows' plural ("package relations", "changelog entries"), a plural name
    stays as it is ("flights"), the head of "X of Y" takes the plural ("units of measure"), an
    abbreviation without vowels is an acronym ("projected CRSs"); only a mass noun, which has
    no plural an analyst would write, is read as "X records" (issue 40: "package relation
    records" was stilted on every warehouse judged)."""
    if table.lower() in ROW_NOUNS:
        return ROW_NOUNS[table.lower()]
    words = table_words(table, known).strip() or table.lower()  # `数据` has no ASCII words
    if " of " in words:  # the head noun takes the plural: "units of measure"
        head_noun, _, rest = words.partition(" of ")
        one, many = row_nouns(head_noun.replace(" ", "_"))
        return f"{one} of {rest}", f"{many} of {rest}"
    *head, last = words.split(" ")
    lead = " ".join(head) + " " if head else ""
    if _acronym(last):
        # an abbreviation without vowels is an acronym: "geodetic CRS", "geodetic CRSs"
        return lead + last.upper(), lead + last.upper() + "s"
    if last in IRREGULAR_PLURALS:
        return words, lead + IRREGULAR_PLURALS[last]
    if last in IRREGULAR_PLURALS.values():
        single = next(k for k, v in IRREGULAR_PLURALS.items() if v == last)
        return lead + single, words
    if last in MASS_NOUNS or not last.isascii() or not last.isalpha():
        return f"{words} record", f"{words} records"
    if (one := singular_word(last)) != last:  # a plural name stays: "flights", "entries"
        return lead + one, words
    if re.search(r"[^aeiou]y$", last):
        return words, words[:-1] + "ies"
    if re.search(r"(s|x|z|ch|sh)$", last):
        return words, words + "es"
    return words, words + "s"


# Words that name a key, not what it identifies: `country_code` identifies a country.
ENTITY_KEY_WORDS = frozenset({"code", "id", "key", "sk", "number", "no"})
PERIOD_WORDS = frozenset({"year", "season"})


def _entity_period_noun(
    table: TableCard, known: Iterable[str] = (), refs: Mapping[str, str] | None = None
) -> tuple[str, str] | None:
    """ "country-year" for a table of grain entity_period whose key is exactly an entity's
    code and a period (`player_code`, `year`); None otherwise. Where the code references a
    table, the entity is that table's row (`refs`: column -> its singular): World Bank
    fertility rates keyed by a `country_code` into `economy` are "economy-years", since the
    economies include aggregates such as "OECD members" (round 16's blind judge called
    "country-years" ambiguous; decision 0197)."""
    if table.grain != "entity_period":
        return None
    for key in table.keys:
        if len(key.columns) != 2 or key.duplicate_rows:
            continue
        period = [c for c in key.columns if set(split_words(c, known)[-1:]) & PERIOD_WORDS]
        if len(period) != 1:
            continue
        entity = next(c for c in key.columns if c != period[0])
        noun = (refs or {}).get(entity)
        parts = noun.split(" ") if noun else split_words(stem(table, entity), known)
        while len(parts) > 1 and parts[-1] in ENTITY_KEY_WORDS:
            parts.pop()
        if parts and parts[-1] not in ENTITY_KEY_WORDS and all(p.isalpha() for p in parts):
            one = f"{' '.join(parts)}-{split_words(period[0], known)[-1]}"
            return one, f"{one}s"
    return None


class Namer:
    """Natural names for one card's tables and columns, with the schema's own vocabulary and
    its foreign keys as evidence; computed once per name."""

    def __init__(self, card: SchemaCard) -> None:
        self.card = card
        self.tables = {t.name: t for t in card.tables}
        # The schema's own words: split by case and punctuation only (no dictionary): a short
        # word the schema spells on its own (`id`, `lg`) may be a part of a glued one.
        self.known = frozenset(
            w
            for t in card.tables
            for n in [t.name, *(c.name for c in t.columns)]
            for w in identifier_words(n)
        )
        # Vowel-less last words of table names read as acronyms (`geodetic_crs`: geodetic CRS);
        # columns that use them print them the same way (`geodetic_crs_code`: geodetic CRS code).
        self.acronyms = frozenset(
            w for t in card.tables for w in split_words(t.name)[-1:] if _acronym(w)
        )
        self.refs = {
            (f.table, f.columns[0]): f.ref_table for f in card.foreign_keys if len(f.columns) == 1
        }
        self.spelled = {
            **self._spelled_once(),
            **table_initials(card.tables, self.known),
            **spelled_siblings(
                (split_words(stem(t, c.name), self.known) for t in card.tables for c in t.columns),
                self.acronyms,
            ),
        }
        self._columns: dict[tuple[str, str], str] = {}
        self._tables: dict[str, str] = {}
        self._rows: dict[str, tuple[str, str]] = {}

    def _spelled_once(self) -> dict[str, str]:
        """Abbreviations a comment or a reference spells out for one column, read the same in
        every column that uses them (one abbreviation, one sense): `auth_name` referencing the
        registry's authorities makes `object_auth_name` "object authority name", which round
        9's blind judge read as a column name printed raw. A word with two readings keeps its
        per-column evidence only."""
        readings: dict[str, set[str]] = {}
        for t in self.card.tables:
            for c in t.columns:
                ref = self.refs.get((t.name, c.name))
                noun = row_nouns(ref, self.known)[0] if ref is not None else None
                evidence = [e for e in (noun, c.comment, t.comment) if e]
                for word in split_words(stem(t, c.name), self.known) if evidence else []:
                    found = expansion(word, evidence)
                    if found is not None and found.lower() != word:
                        readings.setdefault(word, set()).add(found)
        return _one_reading(readings)

    def rows(self, name: str) -> tuple[str, str]:
        """(singular, plural) for a table's rows: `row_nouns` of its name, except for an
        entity per period keyed by exactly that pair, whose rows are "country-years" (World
        Bank fertility rates per country and year: "count the fertility rates for which births
        per woman is below 2.3" counted rows as rates, round 11's blind judge, world_reference
        #3 and #27; decision 0196). Two such tables that would read alike keep their names."""
        if name not in self._rows:
            self._rows[name] = self._per_period(name) or row_nouns(name, self.known)
        return self._rows[name]

    def _per_period(self, name: str) -> tuple[str, str] | None:
        said = self._entity_period(name)
        if said is None:
            return None
        alike = [t.name for t in self.card.tables if self._entity_period(t.name) == said]
        return said if alike == [name] else None

    def _entity_period(self, name: str) -> tuple[str, str] | None:
        refs = {
            column: row_nouns(ref, self.known)[0]
            for (table, column), ref in self.refs.items()
            if table == name
        }
        return _entity_period_noun(self.tables[name], self.known, refs)

    def table(self, name: str) -> str:
        if name not in self._tables:
            self._tables[name] = table_words(name, self.known)
        return self._tables[name]

    def column(self, table: str, column: str) -> str:
        key = (table, column)
        if key not in self._columns:
            ref = self.refs.get(key)
            self._columns[key] = column_words(
                self.tables[table],
                column,
                known=self.known,
                reference=row_nouns(ref, self.known)[0] if ref is not None else None,
                acronyms=self.acronyms,
                spelled=self.spelled,
            )
        return self._columns[key]
