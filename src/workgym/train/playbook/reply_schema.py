"""The JSON schema of a reflection reply, so a runtime that constrains decoding can enforce it.

Small reflectors know what to say before they know how to say it: the 1.5B stated the right
toy-rules lesson as an UPDATE of entry ids that did not exist (decision 0171), and a parser can
only guess what was meant. A schema closes those doors at sampling time: `op` can only be ADD
while the playbook is empty, `section` is one of the playbook's sections, `target_ids` and
`tags` name live entries only, `evidence` names the episode labels the prompt showed. llama.cpp
compiles the schema into a grammar; OpenAI-compatible servers take it as `response_format`;
`hf/` ignores it, and `lessons.parse_reflection` stays the one reader either way.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from workgym.train.playbook.deltas import DeltaOp
from workgym.train.playbook.lessons import TAGS

MAX_DIAGNOSES = 3
# Characters, generous for `max_words`-word entries; they bound a constrained reply's strings so
# that a small model cannot spend its whole budget inside one.
MAX_TEXT_CHARS = 400
# The ops a lesson may carry (`reflect.RULES`); TAG votes travel in the reply's `tags` list.
LESSON_OPS = (DeltaOp.ADD, DeltaOp.UPDATE, DeltaOp.MERGE, DeltaOp.DELETE)


def _enum_list(values: Sequence[str], *, max_items: int | None = None) -> dict[str, Any]:
    """An array whose items are drawn from `values` (empty when there are none), at most
    `max_items` long: a small model repeats a list item until its budget runs out otherwise."""
    if not values:
        return {"type": "array", "maxItems": 0}
    schema: dict[str, Any] = {"type": "array", "items": {"type": "string", "enum": list(values)}}
    if max_items is not None:
        schema["maxItems"] = max_items
    return schema


def reflection_schema(
    *,
    sections: Sequence[str],
    entry_ids: Sequence[str],
    evidence: Sequence[str],
    max_lessons: int,
) -> dict[str, Any]:
    """The reply shape `reflect.RULES` describes, narrowed to what this iteration can accept."""
    ops = [op.value for op in LESSON_OPS] if entry_ids else [DeltaOp.ADD.value]
    lesson = {
        "type": "object",
        "properties": {
            "op": {"type": "string", "enum": ops},
            "section": {"type": "string", "enum": list(sections)},
            "text": {"type": "string", "maxLength": MAX_TEXT_CHARS},
            "target_ids": _enum_list(entry_ids, max_items=len(entry_ids)),
            "rationale": {"type": "string", "maxLength": MAX_TEXT_CHARS},
            "evidence": _enum_list(evidence, max_items=len(evidence)),
        },
        "required": ["op", "section", "text", "target_ids", "rationale", "evidence"],
        "additionalProperties": False,
    }
    tag = {
        "type": "object",
        "properties": {
            "id": {"type": "string", "enum": list(entry_ids)},
            "tag": {"type": "string", "enum": list(TAGS)},
        },
        "required": ["id", "tag"],
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "properties": {
            "diagnoses": {
                "type": "array",
                "items": {"type": "string", "maxLength": MAX_TEXT_CHARS},
                "maxItems": MAX_DIAGNOSES,
            },
            "lessons": {"type": "array", "items": lesson, "maxItems": max_lessons},
            "tags": (
                {"type": "array", "items": tag, "maxItems": len(entry_ids)}
                if entry_ids
                else {"type": "array", "maxItems": 0}
            ),
        },
        "required": ["diagnoses", "lessons", "tags"],
        "additionalProperties": False,
    }
