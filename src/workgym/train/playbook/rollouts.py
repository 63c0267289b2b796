"""Rollouts: a playbook x a set of tasks x K seeded epochs, run by `wg.eval_async` into a cached
run directory.

A run directory is keyed by everything that decides its episodes (the policy hash, the task ids,
the epochs and the run seed), so asking twice for the same rollouts (gate A's baseline, a
checkpoint of an unchanged playbook, a resumed run replaying its log) reads them back instead of
paying again. Every run gets only a sealed view of the environment: a task set without the test
split, on which asking for "test" raises.
"""

from __future__ import annotations

import copy
import hashlib
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from statistics import fmean

from workgym.core.environment import Environment
from workgym.core.episode import Episode
from workgym.core.model import Sampling, estimate_tokens
from workgym.core.tasks import Task, TrainingTaskSet
from workgym.run.options import EvalOptions
from workgym.run.policy import Agent, Policy, make_policy
from workgym.run.runner import eval_async
from workgym.train.playbook.entries import CITATION
from workgym.train.playbook.ledger import Ledger, Role


def sealed_view(env: Environment) -> Environment:
    """The environment as training code may see it: same tools, verifier and identity, but its
    task set is the training view (no test tasks; asking for the test split raises)."""
    env.content_hash()  # computed on the full environment and carried into the view
    view = copy.copy(env)
    # `taskset` is a functools.cached_property: the instance dict entry is what it returns.
    view.__dict__["taskset"] = env.taskset.training_view()
    return view


def subset_view(sealed: Environment, tasks: Sequence[Task]) -> Environment:
    """A sealed environment whose task set is exactly `tasks` (for one rollout run)."""
    base = sealed.taskset
    if not isinstance(base, TrainingTaskSet):
        raise TypeError("subset_view needs a sealed environment (see sealed_view)")
    view = copy.copy(sealed)
    view.__dict__["taskset"] = TrainingTaskSet(tasks, base.split_spec)
    return view


@dataclass(frozen=True)
class Result:
    """The numbers of one episode the loop needs (the Episode itself stays on disk)."""

    ref: str  # "<run key>/<task id>/<epoch>"
    task_id: str
    family: str
    epoch: int
    reward: float
    success: bool
    trainable: bool
    audit_reward: float  # a flagged episode earns nothing here
    prompt_tokens: int
    completion_tokens: int
    calls: int
    tool_tokens: int
    playbook_tokens: int
    cited: tuple[str, ...]

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass
class Rollouts:
    key: str
    path: Path
    results: list[Result]
    episodes: dict[str, Episode] = field(repr=False)
    playbook_text: str = ""
    charged: bool = False  # whether this call spent tokens (False when read from cache)

    def by_task(self) -> dict[str, list[Result]]:
        out: dict[str, list[Result]] = defaultdict(list)
        for r in sorted(self.results, key=lambda r: (r.task_id, r.epoch)):
            out[r.task_id].append(r)
        return dict(out)

    def task_means(self, task_ids: Sequence[str], *, audit: bool = False) -> list[float]:
        """Mean reward per task over its epochs, in the order given (errors count as 0)."""
        groups = self.by_task()
        return [fmean([r.audit_reward if audit else r.reward for r in groups[t]]) for t in task_ids]

    @property
    def tokens_per_task(self) -> float:
        return fmean([r.tokens for r in self.results]) if self.results else 0.0


def _result(key: str, ep: Episode, playbook_tokens: int) -> Result:
    verdict = ep.verdict
    reward = verdict.reward if verdict else 0.0
    success = bool(verdict and verdict.success)
    flagged = bool(ep.flags or (verdict and verdict.flags))
    cited = sorted(
        {c for m in ep.messages if m.role == "assistant" for c in CITATION.findall(m.content)}
    )
    return Result(
        ref=f"{key}/{ep.task_id}/{ep.epoch}",
        task_id=ep.task_id,
        family=ep.family,
        epoch=ep.epoch,
        reward=reward,
        success=success,
        trainable=verdict.trainable if verdict else False,
        audit_reward=0.0 if flagged else reward,
        prompt_tokens=ep.usage.prompt_tokens,
        completion_tokens=ep.usage.completion_tokens,
        calls=ep.usage.calls,
        tool_tokens=ep.usage.by_role.get("tool", 0),
        playbook_tokens=playbook_tokens * ep.usage.calls,
        cited=tuple(cited),
    )


class Roller:
    """Runs rollouts for the loop and charges their tokens to the ledger, once per run key."""

    def __init__(
        self,
        sealed: Environment,
        model: Agent,
        *,
        root: Path,
        ledger: Ledger,
        sampling: Sampling,
        system_prompt: str = "",
        concurrency: int = 8,
    ) -> None:
        self.sealed = sealed
        self.model = model
        self.root = root
        self.ledger = ledger
        self.sampling = sampling
        self.system_prompt = system_prompt
        self.concurrency = concurrency
        self.episodes_run = 0
        self.tokens_run = 0

    def projected(self, episodes: int) -> int:
        """Tokens `episodes` more episodes will likely cost (the mean so far; 0 before any)."""
        return self.tokens_run * episodes // self.episodes_run if self.episodes_run else 0

    def policy(self, playbook_text: str) -> Policy:
        return make_policy(
            self.model,
            system_prompt=self.system_prompt,
            playbook=playbook_text or None,  # empty playbook == the untrained agent, same hash
            sampling=self.sampling,
        )

    async def run(
        self,
        playbook_text: str,
        tasks: Sequence[Task],
        *,
        epochs: int,
        seed: int,
        role: Role,
        iteration: int,
        policy: Policy | None = None,
    ) -> Rollouts:
        if not tasks:
            raise ValueError("no tasks to roll out")
        policy = policy or self.policy(playbook_text)
        splits = {self.sealed.taskset.split_of(t) for t in tasks}
        if len(splits) != 1:
            raise ValueError(f"one rollout run covers one split, got {sorted(splits)}")
        split = splits.pop()
        ident = "|".join([policy.hash, str(epochs), str(seed), *(t.id for t in tasks)])
        key = hashlib.sha256(ident.encode()).hexdigest()[:16]
        path = self.root / key
        if not self.ledger.has(f"run:{key}"):  # new work: it must fit in the budget
            n = len(tasks) * epochs
            self.ledger.ensure(self.projected(n), f"{role} rollouts ({n} episodes)")
        run = await eval_async(
            subset_view(self.sealed, tasks),
            split=split,
            epochs=epochs,
            out=path,
            options=EvalOptions(
                policy=policy, seed=seed, concurrency=self.concurrency, progress=False
            ),
        )
        pb_tokens = estimate_tokens(playbook_text) if playbook_text else 0
        # Sorted: the runner writes episodes in completion order, and every sum over them must
        # come out bit-identical when a resumed run replays its log.
        ordered = sorted(run.episodes(), key=lambda ep: (ep.task_id, ep.epoch))
        episodes = {f"{key}/{ep.task_id}/{ep.epoch}": ep for ep in ordered}
        results = [_result(key, ep, pb_tokens) for ep in episodes.values()]
        charged = self.ledger.charge(
            role,
            iteration,
            sum(r.prompt_tokens for r in results),
            sum(r.completion_tokens for r in results),
            calls=sum(r.calls for r in results),
            key=f"run:{key}",
        )
        if charged:
            self.episodes_run += len(results)
            self.tokens_run += sum(r.tokens for r in results)
        return Rollouts(
            key=key,
            path=path,
            results=results,
            episodes=episodes,
            playbook_text=playbook_text,
            charged=charged,
        )
