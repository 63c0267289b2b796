"""`bench/lookup-c1`: workgym/lookup with five whole families held out in dev (decision 0179).

Lookup's own dev split holds two families, too few clusters for a t interval over families.
Claim 1's re-measurement needs checkpoints scored on tasks they never trained on, in at least
five families of eight tasks. So this variant keeps lookup's tasks, tools, verifier and salt, and
moves three train families, drawn with seed 0 before anything was scored, into dev. Lookup's test
families stay in test, unused. Checkpoints train on this train split (`--import bench.lookup_c1`
with `workgym train grpo`, and `bench/sft_checkpoint_lookup.py --env bench/lookup-c1`).

    workgym imitation-gap bench/lookup-c1 --import bench.lookup_c1 --model ... --split dev
"""

from __future__ import annotations

import random

import workgym as wg
from workgym.core.tasks import SplitSpec, TaskSet
from workgym.envs.lookup.env import Lookup, build_tasks

SEED = 0
MOVED = 3
SALT = "lookup/1"


def moved_families() -> list[str]:
    """The train families that move to dev: a seeded draw from lookup's sorted train families."""
    train = sorted({t.family for t in Lookup().taskset.split("train")})
    return sorted(random.Random(SEED).sample(train, MOVED))


@wg.register
class LookupC1(Lookup):
    """Lookup with `moved_families()` in dev as well as its own two."""

    id = "bench/lookup-c1"

    def tasks(self) -> TaskSet:
        overrides = {family: "dev" for family in moved_families()}
        return TaskSet(build_tasks(), SplitSpec(salt=SALT, overrides=overrides))  # type: ignore[arg-type]
