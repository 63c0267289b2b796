"""The conclusion verifier: does the submitted conclusion name the cause that was planted?

Semantics (docs/investigate.md, Verification), declared here and attacked by the investigation
probes:

- Type: the canonical cause type (aliases declared in `vocab`, matched up to case and
  separators) must be the planted one. Several types in one answer ("a, b", "a or b") are not a
  vocabulary term: enumerating or hedging fails, flagged `enumeration`. One conclusion names one
  cause, exactly as many as were planted; on a task with no plant the answer is
  `normal_variation` (and slice, window and direction are then not scored).
- Slice: both predicates run on the task's database over the rows of the baseline and the
  window; the intersection over union of the rows they select must be at least `IOU_MIN`. A
  predicate is computed, never string-compared, so `airlines.name = 'United Air Lines Inc.'`
  matches `carrier = 'UA'`.
- Direction: the planted effect's direction on the metric ("up"/"down").
- Window: [start, end) must overlap the planted window and be at most `MAX_WINDOW_FACTOR`
  times the question's period long, so "the whole year" is not a window.
- Evidence: at least one query; each re-runs and reproduces its number and was run by the agent
  in this episode (`evidence`); any failure fails the conclusion and is flagged.
- Magnitude is a subscore only (within a factor of two, same sign); prose is never scored.

Reward is 1 on success, else 0; the parts are subscores for analysis.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from typing import Any

from workgym.core.episode import Episode
from workgym.core.tasks import Task
from workgym.core.verdict import Status, Verdict
from workgym.envs.warehouse.investigate.evidence import (
    check_evidence,
    evidence_flags,
    observed_queries,
)
from workgym.envs.warehouse.investigate.frame import between
from workgym.envs.warehouse.investigate.manifest import Manifest
from workgym.envs.warehouse.investigate.slices import PredicateError, predicate_sql
from workgym.envs.warehouse.investigate.vocab import NORMAL, canonical
from workgym.envs.warehouse.runtime.conclusion_answer import ConclusionAnswer, parse_conclusion
from workgym.envs.warehouse.source.duck import qi
from workgym.verifiers.sql_exec import execute_sql

IOU_MIN = 0.8
MAX_WINDOW_FACTOR = 2.0
FLAG_ENUMERATION = "enumeration"
_SPLIT = re.compile(r"\s*(?:,|;|/|\||\+|&|\bor\b|\band\b)\s*", re.IGNORECASE)


def gold_of(task: Task) -> tuple[ConclusionAnswer, Manifest]:
    gold = ConclusionAnswer.model_validate(task.answer)
    if gold.manifest is None:
        raise ValueError(f"task {task.id} has no investigation manifest in its answer")
    return gold, Manifest.model_validate(gold.manifest)


def database_of(task: Task, manifest: Manifest, env_dir: str | Path) -> Path:
    return Path(env_dir) / str(task.meta.get("database") or manifest.database)


def names_several(term: str) -> bool:
    """The term lists two or more vocabulary types (an enumeration or a hedge)."""
    parts = [p for p in _SPLIT.split(term) if p.strip()]
    return len(parts) > 1 and sum(canonical(p) is not None for p in parts) >= 2


def parse_time(text: str) -> dt.datetime | None:
    """An ISO 8601 date or timestamp as naive UTC; None when it is not one."""
    value = text.strip()
    if not re.match(r"^\d{4}-\d{2}-\d{2}", value):
        return None
    try:
        found = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if found.tzinfo is not None:
        found = found.astimezone(dt.UTC).replace(tzinfo=None)
    return found


def window_problem(got: list[str], manifest: Manifest) -> str | None:
    planted = manifest.planted_window or manifest.window
    if len(got) != 2:
        return "the window needs [start, end]"
    start, end = parse_time(got[0]), parse_time(got[1])
    if start is None or end is None or end <= start:
        return f"window {got} is not two ISO 8601 times with start < end"
    longest = (manifest.window[1] - manifest.window[0]) * MAX_WINDOW_FACTOR
    if end - start > longest:
        return f"window longer than {longest}: too wide to locate the cause"
    if start >= planted[1] or end <= planted[0]:
        return "the window does not overlap the period the cause acted in"
    return None


def slice_iou(answer: ConclusionAnswer, manifest: Manifest, database: Path) -> tuple[float, str]:
    """IoU of the rows the two predicates select (baseline + window); (0, why) on failure."""
    frame = manifest.frame
    try:
        got = predicate_sql(answer.predicate, frame)
    except PredicateError as exc:
        return 0.0, f"predicate: {exc}"
    gold = predicate_sql(manifest.predicate, frame)
    sql = (
        f"SELECT count(*) FILTER (WHERE ({gold}) AND ({got})), "
        f"count(*) FILTER (WHERE ({gold}) OR ({got})) FROM {qi(frame.fact)} AS f "
        f"WHERE {between(frame, manifest.baseline[0], manifest.window[1])}"
    )
    result = execute_sql(sql, database, timeout_s=30.0, max_rows=1)
    if not result.ok:
        return 0.0, f"predicate does not run: {result.error}"
    inter, union = (int(v or 0) for v in result.rows[0])
    iou = inter / union if union else 0.0
    return iou, "" if iou >= IOU_MIN else f"slice IoU {iou:.2f} < {IOU_MIN}"


def _magnitude_ok(got: float | None, gold: float | None) -> float:
    if got is None or gold is None or gold == 0 or got == 0 or (got > 0) != (gold > 0):
        return 0.0
    return 1.0 if 0.5 <= got / gold <= 2.0 else 0.0


def verify_conclusion(
    task: Task,
    episode: Episode,
    db_path: str | Path | None = None,
    *,
    env_dir: str | Path | None = None,
) -> Verdict:
    """Score `episode.answer` against the task's manifest; the database is `db_path`, or the
    task's `meta["database"]` under `env_dir`."""
    _, manifest = gold_of(task)
    if db_path is not None:
        database = Path(db_path)
    elif env_dir is not None:
        database = database_of(task, manifest, env_dir)
    else:
        raise ValueError("verify_conclusion needs db_path or env_dir")
    if episode.answer is None:
        return Verdict.wrong(Status.no_answer)
    try:
        answer = parse_conclusion(episode.answer)
    except ValueError as exc:
        return Verdict.wrong(Status.parse_error, problems=[str(exc)])
    problems: list[str] = []
    flags: list[str] = []
    subscores: dict[str, float] = {}
    got_type = canonical(answer.cause_type)
    if got_type is None:
        several = names_several(answer.cause_type)
        if several:
            flags.append(FLAG_ENUMERATION)
        problems.append(
            f"{answer.cause_type!r} names several causes: commit to one"
            if several
            else f"{answer.cause_type!r} is not in the cause vocabulary"
        )
    elif got_type != manifest.cause_type:
        problems.append(f"{got_type} is not the cause")
    subscores["type"] = float(got_type == manifest.cause_type)
    if manifest.cause_type != NORMAL:
        iou, why = slice_iou(answer, manifest, database)
        subscores["iou"] = round(iou, 6)
        if why:
            problems.append(why)
        direction_ok = answer.direction == manifest.direction
        subscores["direction"] = float(direction_ok)
        if not direction_ok:
            problems.append(f"direction {answer.direction!r} is wrong")
        bad_window = window_problem(answer.window, manifest)
        subscores["window"] = float(bad_window is None)
        if bad_window:
            problems.append(bad_window)
        subscores["magnitude"] = _magnitude_ok(answer.magnitude, manifest.magnitude)
    queries = answer.queries()
    checks = check_evidence(queries, database, observed_queries(episode.tool_calls))
    flags += evidence_flags(checks)
    if not queries:
        problems.append("no evidence: cite at least one query you ran")
    problems += [f"evidence {i + 1}: {_why(c)}" for i, c in enumerate(checks) if not c.ok]
    subscores["evidence"] = float(bool(checks) and all(c.ok for c in checks))
    return Verdict.all_or_nothing(problems, subscores, flags=flags)


def _why(check: Any) -> str:
    if not check.observed:
        return "never run in this episode"
    if check.status != "ok":
        return f"does not re-run ({check.status}: {check.error})"
    return f"does not reproduce the value {check.value}"
