"""Small pure pieces of the loop: seeds, the dev split, groups, dev scores and ranking.

Seeds are derived by hashing, never drawn from a shared generator, so each step's randomness
depends only on the run seed and the step's name and iteration: a resumed run draws the same.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import fmean
from typing import Any

from workgym.core.model import Sampling
from workgym.core.tasks import Task
from workgym.run.policy import Agent
from workgym.stats.tests import mean_ci
from workgym.train.playbook.groups import Group
from workgym.train.playbook.rollouts import Rollouts


@dataclass(frozen=True)
class Baseline:
    """An untrained agent the trained one is compared with (step 0 and the report)."""

    name: str
    model: Agent
    system_prompt: str = ""
    temperature: float | None = None  # None: the run's sampling; a sampling baseline sets it

    def sampling(self, run: Sampling) -> Sampling:
        """The run's sampling, at this baseline's temperature when it has one."""
        if self.temperature is None:
            return run
        return run.model_copy(update={"temperature": self.temperature})


def derive_seed(*parts: object) -> int:
    """A 32-bit seed from the run seed and a step's name and iteration."""
    return int(hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest()[:8], 16)


def split_dev(tasks: Sequence[Task], seed: int) -> tuple[list[Task], list[Task]]:
    """Dev families split in two: dev-gate (gate B) and dev-select (checkpoints, baselines), so the
    checkpoint picked is not the one whose gates happened to be lucky. One family: shared."""
    fams = sorted({t.family for t in tasks}, key=lambda f: derive_seed(seed, "dev", f))
    if len(fams) < 2:
        return list(tasks), list(tasks)
    select = set(fams[0::2])
    return [t for t in tasks if t.family not in select], [t for t in tasks if t.family in select]


def prompt_text(task: Task) -> str:
    if isinstance(task.prompt, str):
        return task.prompt
    return "\n".join(f"{m.role}: {m.content}" for m in task.prompt)


def groups_of(roll: Rollouts, batch: list[Task]) -> list[Group]:
    """One group per batch task, of its trainable episodes (verifier errors are masked out)."""
    by_task = roll.by_task()
    groups = []
    for task in batch:
        results = [r for r in by_task.get(task.id, []) if r.trainable]
        groups.append(
            Group(
                task.id,
                tuple(r.reward for r in results),
                tuple(r.success for r in results),
                tuple(r.ref for r in results),
            )
        )
    return groups


def dev_scores(roll: Rollouts, task_ids: list[str]) -> dict[str, Any]:
    """Reward (per-task means, SE), audit reward and tokens per task, split by kind."""
    means = roll.task_means(task_ids)
    audit = roll.task_means(task_ids, audit=True)
    se = mean_ci(means).se if len(means) > 1 else 0.0
    res = roll.results
    split = {
        "playbook": fmean([r.playbook_tokens for r in res]),
        "prompt_other": fmean([r.prompt_tokens - r.playbook_tokens for r in res]),
        "completion": fmean([r.completion_tokens for r in res]),
        "tool_output": fmean([r.tool_tokens for r in res]),
    }
    return {
        "reward": fmean(means),
        "se": se,
        "audit_reward": fmean(audit),
        "tokens_per_task": roll.tokens_per_task,
        "tokens_split": split,
        "key": roll.key,
        "task_means": means,
    }


def rank(c: dict[str, Any]) -> tuple[float, float]:
    """Checkpoints rank by dev-select reward, then by fewer tokens per task."""
    return (float(c["reward"]), -float(c["tokens_per_task"]))
