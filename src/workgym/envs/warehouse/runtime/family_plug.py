"""The plug point for warehouse task families that sit above `generate` (F9, investigations).

The warehouse's stages import downward only: source < schema < runtime < generate < investigate
(docs/architecture.md, enforced by tests/test_layers.py). An investigation family builds its tasks
with the generator's phrasing and scores them with its own verifier, so it sits above both; yet
`generate` has to ask it for tasks and `WarehouseEnv` has to hand it the tasks whose answer kind
it owns. Neither may import it, not even through an `importlib` string: a family is declared as
an entry point in the group `workgym.warehouse_families` (workgym's own F9 in pyproject.toml; a
separate package may declare its own) and found through the registry. Nothing is imported until a
family is asked for.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any, Protocol

from workgym.core.environment import DataCheck
from workgym.core.episode import Episode
from workgym.core.messages import Message
from workgym.core.registry import Registry
from workgym.core.tasks import Task
from workgym.core.verdict import Verdict
from workgym.envs.warehouse.schema.card import SchemaCard

GROUP = "workgym.warehouse_families"


class FamilyReport(Protocol):
    """Why a family built fewer tasks than asked (shown in the generation report)."""

    @property
    def skipped(self) -> list[str]: ...  # tables or units that cannot host a task

    @property
    def missing(self) -> list[str]: ...  # what no attempt could build

    @property
    def min_rows(self) -> int: ...  # the smallest table the family considers

    def rejection_summary(self) -> str: ...  # every rejected attempt, per table and reason

    def rejection_records(self) -> list[dict[str, object]]: ...  # the same, as records


class BuiltTasks(Protocol):
    """What a family's `build` returns: its tasks (ids, prompts, answers, meta) and its report."""

    @property
    def tasks(self) -> list[Task]: ...

    @property
    def report(self) -> FamilyReport: ...


class WarehouseFamily(Protocol):
    """A task family with its own answer kind: how it builds, scores and solves its tasks, and
    what it shows the guards (the `ConclusionAnswers` surface)."""

    @property
    def answer_kind(self) -> str: ...  # the kind its tasks declare in `answer["kind"]`

    def build(self, snapshot: Path, card: SchemaCard, rng: random.Random, n: int) -> BuiltTasks:
        """`n` tasks on the snapshot (writing any files they need beside it), drawn from `rng`."""
        ...

    def verify(self, task: Task, episode: Episode, env_dir: Path) -> Verdict: ...

    def oracle(self, task: Task) -> list[Message]:
        """Assistant turns that solve the task through the environment's real tools."""
        ...

    def verify_data(self, env_dir: Path, tasks: list[Task]) -> DataCheck:
        """The family's own data files (e.g. planted copies) against their recorded digests."""
        ...

    def cause_vocabulary(self) -> dict[str, list[str]]: ...

    def planted_causes(self, task: Task) -> list[dict[str, Any]]: ...

    def submit_causes(
        self, task: Task, causes: Any, *, observe: bool = True, text: str = ""
    ) -> list[Message]: ...


FAMILIES: Registry[WarehouseFamily] = Registry(
    "warehouse task family",
    GROUP,
    hint=f'declare one under [project.entry-points."{GROUP}"] in its package',
)


def family(name: str) -> WarehouseFamily | None:
    """The family registered as `name`, or None when no installed distribution declares it."""
    return FAMILIES.load(name) if name in FAMILIES else None


def family_of_kind(kind: str) -> WarehouseFamily:
    """The family whose tasks declare answer kind `kind`; a one-line error when none does."""
    for name in FAMILIES.names():
        found = FAMILIES.load(name)
        if found.answer_kind == kind:
            return found
    stale = FAMILIES.stale_install()
    raise ValueError(
        f"no warehouse task family scores {kind!r} answers (none declared in the entry-point "
        f"group {GROUP})" + (f"; {stale}" if stale else "; install the package that provides it")
    )
