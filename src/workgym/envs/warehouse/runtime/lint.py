"""The task-quality lint: the mistakes a skilled analyst would flag on sight, counted per rule.

Rules (issue 17), each over a task's prompt, reference SQL and answer as written to tasks.jsonl:
- key_aggregate: a reference query sums, averages or takes the extreme of a surrogate key
  ("the total sold date sk"), or compares one with a threshold ("sold date sk > 2452230");
- answer_in_prompt: the question text gives its answer away (`answer_leak`, here because the
  generator's split checks use it too);
- column_name_in_prompt: an F8 question names the column it asks for (its identifier, or the
  identifier without its table prefix, read as words: "list price" for ws_list_price);
- tie_at_cut: a top-k answer whose k-th and (k+1)-th values are equal (the tie rule alone would
  decide which group is listed);
- key_named_row: a row named by its surrogate key ("reason sk is 2") where its dimension holds a
  label that names it;
- versioned_year: a year question answered from record-version dates (valid-from / valid-to).

Generation drops what it can and reports the counts; `workgym check` fails when any rule fires
on more than `MAX_SHARE` of the tasks.
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
from workgym.envs.warehouse.schema.relations import stem

RULES = (
    "key_aggregate",
    "answer_in_prompt",
    "column_name_in_prompt",
    "tie_at_cut",
    "key_named_row",
    "versioned_year",
)
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
        return [r for r in RULES if self.share(r) > MAX_SHARE]

    def summary(self) -> str:
        return ", ".join(f"{r} {self.counts.get(r, 0)} ({self.share(r):.1%})" for r in RULES)


class Linter:
    """The rules over one warehouse's card: which columns are keys, which tables have labels."""

    def __init__(self, card: SchemaCard) -> None:
        self.card = card
        self.tables = {t.name: t for t in card.tables}
        fk_cols = {(f.table, c) for f in card.foreign_keys for c in f.columns}
        self.refs = {
            (f.table, f.columns[0]): f.ref_table for f in card.foreign_keys if len(f.columns) == 1
        }
        self.keys: dict[str, set[str]] = {
            t.name: {c.name for c in t.columns if surrogate(t, c, (t.name, c.name) in fk_cols)}
            for t in card.tables
        }

    def rules(self, task: Task) -> list[str]:
        """The rules this task breaks (empty for a good task)."""
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
        return found

    def names_column(self, task: Task, prompt: str) -> bool:
        value = str((task.answer or {}).get("value", "")) if isinstance(task.answer, dict) else ""
        table, _, column = value.partition(".")
        return bool(column) and self.column_named(table, column, prompt)

    def column_named(self, table: str, column: str, text: str) -> bool:
        """Does `text` name `table.column`: its identifier, or its identifier read as words?"""
        low = text.lower()
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
        for rule in linter.rules(task):
            report.counts[rule] = report.counts.get(rule, 0) + 1
            shown = report.examples.setdefault(rule, [])
            if len(shown) < 5:
                shown.append(task.id)
    report.counts = {r: report.counts[r] for r in RULES if r in report.counts}
    return report
