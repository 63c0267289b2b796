"""What an environment offers the guards, in one place: capability tags, the Protocols an
environment may satisfy, and the default behaviour when it does not (docs/guards.md).

A probe attacks a *kind* of verifier (a single final answer, a result set, tool calls, a state
diff, a structured conclusion, an LLM judge), not a particular environment. What code can see is
detected: the final tool and the other tools give `final_answer`, `final_tool`, `text_answer` and
`tools`; an environment that implements `GoldResult` is `sql_answer`, one that implements
`ConclusionAnswers` is `conclusion`. What code cannot see is declared as a string tag in the
environment's `guard_tags`: `tool_calls`, `state` and `judge` are properties of the verifier's
semantics, not of any method (and a declared `sql_answer` or `conclusion` without its methods
makes the matching probes report "not attackable" instead of skipping the environment).

Each hook is a Protocol, and a function of the environment that asks it when it does and falls
back to the default that works for a single-answer environment when it does not. The
`Environment` base class knows none of them: an author overrides a hook by defining the method
(or class attribute) on the environment, and `workgym attack ENV` reports what it could not
attack. Which protocols a class satisfies is decided once per class, since a runtime-protocol
`isinstance` costs tens of microseconds and the audit runs on every episode.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Protocol, cast, runtime_checkable

from pydantic import BaseModel, Field

from workgym.core.messages import Message, ToolCall
from workgym.core.tasks import Task, TaskSet, canonical_json

if TYPE_CHECKING:
    from workgym.core.environment import Environment
    from workgym.core.episode import Episode

# -- capability tags ------------------------------------------------------------------------------

FINAL_ANSWER = "final_answer"  # the episode ends with one answer value (final tool or text)
FINAL_TOOL = "final_tool"  # that answer arrives through a final tool (detected)
TEXT_ANSWER = "text_answer"  # no final tool: the last text reply is the answer (detected)
TOOLS = "tools"  # the agent has tools besides the final one (detected)
SQL_ANSWER = "sql_answer"  # the answer is a result set (detected: `GoldResult`)
TOOL_CALLS = "tool_calls"  # the verifier judges the calls the agent made (declared)
STATE = "state"  # the verifier compares the tools' final state with the expected one (declared)
CONCLUSION = "conclusion"  # a structured conclusion (detected: `ConclusionAnswers`)
JUDGE = "judge"  # an LLM judge scores part of the answer (declared)

DECLARABLE = frozenset({SQL_ANSWER, TOOL_CALLS, STATE, CONCLUSION, JUDGE, FINAL_ANSWER})

# -- hooks every kind of environment may override -------------------------------------------------


@runtime_checkable
class DeclaresGuardTags(Protocol):
    """Declared verifier semantics beyond what workgym infers from the tools (`final_answer`,
    `tools`): e.g. `sql_answer`, `tool_calls`, `state`, `conclusion`, `judge`. Probes declare
    which tags they attack (`capabilities`)."""

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


# -- what a result-set or stateful or investigation environment shows the probes ------------------
# An environment whose answer is a result set implements `GoldResult` and one or both answer
# channels (`RowsChannel`, `SqlChannel`), so result-set probes can build near-miss answers from
# the gold result without knowing how the environment stores it or how the agent submits it.


class ResultSet(BaseModel):
    """A result set as the verifier's semantics see it (docs/warehouse.md, SQL result sets)."""

    columns: list[str]
    rows: list[list[Any]] = Field(default_factory=list)
    ordered: bool = False  # the task declares an order; otherwise rows are a bag
    allow_extra_columns: bool = False  # the task accepts columns beyond the gold ones


@runtime_checkable
class GoldResult(Protocol):
    """Every `sql_answer` environment: the gold result with its declared semantics."""

    def gold_result(self, task: Task) -> ResultSet | None:
        """The gold result of `task`, with its declared order and column semantics; None for a
        task whose answer is not a result set (result-set probes skip it)."""
        ...


@runtime_checkable
class RowsChannel(Protocol):
    """An environment where the agent submits the result rows themselves."""

    def submit_result(self, task: Task, result: ResultSet) -> list[Message]:
        """Assistant turns that submit `result` as the answer."""
        ...


@runtime_checkable
class SqlChannel(Protocol):
    """An environment where the agent submits SQL whose result the verifier compares."""

    def gold_sql(self, task: Task) -> str:
        """The reference query (a single SELECT, no trailing semicolon)."""
        ...

    def submit_sql(self, task: Task, sql: str) -> list[Message]:
        """Assistant turns that submit `sql` as the answer."""
        ...


NOT_ATTACKABLE = (
    "declares sql_answer but cannot be attacked: implement gold_result() and submit_result() "
    "and/or gold_sql()/submit_sql() (workgym.guards.capabilities)"
)


@runtime_checkable
class StateAttacks(Protocol):
    """An environment whose tools change records (tags `state`/`tool_calls`): the exploits only
    it can build, as assistant turns played through the real tools, or None when the exploit
    has no meaning for the task. Each must make the verifier fail."""

    def attack_collateral(self, task: Task) -> list[Message] | None:
        """Reach the goal and also change a record the task is not about."""
        ...

    def attack_forbidden(self, task: Task) -> list[Message] | None:
        """Reach the goal through a tool (or endpoint) the task forbids."""
        ...

    def attack_out_of_order(self, task: Task) -> list[Message] | None:
        """Make dependent calls in the wrong order."""
        ...


@runtime_checkable
class ConclusionAnswers(Protocol):
    """An environment whose answer is a list of causes (tag `conclusion`), each a dict with at
    least `cause_type` and `evidence` (ids), and usually the component or slice it names."""

    def cause_vocabulary(self) -> dict[str, list[str]]:
        """Canonical cause types and their declared aliases."""
        ...

    def planted_causes(self, task: Task) -> list[dict[str, Any]]:
        """The planted causes of `task`, in the submission format; empty for a task that is
        not an investigation (probes skip it). Nothing planted is the "normal" cause."""
        ...

    def symptom_components(self, task: Task) -> list[str]:
        """Where the planted causes showed up downstream (the tempting wrong component)."""
        ...

    def submit_causes(
        self, task: Task, causes: Any, *, observe: bool = True, text: str = ""
    ) -> list[Message]:
        """Turns that (when `observe`) read the cited evidence, then submit `causes`."""
        ...


# -- the tags of one environment ------------------------------------------------------------------


def capabilities(env: Environment) -> frozenset[str]:
    """Detected tags plus the declared ones; an unknown declared tag is an error, not a no-op."""
    declared = guard_tags(env)
    unknown = declared - DECLARABLE
    if unknown:
        raise ValueError(
            f"{type(env).__name__}.guard_tags has unknown tag(s) {sorted(unknown)}; "
            f"use any of {sorted(DECLARABLE)}"
        )
    tags = set(declared)
    final = env.final_tool
    if final is None:
        tags |= {FINAL_ANSWER, TEXT_ANSWER}
    else:
        tags.add(FINAL_TOOL)
        if len(final.params) == 1 or satisfies(env, Submits):
            tags.add(FINAL_ANSWER)
    if any(not t.final for t in env.tools):
        tags.add(TOOLS)
    if satisfies(env, GoldResult):
        tags.add(SQL_ANSWER)
    if satisfies(env, ConclusionAnswers):
        tags.add(CONCLUSION)
    return frozenset(tags)
