"""`--sample N --seed S`: a seeded, family-stratified subset of a split.

`--limit N` takes the first N tasks in file order, which in a generated environment is often one
family (certificates record it, so its meaning stays). A sample instead deals tasks from every
family in turn, each family shuffled by the seed, so six tasks cover six families when there are
six, and the same seed gives the same tasks on every machine.
"""

from __future__ import annotations

import random
from collections import defaultdict
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from workgym.core.tasks import Task


def stratified_sample(tasks: list[Task], n: int, seed: int) -> list[Task]:
    """`n` tasks dealt round-robin over the families (sorted by name), each family shuffled with
    `seed`; the result keeps the split's own order. All of them when `n` is at least their count."""
    if n >= len(tasks):
        return list(tasks)
    by_family: dict[str, list[Task]] = defaultdict(list)
    for task in tasks:
        by_family[task.family].append(task)
    rng = random.Random(seed)
    decks = []
    for family in sorted(by_family):
        deck = list(by_family[family])
        rng.shuffle(deck)
        decks.append(deck)
    rng.shuffle(decks)  # which families get one more when n is not a multiple: seeded too
    chosen: set[str] = set()
    while len(chosen) < n:
        for deck in decks:
            if deck and len(chosen) < n:
                chosen.add(deck.pop().id)
    return [t for t in tasks if t.id in chosen]
