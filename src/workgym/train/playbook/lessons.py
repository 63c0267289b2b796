"""What a reflection returns, and a parser that survives what real models actually send.

The reflector is asked for strict JSON, and real models still wrap it in prose or code fences, use
other key names, send one string where a list was asked for, or invent ops. The parser keeps every
well-formed lesson, drops the rest with a reason (recorded in the run log), and never raises: a
broken reflection costs one iteration's lessons, not the run.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict

from workgym.train.playbook.deltas import DeltaOp, Tag

TAGS: tuple[Tag, ...] = ("helpful", "harmful", "neutral")


class Lesson(BaseModel):
    """One proposed change, as the reflector phrased it (the curator turns it into a Delta)."""

    model_config = ConfigDict(frozen=True)

    op: DeltaOp = DeltaOp.ADD
    section: str | None = None
    text: str = ""
    target_ids: tuple[str, ...] = ()
    tag: Tag | None = None
    rationale: str = ""
    evidence: tuple[str, ...] = ()


class TagVote(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    tag: Tag


class Reflection(BaseModel):
    model_config = ConfigDict(frozen=True)

    diagnoses: tuple[str, ...] = ()
    lessons: tuple[Lesson, ...] = ()
    tags: tuple[TagVote, ...] = ()
    problems: tuple[str, ...] = ()  # parts of the reply that were dropped, and why
    error: str | None = None  # set when nothing usable came back


def _json_object(raw: str) -> dict[str, Any] | None:
    """The reply's JSON object: the whole text, a fenced block, or the first {...} that parses."""
    text = raw.strip()
    if text.startswith("```"):
        text = text.split("\n", 1)[1] if "\n" in text else ""
        text = text.rsplit("```", 1)[0]
    try:
        value = json.loads(text)
        if isinstance(value, dict):
            return value
    except ValueError:
        pass
    decoder = json.JSONDecoder()
    best: dict[str, Any] | None = None
    for start, char in enumerate(raw):
        if char != "{":
            continue
        try:
            value, _ = decoder.raw_decode(raw, start)
        except ValueError:
            continue
        if isinstance(value, dict):
            if "lessons" in value:
                return value
            best = best or value
    return best


def _first(d: dict[str, Any], *keys: str) -> Any:
    for key in keys:
        if d.get(key) not in (None, "", []):
            return d[key]
    return None


def _strings(value: Any) -> tuple[str, ...] | None:
    if value is None:
        return ()
    if isinstance(value, str | int):
        return (str(value),)
    if isinstance(value, list) and all(isinstance(v, str | int) for v in value):
        return tuple(str(v) for v in value)
    return None


def _lesson(i: int, d: Any) -> tuple[Lesson | None, str | None]:
    where = f"lesson {i + 1}"
    if not isinstance(d, dict):
        return None, f"{where}: not an object"
    op_raw = _first(d, "op", "operation", "action", "type") or "ADD"
    op_name = str(op_raw).strip().upper()
    if op_name not in DeltaOp.__members__:
        return None, f"{where}: unknown op {op_raw!r}"
    text = _first(d, "text", "content", "lesson", "entry")
    if text is not None and not isinstance(text, str):
        return None, f"{where}: text is not a string"
    section = _first(d, "section", "category")
    if section is not None and not isinstance(section, str):
        return None, f"{where}: section is not a string"
    targets = _strings(_first(d, "target_ids", "targets", "target_id", "target"))
    evidence = _strings(_first(d, "evidence", "evidence_ids", "episodes", "episode_ids"))
    if targets is None or evidence is None:
        return None, f"{where}: target_ids and evidence must be lists of ids"
    tag = _first(d, "tag", "label")
    if tag is not None and str(tag).lower() not in TAGS:
        return None, f"{where}: tag {tag!r} is not one of {', '.join(TAGS)}"
    rationale = _first(d, "rationale", "reason", "why")
    lesson = Lesson(
        op=DeltaOp[op_name],
        section=section.strip().lower() if section else None,
        text=text or "",
        target_ids=targets,
        tag=str(tag).lower() if tag is not None else None,  # type: ignore[arg-type]
        rationale=rationale if isinstance(rationale, str) else "",
        evidence=evidence,
    )
    return lesson, None


def parse_reflection(raw: str, *, max_lessons: int = 5) -> Reflection:
    """Parse a reflector's reply defensively (see the module docstring); never raises."""
    obj = _json_object(raw)
    if obj is None:
        snippet = " ".join(raw.split())[:80]
        return Reflection(error=f"reply is not a JSON object: {snippet!r}")
    problems: list[str] = []
    raw_lessons = _first(obj, "lessons", "deltas", "operations", "ops") or []
    if not isinstance(raw_lessons, list):
        problems.append("lessons is not a list")
        raw_lessons = []
    lessons: list[Lesson] = []
    for i, item in enumerate(raw_lessons):
        lesson, problem = _lesson(i, item)
        if problem:
            problems.append(problem)
        elif lesson is not None:
            if len(lessons) >= max_lessons:
                problems.append(f"lesson {i + 1}: over the limit of {max_lessons} lessons")
                continue
            lessons.append(lesson)
    tags: list[TagVote] = []
    raw_tags = obj.get("tags") or []
    for i, item in enumerate(raw_tags if isinstance(raw_tags, list) else []):
        ident = item.get("id") if isinstance(item, dict) else None
        tag = str(item.get("tag", "")).lower() if isinstance(item, dict) else ""
        if isinstance(ident, str) and tag in TAGS:
            tags.append(TagVote(id=ident, tag=tag))  # type: ignore[arg-type]
        else:
            problems.append(f"tag {i + 1}: needs an entry id and one of {', '.join(TAGS)}")
    raw_diag = obj.get("diagnoses") or obj.get("diagnosis") or []
    if isinstance(raw_diag, str | dict):
        raw_diag = [raw_diag]
    diagnoses = tuple(
        (d if isinstance(d, str) else json.dumps(d, sort_keys=True))[:1000]
        for d in (raw_diag if isinstance(raw_diag, list) else [])
    )
    return Reflection(
        diagnoses=diagnoses, lessons=tuple(lessons), tags=tuple(tags), problems=tuple(problems)
    )
