"""What the guards' investigation probes see of warehouse F9 tasks (`ConclusionAnswers`).

The guards' probes (workgym.guards.catalog_investigation) speak of a list of causes; a warehouse
conclusion names one. Here one planted cause is a one-element list, and a list of several causes
is submitted the way an agent would have to write it in this schema: one conclusion whose
`cause_type` names them all ("a, b") — which the verifier refuses as an enumeration. A warehouse
slice has no downstream component, so `symptom_components` is empty (the symptom at the level
of types is attacked by `investigate.probes`).
"""

from __future__ import annotations

from typing import Any

from workgym.core.messages import Message
from workgym.core.tasks import Task
from workgym.envs.warehouse.investigate.oracle import conclusion_turns
from workgym.envs.warehouse.investigate.vocab import ALIASES
from workgym.envs.warehouse.runtime.conclusion_answer import ConclusionAnswer

CAUSE_FIELDS = ("cause_type", "predicate", "window", "direction", "magnitude", "evidence")


def is_investigation(task: Task) -> bool:
    return isinstance(task.answer, dict) and task.answer.get("kind") == "conclusion"


def cause_vocabulary() -> dict[str, list[str]]:
    return {cause: list(aliases) for cause, aliases in ALIASES.items()}


def planted_causes(task: Task) -> list[dict[str, Any]]:
    """The gold cause as a one-element list (empty for tasks that are not investigations)."""
    if not is_investigation(task):
        return []
    gold = ConclusionAnswer.model_validate(task.answer).submission()
    return [{k: gold[k] for k in CAUSE_FIELDS}]


def symptom_components(task: Task) -> list[str]:
    return []


def submit_causes(
    task: Task, causes: Any, *, observe: bool = True, text: str = ""
) -> list[Message]:
    """Turns that (when `observe`) run the cited evidence queries, then submit one conclusion."""
    items = [c for c in causes if isinstance(c, dict)] if isinstance(causes, list) else []
    first = dict(items[0]) if items else {}
    answer: dict[str, Any] = {"kind": "conclusion"}
    answer |= {k: first[k] for k in CAUSE_FIELDS if k in first}
    types = [str(c.get("cause_type", "")) for c in items]
    answer["cause_type"] = ", ".join(types) if len(types) != 1 else types[0]
    if text:
        answer["prose"] = text
    evidence = answer.get("evidence") or []
    run = [e if isinstance(e, str) else str(e.get("sql", "")) for e in evidence] if observe else []
    return conclusion_turns(answer, run=run, prefix="probe")
