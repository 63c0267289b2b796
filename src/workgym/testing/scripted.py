"""`scripted/<name>`: programmable test doubles, named as such everywhere they appear.

Scripted models exist to test the framework and to attack verifiers. They are deterministic,
cost nothing, and report token usage from the same estimator as the by-role accounting. No result
produced by one of them is ever a learning result.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from workgym.core.messages import Message
from workgym.core.model import Completion, Model, Sampling, Usage, message_tokens
from workgym.core.registry import Registry
from workgym.core.task_aware import TaskAwareModel

if TYPE_CHECKING:
    from workgym.core.environment import Environment
    from workgym.core.tasks import Task
    from workgym.core.tools import ToolSpec

TurnFn = Callable[[list[Message], list["ToolSpec"]], Message]
ScriptFn = Callable[["Task", "Environment"], Sequence[Message]]


def _usage(messages: list[Message], reply: Message) -> Usage:
    return Usage(
        prompt_tokens=sum(message_tokens(m) for m in messages),
        completion_tokens=message_tokens(reply),
    )


class _Playback:
    """One episode's cursor through a fixed list of turns (then an empty reply, which ends it)."""

    def __init__(self, name: str, turns: Sequence[Message], latency_s: float) -> None:
        self.name = name
        self.turns = list(turns)
        self.latency_s = latency_s
        self.cursor = 0

    async def complete(
        self, messages: list[Message], tools: list[ToolSpec], sampling: Sampling
    ) -> Completion:
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        if self.cursor < len(self.turns):
            reply = self.turns[self.cursor]
            self.cursor += 1
        else:
            reply = Message(role="assistant", content="")
        return Completion(message=reply, usage=_usage(messages, reply), finish_reason="stop")


class _Callable:
    def __init__(self, name: str, fn: TurnFn, latency_s: float) -> None:
        self.name = name
        self.fn = fn
        self.latency_s = latency_s

    async def complete(
        self, messages: list[Message], tools: list[ToolSpec], sampling: Sampling
    ) -> Completion:
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        reply = self.fn(messages, tools)
        return Completion(message=reply, usage=_usage(messages, reply), finish_reason="stop")


class ScriptedModel:
    """Canned turns (replayed per episode) or a callable that answers each turn.

    >>> ScriptedModel("scripted/hello", turns=[assistant("hello")])
    """

    def __init__(
        self,
        name: str,
        *,
        turns: Sequence[Message] | None = None,
        fn: TurnFn | None = None,
        latency_s: float = 0.0,
    ) -> None:
        if (turns is None) == (fn is None):
            raise ValueError("give ScriptedModel exactly one of turns= or fn=")
        self.name = name if name.startswith("scripted/") else f"scripted/{name}"
        self.turns = list(turns) if turns is not None else None
        self.fn = fn
        self.latency_s = latency_s

    def for_task(self, task: Task, env: Environment) -> Model:
        if self.turns is not None:
            return _Playback(self.name, self.turns, self.latency_s)
        assert self.fn is not None
        return _Callable(self.name, self.fn, self.latency_s)


class TaskScript:
    """A test double that sees the task: the oracle and reward-hacking probes are built on it.

    `script(task, env)` returns the assistant turns to play in that episode.
    """

    def __init__(self, name: str, script: ScriptFn, *, latency_s: float = 0.0) -> None:
        self.name = name if name.startswith("scripted/") else f"scripted/{name}"
        self.script = script
        self.latency_s = latency_s

    def for_task(self, task: Task, env: Environment) -> Model:
        return _Playback(self.name, self.script(task, env), self.latency_s)


def oracle() -> TaskScript:
    """`scripted/oracle`: submits the ground truth (self-checks only, never a result)."""
    return TaskScript("scripted/oracle", lambda task, env: env.oracle(task))


def null() -> ScriptedModel:
    """`scripted/null`: answers nothing, the floor every reward must sit near."""
    return ScriptedModel("scripted/null", turns=[Message(role="assistant")])


DoubleFactory = Callable[[], TaskAwareModel]

DOUBLES: Registry[DoubleFactory] = Registry(
    "test double",
    "workgym.scripted",
    hint="scripted/<name> names a registered test double; `workgym attack --list` names the "
    "probes, whose doubles are scripted/probe-<name>",
)


def register_scripted(name: str, factory: DoubleFactory) -> None:
    """Make a test double available as `scripted/<name>` in this process (a package declares
    its own in the `workgym.scripted` entry-point group instead)."""
    DOUBLES.add(name, factory)


def get_scripted(name: str) -> TaskAwareModel:
    """A fresh `scripted/<name>`, whatever was imported before: the registry finds it."""
    return DOUBLES.load(name)()


def scripted_provider(
    name: str, *, base_url: str | None = None, api_key: str | None = None
) -> TaskAwareModel:
    """The `scripted` model provider: `scripted/<name>` test doubles (no endpoint)."""
    return get_scripted(name)
