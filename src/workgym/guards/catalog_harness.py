"""Harness probes (docs/guards.md, generic): agents that loop, sleep or make tools raise, and the
determinism probe. They attack the episode loop around the verifier: a harness that hangs,
crashes or scores the same answer twice differently makes every reward untrustworthy.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from workgym.core.messages import Message
from workgym.core.model import Completion, Usage
from workgym.guards import attackers as a
from workgym.guards.capabilities import FINAL_ANSWER, STATE, TOOL_CALLS, TOOLS, submit
from workgym.guards.probes import (
    AttackContext,
    Expect,
    Outcome,
    Probe,
    ReactiveProbe,
    describe,
    play,
    verdict_key,
)
from workgym.testing.scripted import TaskScript

if TYPE_CHECKING:
    from workgym.core.environment import Environment
    from workgym.core.episode import Episode
    from workgym.core.model import Model, Sampling
    from workgym.core.task_aware import TaskAwareModel
    from workgym.core.tasks import Task
    from workgym.core.tools import ToolSpec

SLEEP_S = 3600.0  # far beyond any episode limit: only the harness clock can end the episode


def _with_limits(env: Environment, **update: Any) -> Environment:
    """A shallow copy whose instance attribute shadows the class's `limits`; the content hash is
    computed first so episodes still name the real environment."""
    env.content_hash()
    changed = copy.copy(env)
    vars(changed)["limits"] = env.limits.model_copy(update=update)
    return changed


def with_clock(env: Environment, seconds: float) -> Environment:
    """The same environment with the episode time limit cut to `seconds`, for the sleep probe.

    What is tested is that the harness clock cuts a sleeping agent and the verdict says
    `timeout`, not the limit's value.
    """
    limit = env.limits.episode_timeout_s
    return _with_limits(env, episode_timeout_s=seconds if limit is None else min(limit, seconds))


def with_turns(env: Environment, extra: int) -> Environment:
    """The same environment allowing `extra` more turns, for a probe that spends its own.

    A probe that prepends hostile turns to the oracle's must not be cut by a turn limit sized
    for the task alone (lookup allows 3, its two-lookup oracle takes 3): what it tests is that
    the episode survives the hostile turns, not the budget.
    """
    return _with_limits(env, max_turns=env.limits.max_turns + extra)


def _recovered(ep: Episode, reasons: set[str]) -> bool:
    return (
        ep.outcome == "truncated"
        and ep.truncation in reasons
        and ep.verdict is not None
        and not ep.success
    )


def _got(ep: Episode) -> str:
    if ep.outcome == "truncated":
        return f"truncated: {ep.truncation}, {describe(ep)}"
    return f"{ep.outcome}, {describe(ep)}"


class LoopForever(ReactiveProbe):
    name = "loop-forever"
    applies_to = frozenset({TOOLS, FINAL_ANSWER})
    expect = Expect.recovers
    summary = "an agent that calls a tool forever is cut by the turn/token limit, and fails"

    def expected(self, ctx: AttackContext, task: Task) -> Expect | None:
        return self.expect if ctx.env.tools else None

    def respond(self, env: Environment, task: Task, messages: list[Message], index: int) -> Message:
        looping = [t for t in env.tools if not t.final]
        if looping:
            tool = looping[0]
            return a.turn(a.call(tool.name, a.synth_args(tool.spec, task), f"loop{index}"))
        final = env.tools[0]
        return a.turn(a.call(final.name, "{broken", f"loop{index}"))

    async def run(self, ctx: AttackContext, task: Task) -> Outcome | None:
        if self.expectation(ctx, task) is None:
            return None
        ep = await play(ctx, task, self.attacker(), self.seed_for(ctx, task))
        ok = _recovered(ep, {"max_turns", "max_tokens", "time_limit"})
        return self.outcome(task, self.expect, _got(ep), ok, f"{ep.turns} turns")


class SleepForever(Probe):
    """The episode clock, checked by what it did rather than by how long it took.

    A wall-time bound (ended within clock + slack) measures the machine, not the harness: at
    load 9 a 1 s clock ended episodes after 7-19 s because the event loop was busy, and the gate
    failed (issue 39, item 4). What this probe means is that the clock, and nothing else, ended
    the episode: the model call was cancelled while it slept (it never returned), no turn was
    taken, the truncation reason is `time_limit` and the verdict `timeout`, and the cut came no
    earlier than the clock. None of that depends on how busy the machine is (decision 0062).
    """

    name = "sleep-forever"
    applies_to = frozenset({FINAL_ANSWER, TOOLS})
    expect = Expect.recovers
    summary = "an agent that never replies is cut by the episode clock (timeout), and fails"
    idle = True

    def attacker(self) -> TaskAwareModel:
        return TaskScript(f"scripted/probe-{self.name}", _nothing, latency_s=SLEEP_S)

    async def run(self, ctx: AttackContext, task: Task) -> Outcome | None:
        clocked = with_clock(ctx.env, ctx.clock_s)
        sleeper = _Sleeper(f"scripted/probe-{self.name}")
        ep = await play(ctx, task, sleeper, self.seed_for(ctx, task), clocked)
        clock = clocked.limits.episode_timeout_s or 0.0
        cut = sleeper.cancelled == 1 and sleeper.returned == 0 and ep.turns == 0
        ok = _recovered(ep, {"time_limit"}) and cut and ep.wall_time_s >= clock
        ok = ok and ep.verdict is not None and ep.verdict.status == "timeout"
        how = "its call cancelled by the clock" if cut else "its call was not cancelled"
        detail = f"clock {clock:g} s, {how}, ended after {ep.wall_time_s:.2f} s"
        return self.outcome(task, self.expect, _got(ep), ok, detail)


class _Sleeper:
    """A model that sleeps SLEEP_S per call and counts how its calls ended: `cancelled` (the
    harness clock cut it) or `returned` (the sleep ran out, which no episode clock allows)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.cancelled = 0
        self.returned = 0

    def for_task(self, task: Task, env: Environment) -> Model:
        return self

    async def complete(
        self, messages: list[Message], tools: list[ToolSpec], sampling: Sampling
    ) -> Completion:
        try:
            await asyncio.sleep(SLEEP_S)
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        self.returned += 1
        reply = a.say("")
        return Completion(message=reply, usage=Usage(), finish_reason="stop")


