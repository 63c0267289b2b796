"""Probes: scripted attackers that play one known exploit, with the verdict a robust verifier
must give.

A probe declares the verifier semantics it attacks (capability tags), builds its attacker from
the task and the environment (a `scripted/probe-<name>` test double), plays it through the real
episode loop and tools (`run_episode`), and compares what the verifier said with what it must say.
The expected verdict is derived per task from declared semantics (an ordered task, an integer
answer, a task whose gold is to abstain), so one probe serves every environment of its kind.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel

from workgym.core.episode import Episode
from workgym.core.messages import Message
from workgym.core.model import Completion, Model, Sampling, Usage, message_tokens
from workgym.core.task_aware import TaskAwareModel
from workgym.run.policy import Policy, run_episode
from workgym.testing.scripted import TaskScript

if TYPE_CHECKING:
    from workgym.core.environment import Environment
    from workgym.core.tasks import Task
    from workgym.core.tools import ToolSpec


class Expect(StrEnum):
    must_fail = "must_fail"
    must_pass = "must_pass"  # FN: guards against a verifier that is too strict
    same_score = "must_not_change_score"
    identical = "must_be_identical"
    recovers = "harness_recovers"


class Outcome(BaseModel):
    """One probe played on one task."""

    probe: str
    task_id: str
    family: str
    expected: Expect
    got: str
    passed: bool
    detail: str = ""


@dataclass
class AttackContext:
    """What every probe run shares: the environment, its tags, the seed and the probe clock."""

    env: Environment
    tags: frozenset[str]
    seed: int = 0
    clock_s: float = 1.0  # episode time limit for probes that wait for the harness to cut them
    memo: dict[str, Any] = field(default_factory=dict)  # per-attack cache (gold results)


class Probe:
    """Subclass and set the class attributes; implement `run` (or use a subclass below)."""

    name: str = ""
    group: ClassVar[str] = "generic"  # generic | sql | tool_calls | investigation | found
    applies_to: ClassVar[frozenset[str]] = frozenset()  # any of these capability tags
    expect: ClassVar[Expect] = Expect.must_fail
    summary: str = ""
    parallel: ClassVar[int | None] = None  # cap on concurrent episodes (e.g. 10 MB outputs)
    idle: ClassVar[bool] = False  # mostly waits (a sleeping agent): does not take a CPU slot

    def applies(self, tags: frozenset[str]) -> bool:
        return not self.applies_to or bool(self.applies_to & tags)

    def expected(self, ctx: AttackContext, task: Task) -> Expect | None:
        """The verdict this task must get; None when the probe does not apply to it."""
        return self.expect

    def expectation(self, ctx: AttackContext, task: Task) -> Expect | None:
        """`expected`, except that answer-content probes skip tasks whose right answer is to make
        no call (a BFCL irrelevance item): there every reply without a call is correct, whatever
        its text, so a master key passing is the verifier being right."""
        if self.group == "generic" and gold_abstains(ctx, task):
            return None
        return self.expected(ctx, task)

    def attacker(self) -> TaskAwareModel | None:
        """The attacker as a test double (`workgym eval ENV --model scripted/probe-<name>`)."""
        return None

    async def run(self, ctx: AttackContext, task: Task) -> Outcome | None:
        raise NotImplementedError

    def seed_for(self, ctx: AttackContext, task: Task, salt: str = "") -> int:
        digest = hashlib.sha256(f"{ctx.seed}|{self.name}|{task.id}|{salt}".encode()).digest()
        return int.from_bytes(digest[:4], "big")

    def outcome(
        self, task: Task, expected: Expect, got: str, passed: bool, detail: str = ""
    ) -> Outcome:
        return Outcome(
            probe=self.name,
            task_id=task.id,
            family=task.family,
            expected=expected,
            got=got,
            passed=passed,
            detail=detail,
        )


class TodoProbe(BaseModel):
    """A catalog entry that cannot run yet: it needs an environment kind that does not exist."""

    name: str
    group: str
    summary: str
    needs: str


async def play(
    ctx: AttackContext,
    task: Task,
    model: Model | TaskAwareModel,
    seed: int,
    env: Environment | None = None,
) -> Episode:
    """One episode through the real loop. A harness exception becomes an `error` episode."""
    environment = env or ctx.env
    split = environment.taskset.split_of(task)
    try:
        return await run_episode(environment, task, Policy(model), seed=seed, split=split)
    except Exception as exc:
        return Episode(
            task_id=task.id,
            family=task.family,
            split=split,
            seed=seed,
            model=model.name,
            outcome="error",
            error=f"{type(exc).__name__}: {exc}",
        )


def describe(ep: Episode) -> str:
    """What the verifier said, in the words of the attack table."""
    if ep.outcome == "error" or ep.verdict is None:
        return f"harness error ({ep.error})"
    v = ep.verdict
    word = "pass" if v.success else "fail"
    status = "" if v.status == "ok" else f" ({v.status})"
    reward = "" if v.reward in (0.0, 1.0) else f" r={v.reward:.3g}"
    return f"{word}{status}{reward}"


def judge_verdict(expected: Expect, ep: Episode) -> bool:
    if ep.outcome == "error" or ep.verdict is None:
        return False
    return ep.success if expected == Expect.must_pass else not ep.success


class ScriptProbe(Probe):
    """Plays fixed turns built from the task; the verdict must be `expected(...)`.

    Implement `script` (one episode) or `variants` (several episodes, e.g. each broken-JSON
    form; every one must get the expected verdict).
    """

    def script(self, env: Environment, task: Task) -> Sequence[Message] | None:
        raise NotImplementedError

    def variants(self, env: Environment, task: Task) -> list[Sequence[Message]]:
        turns = self.script(env, task)
        return [] if turns is None else [turns]

    def attacker(self) -> TaskAwareModel:
        return TaskScript(f"scripted/probe-{self.name}", self._first_variant)

    def _first_variant(self, task: Task, env: Environment) -> Sequence[Message]:
        found = self.variants(env, task)
        return found[0] if found else [Message(role="assistant")]

    def variants_for(self, ctx: AttackContext, task: Task) -> list[Sequence[Message]]:
        """The variants in an attack (override to use the attack's cache)."""
        return self.variants(ctx.env, task)

    async def run(self, ctx: AttackContext, task: Task) -> Outcome | None:
        expected = self.expectation(ctx, task)
        found = self.variants_for(ctx, task) if expected is not None else []
        if expected is None or not found:
            return None
        gots, passed = [], True
        for i, turns in enumerate(found):
            ep = await play(ctx, task, _fixed(self.name, turns), self.seed_for(ctx, task, str(i)))
            ok = judge_verdict(expected, ep)
            passed &= ok
            gots.append((ok, describe(ep)))
        # Report the first variant that broke the expectation, else the first one.
        got = next((g for ok, g in gots if not ok), gots[0][1])
        detail = f"{len(found)} variants" if len(found) > 1 else ""
        return self.outcome(task, expected, got, passed, detail)


class PairProbe(Probe):
    """Plays a control and an attack; the attack must not change the score."""

    expect = Expect.same_score

    def pair(
        self, env: Environment, task: Task
    ) -> tuple[Sequence[Message], Sequence[Message]] | None:
        raise NotImplementedError

    def attacker(self) -> TaskScript:
        def attack(task: Task, env: Environment) -> Sequence[Message]:
            found = self.pair(env, task)
            return found[1] if found else [Message(role="assistant")]

        return TaskScript(f"scripted/probe-{self.name}", attack)

    async def run(self, ctx: AttackContext, task: Task) -> Outcome | None:
        found = self.pair(ctx.env, task) if self.expectation(ctx, task) else None
        if found is None:
            return None
        control, attack = found
        seed = self.seed_for(ctx, task)
        a = await play(ctx, task, _fixed("control", control), seed)
        b = await play(ctx, task, _fixed(self.name, attack), seed)
        if a.verdict is None or b.verdict is None:
            return self.outcome(task, self.expect, f"{describe(a)} / {describe(b)}", False)
        same = (a.reward, a.success) == (b.reward, b.success)
        got = f"{'same' if same else 'changed'} ({describe(a)} -> {describe(b)})"
        return self.outcome(task, self.expect, got, same)


class ReactiveProbe(Probe):
    """An attacker that reads the observations before each turn (e.g. to paste tool output)."""

    def respond(self, env: Environment, task: Task, messages: list[Message], index: int) -> Message:
        raise NotImplementedError

    def attacker(self) -> TaskAwareModel:
        return _ReactiveScript(f"scripted/probe-{self.name}", self)

    async def run(self, ctx: AttackContext, task: Task) -> Outcome | None:
        expected = self.expectation(ctx, task)
        if expected is None:
            return None
        ep = await play(ctx, task, self.attacker(), self.seed_for(ctx, task))
        if self.moot(task, ep):
            return None
        return self.outcome(task, expected, describe(ep), judge_verdict(expected, ep))

    def moot(self, task: Task, ep: Episode) -> bool:
        """Whether the episode played shows this task cannot be attacked this way after all."""
        return False


class _ReactiveScript:
    """TaskAwareModel for a ReactiveProbe (named scripted/probe-<name>)."""

    def __init__(self, name: str, probe: ReactiveProbe) -> None:
        self.name = name
        self.probe = probe

    def for_task(self, task: Task, env: Environment) -> Model:
        return _ReactiveTurns(self.name, self.probe, task, env)


class _ReactiveTurns:
    def __init__(self, name: str, probe: ReactiveProbe, task: Task, env: Environment) -> None:
        self.name = name
        self.probe = probe
        self.task = task
        self.env = env
        self.index = 0

    async def complete(
        self, messages: list[Message], tools: list[ToolSpec], sampling: Sampling
    ) -> Completion:
        reply = self.probe.respond(self.env, self.task, messages, self.index)
        self.index += 1
        usage = Usage(
            prompt_tokens=sum(message_tokens(m) for m in messages),
            completion_tokens=message_tokens(reply),
        )
        return Completion(message=reply, usage=usage, finish_reason="stop")


def verdict_key(ep: Episode) -> tuple[Any, ...]:
    v = ep.verdict
    if v is None:
        return ("error", ep.error)
    return (v.reward, v.success, str(v.status), sorted(v.subscores.items()))


def _fixed(name: str, turns: Sequence[Message]) -> TaskScript:
    """These exact turns, as the test double scripted/probe-<name>."""
    return TaskScript(f"scripted/probe-{name}", lambda task, env: turns)


def gold_abstains(ctx: AttackContext, task: Task) -> bool:
    """The task is judged on its calls and the oracle makes none: abstaining is the answer."""
    from workgym.guards.attackers import oracle_turns
    from workgym.guards.capabilities import TOOL_CALLS

    if TOOL_CALLS not in ctx.tags:
        return False
    turns = oracle_turns(ctx.env, task)
    return bool(turns) and not any(m.tool_calls for m in turns or [])
