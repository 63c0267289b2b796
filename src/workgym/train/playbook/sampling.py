"""Which train tasks an iteration rolls out: a seeded pass over the train split, with part of
each batch drawn from a failure-replay buffer of tasks the playbook has not yet solved."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field

from workgym.core.tasks import Task


@dataclass
class TaskSampler:
    tasks: Sequence[Task]
    seed: int = 0
    replay_fraction: float = 0.25
    max_replays: int = 3
    epoch: int = 0
    _order: list[str] = field(default_factory=list)
    _pos: int = 0
    replay: dict[str, int] = field(default_factory=dict)  # task id -> times replayed

    def __post_init__(self) -> None:
        if not self.tasks:
            raise ValueError("no train tasks: the environment's train split is empty")
        self._by_id = {t.id: t for t in self.tasks}
        self._shuffle()

    def _shuffle(self) -> None:
        order = [t.id for t in self.tasks]
        random.Random(f"{self.seed}|epoch|{self.epoch}").shuffle(order)
        self._order, self._pos = order, 0

    def next_batch(self, size: int) -> tuple[list[Task], list[str]]:
        """`size` tasks (fewer only if the train split is smaller) and which came from replay."""
        size = min(size, len(self.tasks))
        n_replay = min(len(self.replay), int(size * self.replay_fraction))
        replayed = list(self.replay)[:n_replay]
        for tid in replayed:
            self.replay[tid] += 1
        chosen = list(replayed)
        while len(chosen) < size:
            if self._pos >= len(self._order):
                self.epoch += 1
                self._shuffle()
            tid = self._order[self._pos]
            self._pos += 1
            if tid not in chosen:
                chosen.append(tid)
        return [self._by_id[t] for t in chosen], replayed

    @property
    def epoch_progress(self) -> float:
        """Epochs completed, with the fraction of the current pass."""
        return self.epoch + self._pos / len(self._order)

    def observe(self, task_id: str, mean_reward: float, all_pass: bool, threshold: float) -> None:
        """Failing tasks join the replay buffer; solved or often-replayed tasks leave it."""
        if all_pass or self.replay.get(task_id, 0) >= self.max_replays:
            self.replay.pop(task_id, None)
        elif mean_reward < threshold and task_id not in self.replay:
            self.replay[task_id] = 0