def _nothing(task: Task, env: Environment) -> Sequence[Message]:
    return [a.say("")]


HOSTILE_TURNS = 2  # ToolRaises: the raising calls, then the malformed and unknown ones


class ToolRaises(Probe):
    name = "tool-raises"
    applies_to = frozenset({TOOLS})
    expect = Expect.recovers
    summary = (
        "tool calls that make tool code raise (and malformed/unknown calls) come back as "
        "errors; the episode goes on and the right answer after them still scores (FN)"
    )

    def script(self, env: Environment, task: Task) -> list[Message] | None:
        final = a.oracle_turns(env, task)
        if final is None:
            return None
        hostile = [
            a.call(t.name, a.synth_args(t.spec, task, hostile=True), f"raise{i}")
            for i, t in enumerate(env.tools)
            if not t.final
        ]
        first = env.tools[0].name
        broken = [a.call(first, "{not json", "raise-json"), a.call("probe_no_such_tool", {}, "x")]
        return [a.turn(*hostile), a.turn(*broken), *final]  # HOSTILE_TURNS before the oracle

    def attacker(self) -> TaskAwareModel:
        return TaskScript(f"scripted/probe-{self.name}", self._turns)

    def _turns(self, task: Task, env: Environment) -> Sequence[Message]:
        return self.script(env, task) or [a.say("")]

    async def run(self, ctx: AttackContext, task: Task) -> Outcome | None:
        turns = self.script(ctx.env, task)
        if turns is None:
            return None
        model = TaskScript(f"scripted/probe-{self.name}", lambda t, e: turns)
        widened = with_turns(ctx.env, HOSTILE_TURNS)
        ep = await play(ctx, task, model, self.seed_for(ctx, task), widened)
        errors = sum(c.is_error for c in ep.tool_calls)
        scored = ep.outcome != "error" and ep.verdict is not None
        scored = scored and ep.verdict is not None and ep.verdict.status != "verifier_error"
        # With state, a hostile call may legitimately change what the oracle then finds.
        must_pass = not ({STATE, TOOL_CALLS} & ctx.tags)
        ok = scored and errors >= 2 and (ep.success or not must_pass)
        got = f"{errors} tool errors, then {describe(ep)}"
        return self.outcome(task, self.expect, got, ok)


class SameAnswerTwice(Probe):
    name = "same-answer-twice"
    applies_to = frozenset({FINAL_ANSWER, TOOLS, TOOL_CALLS, STATE})
    expect = Expect.identical
    summary = "the same correct answer, played twice and re-scored, gets identical verdicts"

    def _turns(self, task: Task, env: Environment) -> list[Message]:
        turns = a.oracle_turns(env, task)
        return turns if turns is not None else submit(env, task, task.answer)

    def attacker(self) -> TaskAwareModel:
        return TaskScript(f"scripted/probe-{self.name}", self._turns)

    async def run(self, ctx: AttackContext, task: Task) -> Outcome | None:
        turns = self._turns(task, ctx.env)
        model = TaskScript(f"scripted/probe-{self.name}", lambda t, e: turns)
        first = await play(ctx, task, model, self.seed_for(ctx, task, "1"))
        second = await play(ctx, task, model, self.seed_for(ctx, task, "2"))
        keys: list[Any] = [verdict_key(first), verdict_key(second)]
        if first.outcome != "error":
            keys.append(_rescore(ctx, task, first))
        same = all(k == keys[0] for k in keys)
        got = f"{'identical' if same else 'differs'} ({describe(first)}, {describe(second)})"
        return self.outcome(task, self.expect, got, same and first.outcome != "error")


def _rescore(ctx: AttackContext, task: Task, ep: Episode) -> tuple[Any, ...]:
    again = ep.model_copy(update={"verdict": ctx.env.score(task, ep)})
    return verdict_key(again)


HARNESS = [LoopForever(), SleepForever(), ToolRaises(), SameAnswerTwice()]
