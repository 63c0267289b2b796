"""Independent attempts: N agents each play the task alone, and one answer is selected.

`Attempts` is a Team (workgym.swarm.team): its policy (`Attempts(...).policy(playbook=...)`, a
`TeamPolicy` that overrides `Policy.play`) runs through `workgym eval`, the playbook trainer and
the certificate like any policy. Each attempt is an ordinary episode with its own fresh toolkit
(`env.toolkit(task, seed=sub_seed)`) and sampling seed; attempt 0 uses the episode's own seed, so
one attempt is exactly the single agent. Attempts are never scored: only the selected attempt's
episode meets the verifier, once, as the swarm's episode. The others stay in the record as
bounded sub-transcripts, with every agent's tokens (`Episode.team`).

With `budget_tokens`, the swarm stops spawning attempts when the next one would not fit (the
spend so far plus the mean cost of a finished attempt), and truncates a running attempt once the
budget is spent: the spend never exceeds the budget by more than one model call (plus a judge's
selection call). This is also the cost-matched single-agent baseline: the same agent, given the
swarm's budget, as self-consistency (vote) or best-of-k (judge).
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any

from workgym.core.driver import EpisodeDriver, drive
from workgym.core.episode import Episode
from workgym.core.errors import ConfigError
from workgym.core.messages import Message
from workgym.core.model import Model
from workgym.core.task_aware import TaskAwareModel
from workgym.run.policy import Policy
from workgym.swarm.accounting import Spend, agent_record, sub_seed
from workgym.swarm.selection import Candidate, Selector, selector
from workgym.swarm.team import Team, finish_as_team, member_policy, now, resolve

if TYPE_CHECKING:
    from workgym.core.environment import Environment
    from workgym.core.tasks import Task

SOLVER = "solver"


class Attempts(Team):
    """N independent attempts of one agent, and a selection that never sees the verifier.

    >>> Attempts("openai/qwen2.5-7b-instruct", n=5, budget_tokens=40_000).policy(
    ...     sampling=Sampling(temperature=0.7))
    """

    def __init__(
        self,
        model: Model | TaskAwareModel | str,
        *,
        n: int = 5,
        select: str | Selector = "vote",
        judge_model: Model | str | None = None,
        budget_tokens: int | None = None,
        concurrency: int = 1,
        base_url: str | None = None,
        api_key: str | None = None,
    ) -> None:
        if n < 1 or concurrency < 1:
            raise ConfigError("Attempts needs n >= 1 and concurrency >= 1")
        if budget_tokens is not None and budget_tokens < 1:
            raise ConfigError("budget_tokens must be a positive number of tokens per task")
        self.member = resolve(model, base_url, api_key)
        judge = resolve(judge_model, base_url, api_key) if judge_model is not None else None
        if judge is not None and not isinstance(judge, Model):
            raise ConfigError(f"{judge.name} cannot judge: pass a model that answers prompts")
        self.selector = selector(select, judge)
        self.n = n
        self.budget_tokens = budget_tokens
        self.concurrency = concurrency
        budget = f"@{budget_tokens}" if budget_tokens is not None else ""
        self.name = f"swarm/{self.selector.name}{n}{budget}:{self.member.name}"

    @property
    def roles(self) -> tuple[str, ...]:
        return (SOLVER, "selector") if self.selector.name == "judge" else (SOLVER,)

    @property
    def lead(self) -> Model | TaskAwareModel:
        """The attempts' model: the selected attempt's conversation is the episode's."""
        return self.member

    def describe(self) -> dict[str, Any]:
        return {
            "kind": "attempts",
            "n": self.n,
            "member": self.member.name,
            "select": self.selector.describe(),
            "budget_tokens": self.budget_tokens,
            "concurrency": self.concurrency,
            "roles": list(self.roles),
        }

    async def play(
        self, policy: Policy, env: Environment, task: Task, *, seed: int, epoch: int, split: str
    ) -> Episode:
        started, started_at = time.perf_counter(), now()
        member = member_policy(policy, self.member, SOLVER, self.roles)
        spend = Spend(self.budget_tokens)
        drivers: dict[int, EpisodeDriver] = {}

        async def attempt(j: int) -> None:
            s = seed if j == 0 else sub_seed(seed, SOLVER, j)
            driver = EpisodeDriver(env, task, member, seed=s, epoch=epoch, split=split)
            drivers[j] = driver
            spend.track(driver.episode.usage)
            await drive(
                driver, member.model_for(task, env), member.sampling.with_seed(s), stop=spend.stop
            )
            spend.finished.append(driver.episode.usage.total_tokens)

        j = 0
        while j < self.n:
            wave: list[int] = []
            while j < self.n and len(wave) < self.concurrency and spend.may_start(len(wave)):
                wave.append(j)
                j += 1
            if not wave:
                break
            await _run_wave([attempt(k) for k in wave])
        order = sorted(drivers)
        candidates = [
            Candidate(k, drivers[k].episode.answer, drivers[k].episode.messages)
            for k in order
            if drivers[k].episode.submitted and drivers[k].episode.outcome == "terminated"
        ]
        chosen = await self.selector.select(
            task.messages(),
            candidates,
            seed=sub_seed(seed, "selector", 0),
            timeout_s=env.limits.episode_timeout_s,
        )
        pick = order[0] if chosen.index is None else chosen.index
        agents = [
            agent_record(
                f"attempt-{k}",
                SOLVER,
                member.model_name,
                drivers[k].episode.usage,
                transcript=[] if k == pick else _without_system(drivers[k].episode.messages),
                turns=drivers[k].episode.turns,
                outcome=drivers[k].episode.outcome,
                answer=drivers[k].episode.answer,
                submitted=drivers[k].episode.submitted,
                selected=k == pick,
            )
            for k in order
        ]
        agents += chosen.agents
        return await finish_as_team(
            drivers[pick], policy, agents, seed=seed, started=started, started_at=started_at
        )


def _without_system(messages: list[Message]) -> list[Message]:
    """A sub-transcript without the system text every attempt shares with the selected one."""
    return [m for m in messages if m.role != "system"]


async def _run_wave(coros: list[Any]) -> None:
    """Run attempts together; the first failure (a ModelError) cancels the rest and propagates
    unchanged, so the runner retries the whole swarm episode as it would a single agent's."""
    if len(coros) == 1:
        await coros[0]
        return
    tasks = [asyncio.ensure_future(c) for c in coros]
    try:
        await asyncio.gather(*tasks)
    except BaseException:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
