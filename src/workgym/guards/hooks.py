"""Guard hooks: what probes, baselines and the audit ask of an environment (docs/guards.md).

Each hook is a Protocol an environment may satisfy, and a function of the environment that
asks it when it does and falls back to the default that works for a single-answer environment
when it does not. The `Environment` base class knows none of them: an author overrides a hook by
defining the method (or class attribute) on the environment, and `workgym attack ENV` reports
what it could not attack. Which protocols a class satisfies is decided once per class, since a
runtime-protocol `isinstance` costs tens of microseconds and the audit runs on every episode.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Protocol, cast, runtime_checkable

from workgym.core.messages import Message, ToolCall
from workgym.core.tasks import Task, TaskSet, canonical_json

if TYPE_CHECKING:
    from workgym.core.environment import Environment
    from workgym.core.episode import Episode


@runtime_checkable
class DeclaresGuardTags(Protocol):
    """Declared verifier semantics beyond what workgym infers from the tools (`final_answer`,
    `tools`): e.g. `sql_answer`, `tool_calls`, `state`, `conclusion`, `judge`. Probes declare
    which tags they attack; see workgym.guards.capabilities."""

    guard_tags: frozenset[str]


@runtime_checkable
class BaselineThresholds(Protocol):
    """Per-environment ceilings for baseline rewards (`null`, `constant`, `enumerating`,
    `random`), overriding the defaults in workgym.guards.baselines."""

    baseline_thresholds: dict[str, float]


@runtime_checkable
class ThresholdReason(Protocol):
    """Why the environment's baseline ceilings differ from the defaults: recorded in the
    admission record and shown in the certificate, so a changed ceiling is never silent."""

    threshold_reason: str


@runtime_checkable
class Submits(Protocol):
    """An environment that says how an arbitrary answer is submitted (its final tool takes
    several arguments, or the answer needs reads first)."""

    def submit(self, task: Task, answer: Any, text: str = "") -> list[Message]: ...


@runtime_checkable
class WrongAnswers(Protocol):
    """An environment with a better plausible wrong answer than another task's gold (a near
    miss, such as a neighbouring query's result)."""

    def wrong_answer(self, task: Task) -> Any: ...


@runtime_checkable
class GoldValues(Protocol):
    """An environment whose gold answer holds parts an agent never has to observe (a hidden
    manifest, the gold's own evidence queries), left out of the provenance check."""

    def gold_values(self, task: Task) -> Any: ...


@runtime_checkable
class AuditFlags(Protocol):
    """An environment with its own audit flags (canaries seen, state diffs that contradict a
    claim), added to the generic ones of workgym.guards.audit. Must be cheap and never raise."""

    def audit_flags(self, task: Task, episode: Episode) -> list[str]: ...


_DECIDED: dict[tuple[type, type], bool] = {}


def satisfies(env: Environment, protocol: type) -> bool:
    """`isinstance(env, protocol)`, decided once per (class, protocol): hooks are class-level."""
    key = (type(env), protocol)
    found = _DECIDED.get(key)
    if found is None:
        found = _DECIDED[key] = isinstance(env, protocol)
    return found


def guard_tags(env: Environment) -> frozenset[str]:
    """The tags the environment declares; none by default."""
    if satisfies(env, DeclaresGuardTags):
        return frozenset(cast(DeclaresGuardTags, env).guard_tags)
    return frozenset()


def baseline_thresholds(env: Environment) -> dict[str, float]:
    """The environment's own baseline ceilings; none by default."""
    if satisfies(env, BaselineThresholds):
        return dict(cast(BaselineThresholds, env).baseline_thresholds)
    return {}


def threshold_reason(env: Environment) -> str:
    """The environment's reason for its own baseline ceilings; empty by default."""
    if satisfies(env, ThresholdReason):
        return str(cast(ThresholdReason, env).threshold_reason)
    return ""


def submit(env: Environment, task: Task, answer: Any, text: str = "") -> list[Message]:
    """Assistant turns that submit `answer` as the final answer (with optional prose).

    Probes and baselines use this to play an arbitrary answer through the real tools. The
    default calls the single-argument final tool, or, without a final tool, replies with the
    answer as text (the text is then the answer).
    """
    if satisfies(env, Submits):
        return cast(Submits, env).submit(task, answer, text)
    final = env.final_tool
    if final is None:
        body = answer if isinstance(answer, str) else json.dumps(answer, default=str)
        content = f"{text}\n\n{body}" if text else body
        return [Message(role="assistant", content=content)]
    if len(final.params) != 1:
        raise NotImplementedError(
            f"{type(env).__name__}'s final tool takes {len(final.params)} arguments; "
            "implement submit(task, answer, text) so probes can play answers"
        )
    args = json.dumps({final.params[0]: answer}, default=str)
    call = ToolCall(id="submit_0", name=final.name, arguments=args)
    return [Message(role="assistant", content=text, tool_calls=[call])]


def wrong_answer(env: Environment, task: Task) -> Any:
    """A plausible wrong answer for `task` (probes: injection, fake verdict, two answers).

    The default is another task's gold answer, preferring tasks of the same kind (the family
    key up to its first '/'), that differs from this task's; None when there is none.
    """
    if satisfies(env, WrongAnswers):
        return cast(WrongAnswers, env).wrong_answer(task)
    return other_task_gold(env.taskset, task)


def gold_values(env: Environment, task: Task) -> Any:
    """The part of the gold answer an agent can only learn from the data: what the audit's
    provenance check traces through the transcript. The default is the whole answer."""
    if satisfies(env, GoldValues):
        return cast(GoldValues, env).gold_values(task)
    return task.answer


def audit_flags(env: Environment, task: Task, episode: Episode) -> list[str]:
    """The environment's own audit flags; none by default."""
    if satisfies(env, AuditFlags):
        return cast(AuditFlags, env).audit_flags(task, episode)
    return []


def other_task_gold(tasks: TaskSet, task: Task) -> Any:
    """Another task's real gold answer that differs from `task`'s, preferring the same kind
    (the family up to its first '/'); None when every task has the same answer."""
    mine = canonical_json(task.answer)
    fallback: Any = None
    for other in tasks:
        if other.id == task.id or canonical_json(other.answer) == mine:
            continue
        if other.kind == task.kind:
            return other.answer
        if fallback is None:
            fallback = other.answer
    return fallback
