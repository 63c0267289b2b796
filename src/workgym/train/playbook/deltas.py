"""Deltas: the only way a playbook changes. Whole-playbook rewrites do not exist.

Each delta is one small, checkable operation on named entries. `apply_deltas` applies what is
valid, in order, and returns the new playbook together with every op it applied and every op it
refused and why, so a reflector's bad idea costs one log line, not a corrupted playbook.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict

from workgym.train.playbook.entries import (
    MAX_WORDS,
    Counters,
    Entry,
    EntryStatus,
    Provenance,
    entry_id,
)
from workgym.train.playbook.playbook import Playbook
from workgym.train.playbook.text import normalize, word_count

Tag = Literal["helpful", "harmful", "neutral"]


class DeltaOp(StrEnum):
    ADD = "ADD"  # a new entry in a section
    UPDATE = "UPDATE"  # new text (and optionally section) for one entry
    MERGE = "MERGE"  # two or more entries become the first one, with new text
    DELETE = "DELETE"  # retire entries
    TAG = "TAG"  # count entries as helpful, harmful or neutral; the rendered text is unchanged


class Delta(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str = ""
    op: DeltaOp
    target_ids: tuple[str, ...] = ()
    section: str | None = None
    text: str = ""
    tag: Tag | None = None
    rationale: str = ""
    evidence: tuple[str, ...] = ()  # episode refs the reflector cited
    tasks: tuple[str, ...] = ()  # the tasks of that evidence
    reflection: str | None = None

    @property
    def changes_render(self) -> bool:
        return self.op != DeltaOp.TAG

    def describe(self) -> str:
        target = ",".join(self.target_ids)
        where = f" {target}" if target else ""
        sec = f" [{self.section}]" if self.section else ""
        body = f' "{self.text}"' if self.text else (f" {self.tag}" if self.tag else "")
        return f"{self.id or '-'} {self.op.value}{where}{sec}{body}"


class Rejection(BaseModel):
    """A delta that was not applied, the stage that refused it, and why (kept as a negative
    example for the reflector)."""

    model_config = ConfigDict(frozen=True)

    delta: Delta
    stage: str
    reason: str


class ApplyResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    playbook: Playbook
    applied: tuple[Delta, ...] = ()
    rejected: tuple[Rejection, ...] = ()


def _provenance(delta: Delta) -> Provenance:
    return Provenance(
        tasks=delta.tasks,
        episodes=delta.evidence,
        reflections=(delta.reflection,) if delta.reflection else (),
        deltas=(delta.id,) if delta.id else (),
    )


class _Apply:
    """Mutable working copy used inside one `apply_deltas` call only."""

    def __init__(self, playbook: Playbook, status: EntryStatus, max_words: int) -> None:
        self.entries = list(playbook.entries)
        self.next_id = playbook.next_id
        self.sections = playbook.sections
        self.status = status
        self.max_words = max_words

    def index(self, ident: str) -> int:
        for i, e in enumerate(self.entries):
            if e.id == ident:
                return i
        raise LookupError(f"no entry {ident}")

    def check_text(self, delta: Delta) -> str | None:
        text = normalize(delta.text)
        if not text:
            return f"{delta.op.value} needs text"
        n = word_count(text)
        if n > self.max_words:
            return f"text has {n} words; the limit is {self.max_words}"
        return None

    def check_section(self, section: str | None, required: bool) -> str | None:
        if section is None:
            return "ADD needs a section" if required else None
        if section not in self.sections:
            return f"unknown section {section!r}; use one of {', '.join(self.sections)}"
        return None

    def check_targets(self, delta: Delta, least: int, most: int | None) -> str | None:
        ids = delta.target_ids
        if len(ids) < least or (most is not None and len(ids) > most):
            want = f"exactly {least}" if most == least else f"at least {least}"
            return f"{delta.op.value} takes {want} target id(s), got {len(ids)}"
        if len(set(ids)) != len(ids):
            return "a target id is repeated"
        for ident in ids:
            try:
                entry = self.entries[self.index(ident)]
            except LookupError:
                return f"no entry {ident}"
            if not entry.rendered and delta.op != DeltaOp.TAG:
                return f"entry {ident} is retired"
        return None

    def apply(self, delta: Delta) -> str | None:
        """Apply one delta; return the reason it was refused, or None."""
        op = delta.op
        if op == DeltaOp.ADD:
            problem = (
                ("ADD takes no target ids" if delta.target_ids else None)
                or self.check_section(delta.section, required=True)
                or self.check_text(delta)
            )
            if problem:
                return problem
            assert delta.section is not None
            self.entries.append(
                Entry(
                    id=entry_id(self.next_id),
                    section=delta.section,
                    text=normalize(delta.text),
                    status=self.status,
                    provenance=_provenance(delta),
                )
            )
            self.next_id += 1
            return None
        if op == DeltaOp.UPDATE:
            problem = (
                self.check_targets(delta, 1, 1)
                or self.check_section(delta.section, required=False)
                or self.check_text(delta)
            )
            if problem:
                return problem
            i = self.index(delta.target_ids[0])
            old = self.entries[i]
            self.entries[i] = old.model_copy(
                update={
                    "text": normalize(delta.text),
                    "section": delta.section or old.section,
                    "status": self.status,
                    "provenance": old.provenance + _provenance(delta),
                }
            )
            return None
        if op == DeltaOp.MERGE:
            problem = (
                self.check_targets(delta, 2, None)
                or self.check_section(delta.section, required=False)
                or self.check_text(delta)
            )
            if problem:
                return problem
            keep, *gone = (self.index(t) for t in delta.target_ids)
            kept = self.entries[keep]
            counters, prov = kept.counters, kept.provenance + _provenance(delta)
            for i in gone:
                old = self.entries[i]
                counters, prov = counters + old.counters, prov + old.provenance
                self.entries[i] = old.model_copy(
                    update={
                        "status": EntryStatus.retired,
                        "provenance": old.provenance
                        + Provenance(notes=(f"merged into {kept.id} by {delta.id or 'MERGE'}",)),
                    }
                )
            self.entries[keep] = kept.model_copy(
                update={
                    "text": normalize(delta.text),
                    "section": delta.section or kept.section,
                    "status": self.status,
                    "counters": counters,
                    "provenance": prov,
                }
            )
            return None
        if op == DeltaOp.DELETE:
            problem = self.check_targets(delta, 1, None)
            if problem:
                return problem
            for ident in delta.target_ids:
                i = self.index(ident)
                old = self.entries[i]
                self.entries[i] = old.model_copy(
                    update={
                        "status": EntryStatus.retired,
                        "provenance": old.provenance + _provenance(delta),
                    }
                )
            return None
        # TAG
        problem = self.check_targets(delta, 1, None) or (
            None if delta.tag else "TAG needs a tag: helpful, harmful or neutral"
        )
        if problem:
            return problem
        for ident in delta.target_ids:
            i = self.index(ident)
            old = self.entries[i]
            self.entries[i] = old.model_copy(
                update={"counters": old.counters + Counters(**{str(delta.tag): 1})}
            )
        return None


def apply_deltas(
    playbook: Playbook,
    deltas: Sequence[Delta] | Iterable[Delta],
    *,
    status: EntryStatus = EntryStatus.candidate,
    max_words: int = MAX_WORDS,
) -> ApplyResult:
    """Apply deltas in order. New and rewritten entries get `status` (candidate until gated)."""
    work = _Apply(playbook, status, max_words)
    applied: list[Delta] = []
    rejected: list[Rejection] = []
    for delta in deltas:
        reason = work.apply(delta)
        if reason is None:
            applied.append(delta)
        else:
            rejected.append(Rejection(delta=delta, stage="schema", reason=reason))
    new = playbook.evolve(work.entries, next_id=work.next_id) if applied else playbook
    return ApplyResult(playbook=new, applied=tuple(applied), rejected=tuple(rejected))
