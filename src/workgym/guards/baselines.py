"""Baselines that must stay near zero (docs/guards.md): null, constant, enumerating, random.

They are ordinary runs of test doubles (`scripted/baseline-<name>`) through the runner, so their
run directories sit next to real runs and their rewards are reported beside real results. The
answers they use come from the train split only (the split an attacker could have seen).
Thresholds: DEFAULT_THRESHOLDS, overridden per environment by its `baseline_thresholds`
(workgym.guards.capabilities); `random` is reported but not gated unless the environment sets a
threshold for it.
"""

from __future__ import annotations

import functools
import hashlib
import random
import weakref
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from workgym.core.environment import Environment
from workgym.core.messages import Message
from workgym.core.tasks import canonical_json
from workgym.guards import attackers as a
from workgym.guards.capabilities import baseline_thresholds, submit
from workgym.testing.scripted import TaskScript

if TYPE_CHECKING:
    from workgym.core.tasks import Task

BASELINES = ("null", "constant", "enumerating", "random")
# The baselines' rules, recorded on every admission: 2 guesses a train task from the other
# train tasks only (decision 0184; 1 let it score the answer it had memorised).
BASELINE_RULES = "baselines/2"
DEFAULT_THRESHOLDS: dict[str, float | None] = {
    "null": 0.05,
    "constant": 0.10,
    "enumerating": 0.05,
    "random": None,
}
MAX_CANDIDATES = 50


def thresholds(env: Environment) -> dict[str, float | None]:
    found = dict(DEFAULT_THRESHOLDS)
    unknown = set(baseline_thresholds(env)) - set(BASELINES)
    if unknown:
        raise ValueError(
            f"{type(env).__name__}.baseline_thresholds has unknown baseline(s) "
            f"{sorted(unknown)}; use any of {', '.join(BASELINES)}"
        )
    found.update(baseline_thresholds(env))
    return found


def _type(value: Any) -> str:
    return type(value).__name__


class TrainAnswers:
    """Answers of the train split, grouped the way a constant guesser would use them: by kind
    (the family key up to its first '/'), falling back to answers of the same JSON type.

    A train task is guessed from the other train tasks only (leave one out): a guesser scored
    on the very answer it memorised measures memory, not a shortcut. Before decision 0184 each
    family of a small warehouse gave the constant baseline one sure win, its own train answer
    (world_reference: all 5 of its wins, 0 on dev and test), so 48 tasks in 6 families could
    not pass 0.10 whatever their answers. An answer held by two train tasks still wins both."""

    def __init__(self, env: Environment) -> None:
        self.by_kind: dict[str, Counter[str]] = {}
        self.by_type: dict[str, Counter[str]] = {}
        self.values: dict[str, Any] = {}
        self.own: dict[str, str] = {}  # train task id -> its answer's key
        for task in env.taskset.training_view().split("train"):
            key = canonical_json(task.answer)
            self.values[key] = task.answer
            self.own[task.id] = key
            self.by_kind.setdefault(task.kind, Counter())[key] += 1
            self.by_type.setdefault(_type(task.answer), Counter())[key] += 1

    def pool(self, task: Task) -> Counter[str]:
        own = Counter({self.own[task.id]: 1}) if task.id in self.own else Counter()
        return (
            (self.by_kind.get(task.kind, Counter()) - own)
            or (self.by_type.get(_type(task.answer), Counter()) - own)
            or (sum(self.by_type.values(), Counter()) - own)
        )

    def most_common(self, task: Task) -> Any:
        pool = self.pool(task)
        if not pool:
            return None
        # Ties broken by the canonical text, so the baseline is the same on every machine.
        best = max(pool.items(), key=lambda kv: (kv[1], kv[0]))[0]
        return self.values[best]

    def candidates(self, task: Task) -> list[Any]:
        return [self.values[k] for k, _ in self.pool(task).most_common(MAX_CANDIDATES)]


_TRAIN: weakref.WeakKeyDictionary[Environment, TrainAnswers] = weakref.WeakKeyDictionary()


def _cached(env: Environment) -> TrainAnswers:
    """Train answers of `env`, computed once per environment object (a cache, not state)."""
    found = _TRAIN.get(env)
    if found is None:
        found = _TRAIN[env] = TrainAnswers(env)
    return found


def _constant(task: Task, env: Environment) -> Sequence[Message]:
    value = _cached(env).most_common(task)
    return [a.say("")] if value is None else submit(env, task, value)


def _enumerating(task: Task, env: Environment) -> Sequence[Message]:
    found = _cached(env).candidates(task)
    if not found:
        return [a.say("")]
    if all(isinstance(c, str) for c in found):
        return submit(env, task, ", ".join(found))
    return submit(env, task, found)


def _random(task: Task, env: Environment) -> Sequence[Message]:
    """A few plausible tool calls, then a random train answer of the task's kind."""
    rng = random.Random(int.from_bytes(hashlib.sha256(task.id.encode()).digest()[:4], "big"))
    tools = [t for t in env.tools if not t.final]
    turns = [
        a.turn(a.call(t.name, a.synth_args(t.spec, task), f"r{i}"))
        for i, t in enumerate(rng.sample(tools, min(len(tools), rng.randint(1, 3))))
    ]
    pool = _cached(env).candidates(task)
    if not pool:
        return [*turns, a.say("")]
    return [*turns, *submit(env, task, rng.choice(pool))]


def attacker(name: str) -> TaskScript:
    """The baseline as a test double; `null` is the core's scripted/null."""
    scripts = {"constant": _constant, "enumerating": _enumerating, "random": _random}
    return TaskScript(f"scripted/baseline-{name}", scripts[name])


def attackers() -> dict[str, Callable[[], TaskScript]]:
    """The baselines as `scripted/baseline-<name>` test double factories (null is the core's)."""
    return {f"baseline-{name}": functools.partial(attacker, name) for name in BASELINES[1:]}


class BaselineResult(BaseModel):
    name: str
    model: str
    split: str
    mean_reward: float
    success_rate: float
    episodes: int
    threshold: float | None
    run: str

    @property
    def passed(self) -> bool:
        return self.threshold is None or self.mean_reward <= self.threshold + 1e-12


class BaselineReport(BaseModel):
    env_id: str
    env_hash: str
    split: str
    results: list[BaselineResult]

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.results)

    def result(self, name: str) -> BaselineResult:
        return next(r for r in self.results if r.name == name)


async def run_baselines(
    env: Environment,
    out: Path,
    *,
    split: str = "all",
    names: Sequence[str] = BASELINES,
    progress: bool = False,
    concurrency: int = 16,
) -> BaselineReport:
    """Run each baseline on `split` into `out/<name>` (resumable like any run)."""
    from workgym.run.options import EvalOptions
    from workgym.run.runner import eval_async

    limits = thresholds(env)
    results = []
    for name in names:
        if name not in BASELINES:
            raise ValueError(f"unknown baseline {name!r}; use any of {', '.join(BASELINES)}")
        model = "scripted/null" if name == "null" else attacker(name)
        run = await eval_async(
            env,
            model,
            split=split,
            out=out / name,
            options=EvalOptions(
                progress=progress, concurrency=concurrency, label=f"baseline {name}"
            ),
        )
        s = run.summary()
        results.append(
            BaselineResult(
                name=name,
                model=s.model,
                split=split,
                mean_reward=s.mean_reward,
                success_rate=s.success_rate,
                episodes=s.n_episodes,
                threshold=limits[name],
                run=str(run.path),
            )
        )
    return BaselineReport(env_id=env.id, env_hash=env.content_hash(), split=split, results=results)
