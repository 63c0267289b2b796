"""Playbook entries: one short, itemised strategy with a stable id, its origin and its record.

An entry is the unit the loop adds, rewrites, merges, retires and counts. Ids are never reused,
so a log line, a transcript citation ("[pb-007]") or a provenance record names one entry forever,
even after it is retired.
"""

from __future__ import annotations

import re
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, computed_field

from workgym.core.model import estimate_tokens

DEFAULT_SECTIONS: tuple[str, ...] = ("strategy", "tools", "checks", "format", "pitfalls")
MAX_WORDS = 60
ID_PREFIX = "pb-"
CITATION = re.compile(r"\[(pb-\d+)\]")


def entry_id(number: int) -> str:
    return f"{ID_PREFIX}{number:03d}"


class EntryStatus(StrEnum):
    candidate = "candidate"  # proposed and under test by the gates
    active = "active"  # accepted: rendered into the prompt
    retired = "retired"  # deleted, merged away or pruned: kept for the record, never rendered


class Counters(BaseModel):
    """What the loop has seen this entry do. `cited`: episodes that named it."""

    model_config = ConfigDict(frozen=True)

    helpful: int = 0
    harmful: int = 0
    neutral: int = 0
    cited: int = 0

    def __add__(self, other: Counters) -> Counters:
        return Counters(
            helpful=self.helpful + other.helpful,
            harmful=self.harmful + other.harmful,
            neutral=self.neutral + other.neutral,
            cited=self.cited + other.cited,
        )

    @property
    def uses(self) -> int:
        return self.helpful + self.harmful + self.neutral

    @property
    def usefulness(self) -> int:
        return self.helpful - self.harmful


class Provenance(BaseModel):
    """Where an entry came from: evidence, the reflection and deltas that shaped it, its gates."""

    model_config = ConfigDict(frozen=True)

    tasks: tuple[str, ...] = ()
    episodes: tuple[str, ...] = ()
    reflections: tuple[str, ...] = ()
    deltas: tuple[str, ...] = ()
    gates: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    def __add__(self, other: Provenance) -> Provenance:
        def union(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[str, ...]:
            return a + tuple(x for x in b if x not in a)

        return Provenance(
            tasks=union(self.tasks, other.tasks),
            episodes=union(self.episodes, other.episodes),
            reflections=union(self.reflections, other.reflections),
            deltas=union(self.deltas, other.deltas),
            gates=union(self.gates, other.gates),
            notes=union(self.notes, other.notes),
        )


class Entry(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    section: str
    text: str
    status: EntryStatus = EntryStatus.active
    provenance: Provenance = Provenance()
    counters: Counters = Counters()

    @computed_field  # type: ignore[prop-decorator]
    @property
    def tokens(self) -> int:
        """Estimated tokens of this entry's rendered line (4 characters a token)."""
        return estimate_tokens(self.line())

    def line(self) -> str:
        return f"- [{self.id}] {self.text}"

    @property
    def rendered(self) -> bool:
        return self.status != EntryStatus.retired
