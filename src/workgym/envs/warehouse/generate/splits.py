"""Held-out splits for a generated warehouse, and the build-time leakage checks.

The unit of splitting is (family, tables in the reference SQL, cause type, planted columns); a
task's `family` key encodes it, so `SplitSpec.overrides` can hold the explicit assignment of
every unit and the core's TaskSet applies it unchanged. A unit is test when any of these holds:

- its surface template is held out (about a quarter of each family's templates, at least one
  when a family has three or more), so test questions are phrased in ways training never saw;
- it reads a held-out table (a task is train/dev only if all its tables are kept); tables used
  by more than half of the tasks are never held out, or nothing would remain to train on;
- its planted cause type is held out (investigations, F9).

Other units are train or dev by a seeded hash. The choices and the reasons are written to the
split record, and `leakage_checks` proves at build time that no held-out template appears
outside test, that no question text contains its answer, and that the tools cannot read any
file of the environment except the snapshot.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from workgym.core.tasks import Split, SplitSpec, Task
from workgym.envs.warehouse.runtime.lint import answer_leak

DEV_SHARE = 0.25  # of the units that are not held out
HELD_OUT_TEMPLATE_SHARE = 0.25
HELD_OUT_TABLE_SHARE = 0.2
MAX_TABLE_USE = 0.5  # tables in more than this share of tasks are never held out
MAX_HELD_TABLE_USE = 0.12  # preferred: held-out tables that hold at most this share of tasks


class SplitRecord(BaseModel):
    """What was held out and why; written as split_record.json next to splits.json."""

    salt: str
    held_out_templates: dict[str, list[str]] = Field(default_factory=dict)
    held_out_tables: list[str] = Field(default_factory=list)
    held_out_causes: list[str] = Field(default_factory=list)
    assignment: dict[str, Split] = Field(default_factory=dict)  # task.family -> split
    reasons: dict[str, str] = Field(default_factory=dict)  # task.family -> why
    counts: dict[str, int] = Field(default_factory=dict)
    checks: dict[str, Any] = Field(default_factory=dict)

    def spec(self) -> SplitSpec:
        return SplitSpec(salt=self.salt, overrides=dict(self.assignment))


def _rank(salt: str, key: str) -> float:
    digest = hashlib.sha256(f"{salt}|{key}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def unit_key(
    family: str, template: str, tables: Sequence[str], cause: str = "", planted: Sequence[str] = ()
) -> str:
    """The task family key that encodes the split unit, e.g. `F2/F2.t3/airlines+flights`."""
    parts = [family, template, "+".join(sorted(tables)) or "-"]
    if cause or planted:
        parts += [cause or "-", "+".join(sorted(planted)) or "-"]
    return "/".join(parts)


def plan_splits(tasks: Sequence[Task], seed: int) -> SplitRecord:
    salt = f"warehouse/{seed}"
    templates: dict[str, set[str]] = defaultdict(set)
    table_use: Counter[str] = Counter()
    causes: set[str] = set()
    for t in tasks:
        templates[str(t.meta.get("family", t.kind))].add(str(t.meta["template"]))
        table_use.update(set(t.meta.get("tables", [])))
        if t.meta.get("cause_type"):
            causes.add(str(t.meta["cause_type"]))
    held_templates: dict[str, list[str]] = {}
    for fam, keys in sorted(templates.items()):
        if len(keys) >= 3:
            n = max(1, math.floor(len(keys) * HELD_OUT_TEMPLATE_SHARE))
            held_templates[fam] = sorted(keys, key=lambda k: _rank(salt, k))[:n]
    n_tables = len(table_use)
    eligible = [
        name for name, used in table_use.items() if used <= MAX_TABLE_USE * max(len(tasks), 1)
    ]
    held_tables: list[str] = []
    if n_tables >= 3 and eligible:
        n = max(1, round(n_tables * HELD_OUT_TABLE_SHARE))
        # Tables that a modest share of tasks read: holding out a busy one would empty train.
        modest = [e for e in eligible if table_use[e] <= MAX_HELD_TABLE_USE * len(tasks)]
        pool = modest or sorted(eligible, key=lambda k: (table_use[k], k))[:1]
        held_tables = sorted(pool, key=lambda k: _rank(salt, "table|" + k))[:n]
    held_causes = (
        sorted(causes, key=lambda c: _rank(salt, "cause|" + c))[:1] if len(causes) > 1 else []
    )
    record = SplitRecord(
        salt=salt,
        held_out_templates=held_templates,
        held_out_tables=sorted(held_tables),
        held_out_causes=held_causes,
    )
    held_t = {k for keys in held_templates.values() for k in keys}
    for t in tasks:
        why = _test_reason(t, held_t, set(held_tables), set(held_causes))
        previous = record.assignment.get(t.family)
        if why:
            record.assignment[t.family] = "test"
            record.reasons[t.family] = why
        elif previous is None:
            split: Split = "dev" if _rank(salt, t.family) < DEV_SHARE else "train"
            record.assignment[t.family] = split
            record.reasons[t.family] = "seeded hash of the unit"
    counts = Counter(record.assignment[t.family] for t in tasks)
    record.counts = {s: counts.get(s, 0) for s in ("train", "dev", "test")}
    return record


def _test_reason(t: Task, templates: set[str], tables: set[str], causes: set[str]) -> str:
    if str(t.meta.get("template")) in templates:
        return f"held-out template {t.meta['template']}"
    hit = sorted(set(t.meta.get("tables", [])) & tables)
    if hit:
        return f"held-out table {', '.join(hit)}"
    if t.meta.get("cause_type") in causes:
        return f"held-out cause type {t.meta['cause_type']}"
    return ""


def leakage_checks(
    tasks: Sequence[Task], record: SplitRecord, reachable: Iterable[tuple[str, bool]]
) -> dict[str, Any]:
    """Build-time checks; each entry says what was checked and whether it held."""
    spec = record.spec()
    held = {k for keys in record.held_out_templates.values() for k in keys}
    outside = sorted(
        {str(t.meta.get("template")) for t in tasks if spec.assign(t.family) != "test"} & held
    )
    leaks = [(t.id, leak) for t in tasks if (leak := answer_leak(t)) is not None]
    probes = list(reachable)
    opened = [name for name, refused in probes if not refused]
    per_rule = {
        "template": any(r.startswith("held-out template") for r in record.reasons.values()),
        "table": bool(record.held_out_tables)
        and any(r.startswith("held-out table") for r in record.reasons.values()),
        "cause": bool(record.held_out_causes)
        and any(r.startswith("held-out cause") for r in record.reasons.values()),
    }
    return {
        "no_test_template_in_train": {"passed": not outside, "violations": outside},
        "no_answer_in_question": {"passed": not leaks, "violations": leaks[:20]},
        "manifests_unreachable_from_tools": {
            "passed": not opened and bool(probes),
            "files_tried": len(probes),
            "readable": opened,
        },
        "held_out_tasks_per_rule": per_rule,
    }


def write_record(record: SplitRecord, out: Path) -> Path:
    path = out / "split_record.json"
    path.write_text(record.model_dump_json(indent=2) + "\n")
    return path


def probe_files(out: Path) -> list[tuple[str, bool]]:
    """Try to read the environment's files (not the snapshot) through run_sql, and with the
    parser guard switched off (the engine alone); (attempt, refused) per try.

    Every top-level file is tried, and one file under each top-level folder: the engine refuses
    a read by its configuration (no external access), not by the file, so the hundreds of fuzzed
    and planted copies beside the first say nothing new and cost seconds each."""
    from workgym.core.errors import ToolError
    from workgym.envs.warehouse.runtime.tools import WarehouseState, query
    from workgym.envs.warehouse.schema.card import SchemaCard
    from workgym.envs.warehouse.source.snapshot import SNAPSHOT_FILE
    from workgym.verifiers.sql_exec import execute_sql

    database = out / SNAPSHOT_FILE
    state = WarehouseState(database=database, card=SchemaCard.load(out), query_budget=10**9)
    results: list[tuple[str, bool]] = []
    files = sorted(p for p in out.rglob("*") if p.is_file() and p != database)
    seen: set[str] = set()
    chosen = []
    for path in files:
        parts = path.relative_to(out).parts
        if len(parts) == 1 or parts[0] not in seen:
            seen.add(parts[0])
            chosen.append(path)
    for path in chosen:
        text = str(path.resolve()).replace("'", "''")
        attempts = [
            f"SELECT * FROM read_text('{text}')",
            f"SELECT * FROM read_json_auto('{text}')",
            f"SELECT * FROM '{text}'",
        ]
        for sql in attempts:
            try:
                query(state, sql, 5)
                results.append((f"run_sql: {sql}", False))
            except ToolError:
                results.append((f"run_sql: {sql}", True))
            raw = execute_sql(sql, database, timeout_s=5.0, max_rows=5, guard=False)
            results.append((f"engine only: {sql}", not raw.ok))
    return results
