"""The leakage lint for worked examples: from a train task only, and no dev or test answer or id.

A worked example necessarily carries its own train task's answer, so the playbook lint's rule
against train answers cannot apply; the rules here are the ones that still can:

- `outside_train`: the example's task is not a train task of this environment (a dev or test
  task, or one the environment does not have);
- `held_out`: the text shares a piece of a dev or test answer or task id (`secret_pieces`, the
  rule `leak_lint` applies to train answers);
- `grader`, `claim_success`: as in `leak_lint`.

Training code never holds the test split (`rollouts.sealed_view`), so the test answers and ids
are kept here only as SHA-256 digests of their words and n-grams, taken by `HeldOut.of` before
the environment is sealed: enough to recognise a leak, never enough to read an answer.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict

from workgym.core.tasks import SplitSpec, Task, TaskSet
from workgym.train.playbook.bootstrap.examples import WorkedExample
from workgym.train.playbook.leak_lint import (
    LintFinding,
    answer_leaves,
    secret_pieces,
    text_findings,
)
from workgym.train.playbook.scoring import prompt_text
from workgym.train.playbook.text import ngrams, words


def _digest(gram: tuple[str, ...]) -> str:
    return hashlib.sha256(" ".join(gram).encode()).hexdigest()[:20]


class HeldOut(BaseModel):
    """Digests of the dev and test answers and ids, and the split rule to place a family."""

    model_config = ConfigDict(frozen=True)

    digests: frozenset[str]
    lengths: frozenset[int]
    split_spec: SplitSpec

    @classmethod
    def of(cls, tasks: TaskSet) -> HeldOut:
        """From the full task set, before it is sealed: this is the only place the test split's
        answers are read, and only their digests leave it. A piece that train tasks show too (in
        an id, an answer or a prompt) reveals nothing, so it is not a secret: without this, an
        answer word shared by every split ("approved", "120") would refuse every example."""
        grams: set[tuple[str, ...]] = set()
        seen: list[str] = []
        for task in tasks:
            if tasks.split_of(task) == "train":
                seen += [task.id, prompt_text(task), *answer_leaves(task.answer)]
                continue
            grams |= secret_pieces(task.id)
            for leaf in answer_leaves(task.answer):
                grams |= secret_pieces(leaf)
        sizes = {len(g) for g in grams}
        grams -= {g for text in seen for n in sizes for g in ngrams(words(text), n)}
        return cls(
            digests=frozenset(_digest(g) for g in grams),
            lengths=frozenset(len(g) for g in grams),
            split_spec=tasks.split_spec,
        )

    def shared(self, text: str) -> list[str]:
        toks = words(text)
        hits = {g for n in self.lengths for g in ngrams(toks, n) if _digest(g) in self.digests}
        return sorted(" ".join(g) for g in hits)


class ExampleLint:
    """Built once from the train tasks and the held-out digests; `check` is pure."""

    def __init__(self, train: Iterable[Task], held_out: HeldOut) -> None:
        self.train = {t.id: t for t in train}
        self.held_out = held_out

    def check(self, example: WorkedExample) -> list[LintFinding]:
        findings: list[LintFinding] = []
        task = self.train.get(example.task_id)
        split = self.held_out.split_spec.assign(example.family)
        if task is None or task.family != example.family or split != "train":
            where = (
                "not a task of this environment"
                if task is None and split == "train"
                else (f"a {split} task" if split != "train" else "family does not match its task")
            )
            findings.append(
                LintFinding(
                    rule="outside_train",
                    detail=f"worked example from {example.task_id!r} ({where}); "
                    "worked examples come from train tasks only",
                )
            )
        shared = self.held_out.shared(example.text)
        if shared:
            findings.append(
                LintFinding(
                    rule="held_out",
                    detail=f"shares text with a dev or test answer or task id: {shared[:3]}",
                )
            )
        return findings + text_findings(example.text)
