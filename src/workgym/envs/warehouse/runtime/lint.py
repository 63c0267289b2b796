"""The task-quality lint: the mistakes a skilled analyst would flag on sight, counted per rule.

Rules (issue 17), each over a task's prompt, reference SQL and answer as written to tasks.jsonl:
- key_aggregate: a reference query sums, averages or takes the extreme of a surrogate key
  ("the total sold date sk"), or compares one with a threshold ("sold date sk > 2452230");
- answer_in_prompt: the question text gives its answer away (`answer_leak`, here because the
  generator's split checks use it too);
- column_name_in_prompt: an F8 question names the column it asks for (its identifier, or the
  identifier without its table prefix, read as words: "list price" for ws_list_price; from
  version 7 with a hyphen read as a space: "alpha-2 code" for alpha_2);
- tie_at_cut: a top-k answer whose k-th and (k+1)-th values are equal (the tie rule alone would
  decide which group is listed);
- key_named_row: a row named by its surrogate key ("reason sk is 2") where its dimension holds a
  label that names it;
- versioned_year: a year question answered from record-version dates (valid-from / valid-to).

Warning rules (issue 40, version 2), over the column meanings and table grains of the card
(schema/meaning.py); counted and reported, never failing admission (decision 0136):
- meaningless_aggregate: a sum or average of a calendar part ("the total birth day"), a code or
  a non-surrogate identifier; an average year only where the row is not an entity (the average
  build year of planes is a fleet's age; the average season of player-seasons is nothing);
  from version 5, a sum of a non-additive measure (a price, a rate, or a value an identity
  shows to be per unit: "the total wholesale cost of items", decision 0191);
- count_as_category: a count of events or an additive measure grouped as if its values were
  categories ("top 3 games values by number of records");
- raw_identifier_in_prompt: a column or table identifier printed raw in the prose: snake_case,
  camelCase, or two of the schema's own words glued together ("orderdate"); qualified
  `table.column` references and quoted values are definitions, not prose, and are left alone;
- duplicate_not_key: an F7 duplicate check on columns that are not a candidate key (a versioned
  table's business id without its validity dates; only references of an event table, such as
  a return's date and time keys, unique in the sample by chance; a column that is not an
  identifier);
- vacuous_antijoin: an F6 anti-join whose answer is at least 95% of the outer set (the outer set
  read from the card: the referenced table's rows, or its rows with one top value);
- total_share: an F5 share of 0% or 100% (a vacuous or total condition);
- current_as_missing: an F7 NULL count of a versioned row's end date (the current version) or of
  a self-reference (the top of a hierarchy) presented as missing data;
- record_talk (version 4): a table's rows called "X records" where X has a plural an analyst
  would write ("package relation records" for package relations);
- key_path_talk (version 4): a condition read out along a key ("its tailnum refers to a plane
  whose ...") instead of naming the row it reaches ("the plane's ..."); from version 6 on F9's
  brief too, which names its metric and its clock in words (decision 0195);
- qualified_name_in_prose (version 4): a `table.column` in the question or its clauses ("when
  subdivision.country_code equals country.alpha_2"); the answer instruction, which names what
  to return, and a parenthesised definition after the words are left alone, and so is F8
  (which asks for a column); from version 6, F9's brief (its first paragraph; the answer
  clause defines the predicate's columns) is read like any question.

Generation drops what it can and reports the counts; `workgym check` fails when any of the
first six rules fires on more than `MAX_SHARE` of the tasks. `LINT_VERSION` names the rule set
and goes into the admission record (decision 0137): an environment admitted under an older set
says so.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import sqlglot
from pydantic import BaseModel, Field
from sqlglot import exp

from workgym.core.tasks import Task
from workgym.envs.warehouse.schema.card import SchemaCard, TableCard
from workgym.envs.warehouse.schema.column_roles import surrogate, versioned_columns
from workgym.envs.warehouse.schema.meaning import ensure_meanings, words
from workgym.envs.warehouse.schema.naming import Namer, row_nouns, split_words, table_words
from workgym.envs.warehouse.schema.relations import stem

FAILING_RULES = (
    "key_aggregate",
    "answer_in_prompt",
    "column_name_in_prompt",
    "tie_at_cut",
    "key_named_row",
    "versioned_year",
)
WARNING_RULES = (
    "meaningless_aggregate",
    "count_as_category",
    "raw_identifier_in_prompt",
    "duplicate_not_key",
    "vacuous_antijoin",
    "total_share",
    "current_as_missing",
    "record_talk",
    "key_path_talk",
    "qualified_name_in_prose",
)
RULES = FAILING_RULES + WARNING_RULES
# The rule set's version: 1 was issue 17's six rules, 2 adds issue 40's warnings, 3 reads glued
# names with the dictionary of schema/naming.py too (`tailnum`). Bump it when a rule is added or
# changes what it flags (admission records keep the version they ran under). 4 adds the prose
# rules a judge found on real warehouses (record, key-path and table.column talk). 5 counts sums
# of per-unit measures (decision 0191); 6 reads F9's brief like any question (decision 0195);
# 7 reads a hyphen as a space when a prompt names a column ("alpha-2 code", decision 0196).
LINT_VERSION = 7
RULES_NAME = f"warehouse-lint/{LINT_VERSION}"
MESSAGES = {
    "key_aggregate": "a surrogate key is aggregated or compared with a threshold",
    "answer_in_prompt": "the question text gives its answer away",
    "column_name_in_prompt": "an F8 question names the column it asks for",
    "tie_at_cut": "the k-th and (k+1)-th values of a top-k answer are equal",
    "key_named_row": "a row is named by its surrogate key though it has a label",
    "versioned_year": "a year question is answered from record-version dates",
    "meaningless_aggregate": (
        "a sum or average of a calendar part, a code or an identifier, or a sum of a level or "
        "a per-unit value"
    ),
    "count_as_category": "a count or an additive measure is grouped as a category",
    "raw_identifier_in_prompt": "a raw column or table identifier is printed in the prose",
    "duplicate_not_key": "a duplicate check on columns that are not a candidate key",
    "vacuous_antijoin": "an anti-join answer holds at least 95% of the outer set",
    "total_share": "a share of 0% or 100%: the condition is vacuous or total",
    "current_as_missing": "NULLs that mean current or top-of-hierarchy are called missing",
    "record_talk": "rows are called 'X records' though X has a plain plural",
    "key_path_talk": "a condition is read out along a key ('its X refers to a Y whose ...')",
    "qualified_name_in_prose": "a raw table.column is printed in the question",
}
ANSWER_INSTRUCTION = "Answer with submit_answer"
_QUALIFIED_IN_PROSE = re.compile(r"(?<![\w.])[a-z_][a-z0-9_]*\.[a-z_][a-z0-9_]*\b")
VACUOUS_SHARE = 0.95
MAX_SHARE = 0.02
_THRESHOLDS = (exp.GT, exp.GTE, exp.LT, exp.LTE)
_AGGREGATES = (exp.Sum, exp.Avg, exp.Max, exp.Min)


_TOKEN = re.compile(r"[A-Za-z0-9_.\-/]+")


def answer_leak(task: Task) -> str | None:
    """The answer, if the question text gives it away (None when it does not)."""
    text = task.prompt if isinstance(task.prompt, str) else " ".join(m.content for m in task.prompt)
    answer = task.answer if isinstance(task.answer, dict) else {}
    kind = answer.get("kind")
    tokens = set(_TOKEN.findall(text))
    tokens |= {t.rstrip(".,;:?") for t in tokens}
    if kind in ("integer", "number"):
        value = answer["value"]
        shown = str(value) if kind == "integer" else f"{value:g}"
        return shown if shown in tokens else None
    if kind in ("keys", "top_k"):
        quoted = set(re.findall(r"'([^']*)'", text))
        declared = set(task.meta.get("declared_values", []))  # group labels the question defines
        for v in answer["values"]:
            if v in declared:
                continue
            if v in quoted or (len(v) >= 3 and v in tokens):
                return str(v)
        return None
    if kind == "column":
        value = str(answer["value"])
        column = value.split(".", 1)[-1]
        if value.lower() in text.lower() or ("_" in column and column in tokens):
            return value
    return None


class LintReport(BaseModel):
    tasks: int
    counts: dict[str, int] = Field(default_factory=dict)
    examples: dict[str, list[str]] = Field(default_factory=dict)  # task ids, a few per rule

    def share(self, rule: str) -> float:
        return self.counts.get(rule, 0) / self.tasks if self.tasks else 0.0

    @property
    def failing(self) -> list[str]:
        return [r for r in FAILING_RULES if self.share(r) > MAX_SHARE]

    @property
    def warnings(self) -> list[str]:
        """Warning rules that fired at all (reported, never failing)."""
        return [r for r in WARNING_RULES if self.counts.get(r, 0)]

    def summary(self) -> str:
        fail = ", ".join(
            f"{r} {self.counts.get(r, 0)} ({self.share(r):.1%})" for r in FAILING_RULES
        )
        warn = ", ".join(f"{r} {self.counts.get(r, 0)}" for r in WARNING_RULES)
        return f"{RULES_NAME}: {fail}; warnings: {warn}"


class Linter:
    """The rules over one warehouse's card: which columns are keys, which tables have labels."""

    def __init__(self, card: SchemaCard) -> None:
        self.card = ensure_meanings(card)
        self.tables = {t.name: t for t in card.tables}
        fk_cols = {(f.table, c) for f in card.foreign_keys for c in f.columns}
        self.refs = {
            (f.table, f.columns[0]): f.ref_table for f in card.foreign_keys if len(f.columns) == 1
        }
        known = Namer(card).known
        # "X records" for a table whose rows have a plain plural (computed once: every task of
        # an environment is linted against the same card)
        self.record_talk = [
            re.compile(rf"\b{re.escape(table_words(t.name, known))} records?\b", re.IGNORECASE)
            for t in card.tables
            if not row_nouns(t.name, known)[1].endswith(" records")
        ]
        self.keys: dict[str, set[str]] = {
            t.name: {c.name for c in t.columns if surrogate(t, c, (t.name, c.name) in fk_cols)}
            for t in card.tables
        }

    def rules(self, task: Task, *, warnings: bool = False) -> list[str]:
        """The failing rules this task breaks (empty for a good task); with `warnings`, the
        warning rules it breaks too. Generation drops drafts on the failing rules only, so
        the warning rules change no generated task (decision 0136)."""
        meta = task.meta
        found: list[str] = []
        prompt = task.prompt if isinstance(task.prompt, str) else str(task.prompt)
        if answer_leak(task) is not None:
            found.append("answer_in_prompt")
        if meta.get("family") == "F8" and self.names_column(task, prompt):
            found.append("column_name_in_prompt")
        gap = meta.get("gap") or {}
        if gap.get("checked") and gap.get("clear") is False:
            found.append("tie_at_cut")
        tree = _parse(meta.get("reference_sql"))
        tables = [str(t) for t in meta.get("tables", [])]
        if tree is not None:
            if self._key_aggregate(tree, tables):
                found.append("key_aggregate")
            if self._key_named(tree, tables):
                found.append("key_named_row")
        if meta.get("family") == "F10" and self._versioned_year(task, tables):
            found.append("versioned_year")
        if warnings:
            found += self.warnings(task, tree, tables, prompt)
        return found

    # -- issue 40's warning rules, over meanings ------------------------------------------------

    def warnings(
        self, task: Task, tree: exp.Expression | None, tables: list[str], prompt: str
    ) -> list[str]:
        family, shape = task.meta.get("family"), task.meta.get("shape")
        found: list[str] = []
        if tree is not None and self._meaningless_aggregate(tree, tables):
            found.append("meaningless_aggregate")
        if tree is not None and self._count_as_category(tree, tables):
            found.append("count_as_category")
        if family != "F8" and self.raw_identifier(prompt) is not None:
            found.append("raw_identifier_in_prompt")
        if family == "F7" and tree is not None:
            if shape in ("duplicate_rows", "duplicated_keys") and self._not_key(tree, tables):
                found.append("duplicate_not_key")
            if shape in ("null_rate", "null_count") and self._current_as_missing(tree, tables):
                found.append("current_as_missing")
        if family == "F6" and tree is not None and self._vacuous_antijoin(task, tree, tables):
            found.append("vacuous_antijoin")
        if family == "F5" and _total_share(task):
            found.append("total_share")
        question = prompt.split(ANSWER_INSTRUCTION)[0]
        if family == "F9":  # the brief; the answer clause after it defines the predicate
            question = prompt.split("\n\n", 1)[0]
        if any(p.search(question) for p in self.record_talk):
            found.append("record_talk")
        if "refers to" in question:
            found.append("key_path_talk")
        unquoted = re.sub(r"(?<!\w)'[^']*'(?!\w)|\"[^\"]*\"|`[^`]*`|\([^)]*\)", " ", question)
        if family != "F8" and _QUALIFIED_IN_PROSE.search(unquoted):
            found.append("qualified_name_in_prose")
        return found

    def meaning(self, column: exp.Column, tables: Iterable[str]) -> set[str]:
        """The meanings `column` may have in `tables` (several where the name is ambiguous)."""
        out: set[str] = set()
        for t in tables:
            card = self.tables.get(t)
            for c in card.columns if card is not None else []:
                if c.name == column.name and c.meaning is not None:
                    out.add(c.meaning)
        return out

    def _owner(self, column: exp.Column, tables: Iterable[str]) -> TableCard | None:
        for t in tables:
            card = self.tables.get(t)
            if card is not None and any(c.name == column.name for c in card.columns):
                return card
        return None

    def _meaningless_aggregate(self, tree: exp.Expression, tables: list[str]) -> bool:
        for node in tree.find_all(exp.Sum, exp.Avg):
            arg = node.this
            if not isinstance(arg, exp.Column) or self._is_key(arg, tables):
                continue  # surrogate keys are key_aggregate's
            meanings = self.meaning(arg, tables)
            if meanings & {"code", "identifier"}:
                return True
            if isinstance(node, exp.Sum) and "nonadditive_measure" in meanings:
                return True
            if "calendar_part" not in meanings:
                continue
            owner = self._owner(arg, tables)
            is_year = words(arg.name)[-1:] in (["year"], ["yr"], ["yearid"], ["season"])
            if isinstance(node, exp.Sum) or not is_year or (owner and owner.grain != "entity"):
                return True
        return False

    def _count_as_category(self, tree: exp.Expression, tables: list[str]) -> bool:
        for group in tree.find_all(exp.Group):
            for column in group.find_all(exp.Column):
                if self.meaning(column, tables) & {"count", "additive_measure"}:
                    return True
        return False

    def raw_identifier(self, prompt: str) -> str | None:
        """A column or table identifier printed raw in the prose (None when there is none)."""
        prose = re.sub(r"'[^']*'|\"[^\"]*\"|`[^`]*`", " ", prompt)
        prose = re.sub(r"\b[A-Za-z_][A-Za-z0-9_]*\.[A-Za-z_][A-Za-z0-9_]*\b", " ", prose)
        names = {c.name for t in self.card.tables for c in t.columns} | set(self.tables)
        vocab = {w for n in names for w in words(n) if len(w) >= 3}
        lowered = {n.lower() for n in names}
        tokens: list[str] = re.findall(r"\b[A-Za-z][A-Za-z0-9_]*\b", prose)
        for token in tokens:
            if token not in names and token.lower() not in lowered:
                continue
            if "_" in token.strip("_") or re.search(r"[a-z][A-Z]", token):
                return token
            if token.islower() and (_glued(token, vocab) or _dictionary_glued(token)):
                return token
        return None

    def _not_key(self, tree: exp.Expression, tables: list[str]) -> bool:
        columns: list[exp.Column] = []
        for node in tree.find_all(exp.Distinct, exp.Group):
            columns += list(node.find_all(exp.Column))
        if not columns:
            return False
        owner = self._owner(columns[0], tables)
        if owner is None:
            return False
        names = {c.name for c in columns}
        if any(k.source == "declared" and set(k.columns) == names for k in owner.keys):
            return False
        if owner.grain == "versioned_entity" and not names & versioned_columns(owner):
            return True  # a business id repeats by design, once per version
        if owner.grain == "event" and all((owner.name, n) in self.refs for n in names):
            return True  # references of an event (return date, time, item): unique by chance
        fine = {"identifier", "time_point", "calendar_part", "code"}
        return any(not (self.meaning(c, [owner.name]) & fine) for c in columns)

    def _current_as_missing(self, tree: exp.Expression, tables: list[str]) -> bool:
        for node in tree.find_all(exp.Is):
            column = node.this
            if not isinstance(column, exp.Column) or not isinstance(node.expression, exp.Null):
                continue
            owner = self._owner(column, tables)
            if owner is None:
                continue
            if column.name in versioned_columns(owner) and _end_side(column.name):
                return True
            if any(
                f.table == owner.name and f.ref_table == owner.name and column.name in f.columns
                for f in self.card.foreign_keys
            ):
                return True
        return False

    def _vacuous_antijoin(self, task: Task, tree: exp.Expression, tables: list[str]) -> bool:
        """Answer rows / outer rows >= 95%, the outer set read from the card where it can be."""
        rows = task.meta.get("result_rows")
        if not isinstance(rows, int):
            answer = task.answer if isinstance(task.answer, dict) else {}
            values = answer.get("values")
            rows = len(values) if isinstance(values, list) else None
        source = tree.args.get("from_") or tree.args.get("from")  # the key sqlglot 30 uses
        outer_table = source.this if isinstance(source, exp.From) else None
        if rows is None or not isinstance(outer_table, exp.Table):
            return False
        card = self.tables.get(outer_table.name)
        if card is None:
            return False
        outer: int | None = card.rows
        where = tree.args.get("where")
        conds: list[exp.Expression] = []
        if where is not None:
            parts = where.this.flatten() if isinstance(where.this, exp.And) else [where.this]
            conds = [
                c for c in parts if isinstance(c, exp.Expression) and not isinstance(c, exp.Not)
            ]
        for cond in conds:  # the outer set is at most its smallest condition's count
            count = _top_count(card, cond)
            if count is None:
                return False
            outer = count if outer is None else min(outer, count)
        return bool(outer) and rows >= VACUOUS_SHARE * (outer or 0)

    def names_column(self, task: Task, prompt: str) -> bool:
        value = str((task.answer or {}).get("value", "")) if isinstance(task.answer, dict) else ""
        table, _, column = value.partition(".")
        return bool(column) and self.column_named(table, column, prompt)

    def column_named(self, table: str, column: str, text: str) -> bool:
        """Does `text` name `table.column`: its identifier, or its identifier read as words?
        A hyphen between words reads as a space: "the alpha-2 code" names `alpha_2` (7)."""
        low = re.sub(r"(?<=\w)-(?=\w)", " ", text.lower())
        forms = {column.lower()}
        if table in self.tables:
            forms.add(stem(self.tables[table], column))
        for form in forms:
            if re.search(rf"\b{re.escape(form)}\b", low):
                return True
            words = form.replace("_", " ").strip()
            if " " in words and re.search(rf"\b{re.escape(words)}\b", low):
                return True
        return False

    def _is_key(self, column: exp.Column, tables: Iterable[str]) -> bool:
        name = column.name
        return any(name in self.keys.get(t, set()) for t in tables)

    def _key_aggregate(self, tree: exp.Expression, tables: list[str]) -> bool:
        for node in tree.find_all(*_AGGREGATES):
            arg = node.this
            if isinstance(arg, exp.Column) and self._is_key(arg, tables):
                return True
        for cmp in tree.find_all(*_THRESHOLDS):
            sides = (cmp.this, cmp.expression)
            if any(isinstance(s, exp.Column) and self._is_key(s, tables) for s in sides) and any(
                isinstance(s, exp.Literal) for s in sides
            ):
                return True
        return False

    def _key_named(self, tree: exp.Expression, tables: list[str]) -> bool:
        """A surrogate key compared with a literal, where the row it names has a label."""
        for node in tree.find_all(exp.EQ, exp.NEQ, exp.In):
            column = node.this
            if not isinstance(column, exp.Column) or not self._is_key(column, tables):
                continue
            values = [node.expression] if not isinstance(node, exp.In) else node.expressions
            if not values or not all(isinstance(v, exp.Literal) for v in values):
                continue
            for t in tables:
                target = self.refs.get((t, column.name))
                if target is None and column.name in self.keys.get(t, set()):
                    target = t
                ref = self.tables.get(target or "")
                if ref is not None and _labelled(ref):
                    return True
        return False

    def _versioned_year(self, task: Task, tables: list[str]) -> bool:
        if task.meta.get("shape") != "year_not_covered":
            return False
        tree = _parse(task.meta.get("check_sql"))
        versions = {
            c for t in tables if t in self.tables for c in versioned_columns(self.tables[t])
        }
        if tree is None or not versions:
            return False
        return any(c.name in versions for c in tree.find_all(exp.Column))


