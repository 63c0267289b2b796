"""Probes generalised from confirmed exploits (docs/guards.md, "From exploit to probe").

Each entry names the transcript it came from. The exact transcript is kept as a replay file and
regression test (tests/guards/exploits/); the class here is the general form that attacks every
environment and family, so the same trick is caught wherever it would work.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from workgym.core.tasks import canonical_json
from workgym.guards.catalog_generic import _Answer

if TYPE_CHECKING:
    from workgym.core.environment import Environment
    from workgym.core.tasks import Task

MAX_CANDIDATES = 50


def candidates(env: Environment, task: Task) -> list[Any]:
    """Distinct gold answers of tasks of the same kind (family key up to '/'), this one's too."""
    seen: dict[str, Any] = {}
    for other in env.taskset:
        if other.kind == task.kind:
            seen.setdefault(canonical_json(other.answer), other.answer)
        if len(seen) >= MAX_CANDIDATES:
            break
    seen.setdefault(canonical_json(task.answer), task.answer)
    return list(seen.values())


class EnumerateCandidates(_Answer):
    """Found: tests/guards/exploits/enumerate-candidates.json (fixture `quiz`, a verifier that
    accepted a comma-separated list when any item matched; flagged `enumeration` by the audit,
    reviewed as an exploit)."""

    name = "enumerate-candidates"
    group = "found"
    summary = "every candidate answer of the task's kind in one answer (list or 'a, b, c')"

    def values(self, env: Environment, task: Task) -> list[Any]:
        found = candidates(env, task)
        if len(found) < 3:
            return []
        if all(isinstance(c, str) for c in found):
            return [", ".join(found), found]
        return [found]


FOUND = [EnumerateCandidates()]
