"""`workgym check`: the model-free self test of an environment.

The oracle must solve every task (else the task or the verifier is wrong), scoring the same
episode twice must give the same verdict (else rewards are noise), and a policy that answers
nothing must score near zero (else the reward pays for nothing). Probes and the other baselines
join this gate with the guards (GUARDS.md).
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, Field

from workgym.environment import Environment
from workgym.runner import eval_async

NULL_THRESHOLD = 0.05


class CheckItem(BaseModel):
    name: str
    passed: bool
    detail: str
    failures: list[str] = Field(default_factory=list)


class CheckReport(BaseModel):
    env_id: str
    env_hash: str
    items: list[CheckItem]

    @property
    def passed(self) -> bool:
        return all(i.passed for i in self.items)


async def check_async(env: Environment, out: Path, *, progress: bool = True) -> CheckReport:
    items: list[CheckItem] = []
    oracle = await eval_async(
        env, "scripted/oracle", split="all", out=out / "oracle", progress=progress, concurrency=16
    )
    episodes = list(oracle.episodes())
    failed = [e.task_id for e in episodes if not e.success]
    items.append(
        CheckItem(
            name="oracle solves every task",
            passed=not failed and len(episodes) == len(env.taskset),
            detail=f"{len(episodes) - len(failed)}/{len(env.taskset)} solved",
            failures=failed[:20],
        )
    )
    unstable = []
    for ep in episodes:
        task = env.taskset[ep.task_id]
        first = env.score(task, ep).model_dump_json()
        if any(env.score(task, ep).model_dump_json() != first for _ in range(2)):
            unstable.append(ep.task_id)
    items.append(
        CheckItem(
            name="verdicts are deterministic",
            passed=not unstable,
            detail=f"{len(episodes) - len(unstable)}/{len(episodes)} stable over 3 scorings",
            failures=unstable[:20],
        )
    )
    null = await eval_async(
        env, "scripted/null", split="all", out=out / "null", progress=progress, concurrency=16
    )
    null_mean = null.summary().mean_reward
    items.append(
        CheckItem(
            name="null baseline stays near zero",
            passed=null_mean <= NULL_THRESHOLD,
            detail=f"mean reward {null_mean:.3f} (threshold {NULL_THRESHOLD})",
        )
    )
    report = CheckReport(env_id=env.id, env_hash=env.content_hash(), items=items)
    (out / "check.json").write_text(
        json.dumps(report.model_dump() | {"passed": report.passed}, indent=2) + "\n"
    )
    return report