def _end_side(name: str) -> bool:
    """The closing date of a validity pair (rec_end_date, valid_to): NULL there is "current"."""
    return bool({"end", "to", "expiry", "until"} & set(words(name)))


def _glued(token: str, vocab: set[str]) -> bool:
    """Two of the schema's own words run together ("orderdate" from order_id and ship_date)."""
    return any(token[:i] in vocab and token[i:] in vocab for i in range(3, len(token) - 2))


def _total_share(task: Task) -> bool:
    answer = task.answer if isinstance(task.answer, dict) else {}
    value = answer.get("value")
    if answer.get("kind") != "number" or not isinstance(value, int | float):
        return False
    return value <= 0 or value >= 100


def _top_count(table: TableCard, cond: exp.Expression) -> int | None:
    """Rows of `table` where `cond` (column = literal) holds, from its top values; else None."""
    if not isinstance(cond, exp.EQ):
        return None
    column, value = cond.this, cond.expression
    if not isinstance(column, exp.Column):
        return None
    if isinstance(value, exp.Boolean):
        wanted: str = str(value.this)
    elif isinstance(value, exp.Literal):
        wanted = value.name
    else:
        return None
    try:
        card = table.column(column.name)
    except KeyError:
        return None
    for top in card.top_values:
        if str(top.value) == wanted:
            return top.count
    return None


def _labelled(table: TableCard) -> bool:
    return table.label_column() is not None


def _parse(sql: Any) -> exp.Expression | None:
    if not isinstance(sql, str) or not sql.strip():
        return None
    try:
        tree = sqlglot.parse_one(sql, read="duckdb")
    except sqlglot.errors.ParseError:
        return None
    return tree if isinstance(tree, exp.Expression) else None


def lint_tasks(tasks: Iterable[Task], card: SchemaCard) -> LintReport:
    linter = Linter(card)
    items = list(tasks)
    report = LintReport(tasks=len(items))
    for task in items:
        for rule in linter.rules(task, warnings=True):
            report.counts[rule] = report.counts.get(rule, 0) + 1
            shown = report.examples.setdefault(rule, [])
            if len(shown) < 5:
                shown.append(task.id)
    report.counts = {r: report.counts[r] for r in RULES if r in report.counts}
    return report


def _dictionary_glued(token: str) -> bool:
    """A name the word dictionary splits (`tailnum` -> tail num, `orderdate`), though its
    parts are not words of the schema (version 3; schema/naming.py, decision 0140)."""
    return len(split_words(token)) > 1
