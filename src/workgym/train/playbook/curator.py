"""The curator: deterministic code that turns a reflection's lessons into at most a few deltas.

Nothing a model says reaches the playbook without passing here: the schema, the word limit, the
sections, the evidence, the leakage lint, de-duplication (an ADD that nearly repeats an entry
becomes an UPDATE of it, or a MERGE when it repeats several), the memory of what the gates already
rejected, the per-iteration limit and the token budget. It costs no tokens; its ledger role is
there for a model-backed curator, which this module does not use.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import BaseModel, ConfigDict

from workgym.train.playbook.deltas import Delta, DeltaOp, Rejection, apply_deltas
from workgym.train.playbook.leak_lint import LeakLint
from workgym.train.playbook.lessons import Reflection
from workgym.train.playbook.playbook import Playbook
from workgym.train.playbook.text import normalize, similarity, word_count


class Curation(BaseModel):
    model_config = ConfigDict(frozen=True)

    deltas: tuple[Delta, ...] = ()  # to be gated, in order
    tags: tuple[Delta, ...] = ()  # counter-only TAG deltas, applied without a gate
    rejected: tuple[Rejection, ...] = ()
    next_delta: int = 1


ORPHAN_NOTE = "(an UPDATE of ids that name no entry, read as an ADD) "


def _orphan_update_as_add(delta: Delta, playbook: Playbook) -> Delta:
    """An UPDATE none of whose target ids names an entry is read as the ADD it means.

    Small reflectors do this: on an empty playbook the 1.5B wrote its right lesson three times as
    an UPDATE of ids it made up from the task's part codes, and the schema check refused it each
    time (docs/results.md, claim 3 on toy-rules; decision 0171). An UPDATE that names a real
    entry, or has no text or section, is left for the schema check to judge as before."""
    if delta.op != DeltaOp.UPDATE or not delta.text or delta.section is None:
        return delta
    if not delta.target_ids or any(playbook.has(ident) for ident in delta.target_ids):
        return delta
    return delta.model_copy(
        update={"op": DeltaOp.ADD, "target_ids": (), "rationale": ORPHAN_NOTE + delta.rationale}
    )


def delta_id(number: int) -> str:
    return f"d-{number:04d}"


class Curator:
    def __init__(
        self,
        *,
        lint: LeakLint,
        max_deltas: int = 3,
        max_words: int = 60,
        dedup_similarity: float = 0.9,
    ) -> None:
        self.lint = lint
        self.max_deltas = max_deltas
        self.max_words = max_words
        self.dedup_similarity = dedup_similarity

    def curate(
        self,
        reflection: Reflection,
        playbook: Playbook,
        *,
        refs: Mapping[str, tuple[str, str]],
        next_delta: int,
        reflection_id: str,
        gate_rejected: Sequence[Delta] = (),
    ) -> Curation:
        """`refs` maps the labels the reflector saw (E1, ...) to (episode ref, task id)."""
        kept: list[Delta] = []
        tags: list[Delta] = []
        rejected: list[Rejection] = []
        number = next_delta

        def new_id() -> str:
            nonlocal number
            number += 1
            return delta_id(number - 1)

        for vote in reflection.tags:
            if playbook.has(vote.id):
                tags.append(
                    Delta(
                        id=new_id(),
                        op=DeltaOp.TAG,
                        target_ids=(vote.id,),
                        tag=vote.tag,
                        reflection=reflection_id,
                    )
                )
        for lesson in reflection.lessons:
            known = [refs[e] for e in lesson.evidence if e in refs]
            delta = Delta(
                id=new_id(),
                op=lesson.op,
                target_ids=lesson.target_ids,
                section=lesson.section,
                text=normalize(lesson.text),
                tag=lesson.tag,
                rationale=lesson.rationale,
                evidence=tuple(ref for ref, _ in known),
                tasks=tuple(dict.fromkeys(task for _, task in known)),
                reflection=reflection_id,
            )
            if delta.op == DeltaOp.TAG:
                tags.append(delta)
                continue
            delta = _orphan_update_as_add(delta, playbook)
            stage, reason, delta = self._check(delta, playbook, kept, gate_rejected)
            if stage is None and len(kept) >= self.max_deltas:
                stage, reason = "limit", f"over the limit of {self.max_deltas} deltas an iteration"
            if stage is not None:
                rejected.append(Rejection(delta=delta, stage=stage, reason=reason))
            else:
                kept.append(delta)
        kept, rejected = self._fit(playbook, kept, rejected)
        return Curation(
            deltas=tuple(kept), tags=tuple(tags), rejected=tuple(rejected), next_delta=number
        )

    def _check(
        self, delta: Delta, playbook: Playbook, batch: list[Delta], gate_rejected: Sequence[Delta]
    ) -> tuple[str | None, str, Delta]:
        if not delta.evidence:
            return "evidence", "no evidence: cite the episode ids shown (E1, E2, ...)", delta
        if delta.op != DeltaOp.DELETE:
            if not delta.text:
                return "schema", f"{delta.op.value} needs text", delta
            n = word_count(delta.text)
            if n > self.max_words:
                return "schema", f"text has {n} words; the limit is {self.max_words}", delta
            if delta.op == DeltaOp.ADD and delta.section not in playbook.sections:
                return (
                    "schema",
                    f"unknown section {delta.section!r}; use one of {', '.join(playbook.sections)}",
                    delta,
                )
            findings = self.lint.check(delta.text)
            if findings:
                return "lint", "; ".join(f"{f.rule}: {f.detail}" for f in findings), delta
        if delta.op == DeltaOp.ADD:
            delta = self._dedup(delta, playbook)
        target = delta.target_ids[0] if len(delta.target_ids) == 1 else None
        if (
            delta.op == DeltaOp.UPDATE
            and target
            and playbook.has(target)
            and playbook.get(target).text.lower() == delta.text.lower()
        ):
            return "dedup", f"repeats {target} word for word", delta
        for other in batch:
            if (
                delta.text
                and other.text
                and similarity(delta.text, other.text) >= self.dedup_similarity
            ):
                return "dedup", f"repeats {other.id} of this batch", delta
            if set(delta.target_ids) & set(other.target_ids):
                return "dedup", f"touches the same entry as {other.id} of this batch", delta
        for old in gate_rejected:
            same_op = old.op == delta.op and old.target_ids == delta.target_ids
            if (
                delta.text
                and old.text
                and similarity(delta.text, old.text) >= self.dedup_similarity
            ):
                return "memory", f"the gates already rejected this as {old.id}", delta
            if not delta.text and same_op:
                return "memory", f"the gates already rejected this as {old.id}", delta
        return None, "", delta

    def _dedup(self, delta: Delta, playbook: Playbook) -> Delta:
        """A near-duplicate ADD becomes an UPDATE (one match) or a MERGE (several)."""
        matches = [
            e.id for e in playbook.live if similarity(e.text, delta.text) >= self.dedup_similarity
        ]
        if not matches:
            return delta
        op = DeltaOp.UPDATE if len(matches) == 1 else DeltaOp.MERGE
        note = f"near-duplicate ADD of {', '.join(matches)} turned into {op.value}"
        return delta.model_copy(
            update={
                "op": op,
                "target_ids": tuple(matches),
                "section": None,
                "rationale": f"{delta.rationale} ({note})".strip(),
            }
        )

    def _fit(
        self, playbook: Playbook, kept: list[Delta], rejected: list[Rejection]
    ) -> tuple[list[Delta], list[Rejection]]:
        """Schema-check the batch against the playbook and keep it within the token budget."""
        result = apply_deltas(playbook, kept, max_words=self.max_words)
        rejected = rejected + list(result.rejected)
        ok = [d for d in kept if d in result.applied]
        while ok and apply_deltas(playbook, ok, max_words=self.max_words).playbook.over_budget:
            adds = [d for d in ok if d.op == DeltaOp.ADD] or ok
            drop = adds[-1]
            ok.remove(drop)
            rejected.append(
                Rejection(
                    delta=drop,
                    stage="budget",
                    reason=f"the playbook would pass its budget of {playbook.token_budget} tokens",
                )
            )
        return ok, rejected
