"""F9 as a warehouse task family: what `generate` and `WarehouseEnv` reach through the registry.

Investigations sit above the generator and the runtime (they phrase with the generator's lexicon
and play episodes through the runtime's tools), so those stages cannot import this package. They
find it instead as the entry point `F9` of the group `workgym.warehouse_families`
(`runtime.family_plug`, declared in pyproject.toml), and this object forwards each call to the
module that does the work. Imports stay inside the methods: loading the family for a verdict does
not load the planting machinery.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workgym.core.environment import DataCheck
from workgym.core.episode import Episode
from workgym.core.messages import Message
from workgym.core.tasks import Task
from workgym.core.verdict import Verdict
from workgym.envs.warehouse.schema.card import SchemaCard

if TYPE_CHECKING:
    from workgym.envs.warehouse.investigate.build import Investigations


class InvestigationFamily:
    """Planted-cause investigations (F9), scored by `conclusion.verify_conclusion`."""

    answer_kind = "conclusion"

    def build(self, snapshot: Path, card: SchemaCard, rng: random.Random, n: int) -> Investigations:
        from workgym.envs.warehouse.investigate.build import build_investigations

        return build_investigations(snapshot, card, rng, n)

    def verify(self, task: Task, episode: Episode, env_dir: Path) -> Verdict:
        from workgym.envs.warehouse.investigate.conclusion import verify_conclusion

        return verify_conclusion(task=task, episode=episode, env_dir=env_dir)

    def oracle(self, task: Task) -> list[Message]:
        # An investigation counts only with evidence run in the episode: run it, then submit.
        from workgym.envs.warehouse.investigate.oracle import oracle_turns

        return oracle_turns(task)

    def verify_data(self, env_dir: Path, tasks: list[Task]) -> DataCheck:
        from workgym.envs.warehouse.investigate.manifest import Manifest
        from workgym.envs.warehouse.investigate.plant import verify_copies

        manifests = [Manifest.model_validate(t.answer["manifest"]) for t in tasks]
        return verify_copies(env_dir, manifests)

    def cause_vocabulary(self) -> dict[str, list[str]]:
        from workgym.envs.warehouse.investigate import surface

        return surface.cause_vocabulary()

    def planted_causes(self, task: Task) -> list[dict[str, Any]]:
        from workgym.envs.warehouse.investigate import surface

        return surface.planted_causes(task)

    def submit_causes(
        self, task: Task, causes: Any, *, observe: bool = True, text: str = ""
    ) -> list[Message]:
        from workgym.envs.warehouse.investigate import surface

        return surface.submit_causes(task, causes, observe=observe, text=text)


F9 = InvestigationFamily()
