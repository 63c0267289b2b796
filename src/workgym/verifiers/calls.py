"""Tool-call verification: the call reaches the right function with valid arguments, and the
world ends up as asked — with nothing else changed.

Semantics (docs/decisions/0008-envs-opsapi-docstore-and-call-verifiers.md), declared here and
attacked by the probes of docs/guards.md:

- The function name is exact: a near-duplicate name is a different function.
- Arguments are validated against the JSON schema the agent was shown, strictly: "5" is not 5,
  True is not 1, and an argument the schema does not declare fails the call.
- Each parameter is compared with its one declared normaliser (`calls_normalise`); undeclared
  parameters compare exactly. Optional parameters the task does not mention must be left out or
  set to their default.
- Expected calls are matched one to one (in order when the task says the calls depend on each
  other): a policy that calls every plausible tool fails, and so does one that calls nothing.
- `no_call` items (irrelevance: the right answer is to make no call) fail on any judged call,
  valid or not. Read-only lookups can be declared free so looking before declining is fine.
  `allowed` names the judged tools a multi-turn task may use (retries included); any other
  judged call fails, so trying every plausible tool cannot pass on the final state alone.
- Where tools change state, the final state must match the expectation and nothing else may
  change (`calls_state`). Claims in the agent's text with no matching change are flagged
  (`calls_claims`).
- A task with no criteria is a build-time error (`CriteriaError`), never a pass. A judged call
  whose arguments do not parse is a failure with status `parse_error`, never "no call".
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from workgym.core.messages import Message, ToolCall
from workgym.core.tools import Tool, ToolSpec
from workgym.core.verdict import Status, Verdict
from workgym.verifiers.calls_claims import ClaimRule, claim_flags
from workgym.verifiers.calls_normalise import NORMALISERS, Normaliser, exact_equal, matches
from workgym.verifiers.calls_schema import validate
from workgym.verifiers.calls_state import ExpectedState, State, StateRules, check_state


class CriteriaError(ValueError):
    """A task whose criteria are missing or contradictory: fix the generator, never score it."""


class ExpectedCall(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class CallCriteria(BaseModel):
    """What a correct episode does. At least one criterion is required."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    calls: list[ExpectedCall] = Field(default_factory=list)
    ordered: bool = False  # dependent calls: the expected order is part of the answer
    no_call: bool = False  # irrelevance: the right answer makes no judged call
    state: ExpectedState | None = None  # expected changes; an empty one means "change nothing"
    # Judged tools the task may call, any number of times (a retry after an error is fine); a
    # judged call of any other tool fails, even one that changed nothing, so trying every
    # plausible tool does not pass on the final state alone.
    allowed: list[str] | None = None

    @model_validator(mode="after")
    def _has_criteria(self) -> CallCriteria:
        if not self.calls and not self.no_call and self.state is None:
            raise ValueError(
                "task has no criteria (no expected calls, no no_call, no expected state); "
                "a task with no criteria would pass anything, so give it one"
            )
        if self.no_call and (self.calls or self.allowed):
            raise ValueError("task expects no call and also expects or allows calls; keep one")
        return self


def criteria_of(raw: Any, where: str = "task") -> CallCriteria:
    """Parse criteria at build time; anything missing or contradictory raises `CriteriaError`."""
    if isinstance(raw, CallCriteria):
        return raw
    if not isinstance(raw, dict):
        raise CriteriaError(f"{where}: criteria must be an object, got {type(raw).__name__}")
    try:
        return CallCriteria.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        raise CriteriaError(f"{where}: {first['msg']}") from None


@dataclass(frozen=True)
class CallRules:
    """How an environment's calls are judged, declared once per environment."""

    specs: dict[str, ToolSpec]
    normalisers: dict[str, dict[str, Normaliser]] = field(default_factory=dict)
    free: frozenset[str] = frozenset()  # read-only tools never judged (lookups, the final tool)
    free_call: Callable[[ToolCall], bool] | None = None  # e.g. a GET through a generic tool
    # The tool a call stands for, when a generic tool can do a typed tool's job (a raw POST to
    # /api/refunds is an `issue_refund`), so `allowed` judges what a call does, not its wrapper.
    canonical: Callable[[ToolCall], str] | None = None
    state: StateRules = field(default_factory=StateRules)
    claims: tuple[ClaimRule, ...] = ()

    def __post_init__(self) -> None:
        for tool_name, params in self.normalisers.items():
            spec = self.specs.get(tool_name)
            if spec is None:
                raise CriteriaError(f"normalisers declared for unknown tool {tool_name!r}")
            declared = spec.parameters.get("properties", {})
            for param, kind in params.items():
                if param not in declared:
                    raise CriteriaError(f"{tool_name}: normaliser for unknown parameter {param!r}")
                if kind not in NORMALISERS:
                    raise CriteriaError(f"{tool_name}.{param}: unknown normaliser {kind!r}")

    @classmethod
    def from_tools(cls, tools: Iterable[Tool], **kwargs: Any) -> CallRules:
        return cls(specs={t.name: t.spec for t in tools}, **kwargs)

    def is_free(self, call: ToolCall) -> bool:
        if call.name in self.free or self.name_of(call) in self.free:
            return True
        return self.free_call is not None and self.free_call(call)

    def name_of(self, call: ToolCall) -> str:
        return self.canonical(call) if self.canonical is not None else call.name

    def kind(self, tool_name: str, param: str) -> Normaliser:
        return self.normalisers.get(tool_name, {}).get(param, "exact")


def transcript_calls(messages: Sequence[Message]) -> list[ToolCall]:
    """Every call the agent wrote, including those the toolkit refused."""
    return [c for m in messages if m.role == "assistant" for c in m.tool_calls]


def transcript_texts(messages: Sequence[Message]) -> list[str]:
    return [m.content for m in messages if m.role == "assistant" and m.content]


def parse_arguments(call: ToolCall) -> dict[str, Any] | None:
    """The call's arguments as an object, or None when they are not a JSON object."""
    try:
        value = json.loads(call.arguments or "{}")
    except (json.JSONDecodeError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def call_problems(call: ToolCall, args: dict[str, Any], rules: CallRules) -> list[str]:
    """Why this call is not a valid call of a known function (empty when it is)."""
    spec = rules.specs.get(call.name)
    if spec is None:
        return [f"{call.name!r} is not a function the agent was given"]
    return [f"{call.name}: {p}" for p in validate(args, spec.parameters)]


def argument_problems(
    call: ToolCall, args: dict[str, Any], expected: ExpectedCall, rules: CallRules
) -> list[str]:
    """Why a valid call is not the expected one (empty when it is)."""
    if call.name != expected.name:
        return [f"called {call.name!r}, expected {expected.name!r}"]
    spec = rules.specs[call.name]
    props: dict[str, Any] = spec.parameters.get("properties", {})
    problems = []
    for name, want in expected.arguments.items():
        if name not in args:
            problems.append(f"{call.name}.{name}: missing, expected {want!r}")
        elif not matches(rules.kind(call.name, name), want, args[name]):
            problems.append(f"{call.name}.{name}: got {args[name]!r}, expected {want!r}")
    for name in sorted(set(args) - set(expected.arguments)):
        default = props.get(name, {}).get("default", _MISSING)
        if default is _MISSING or not exact_equal(default, args[name]):
            problems.append(f"{call.name}.{name}: set to {args[name]!r}, the task asks for none")
    return problems


_MISSING = object()


def _match_calls(
    judged: list[tuple[ToolCall, dict[str, Any]]], criteria: CallCriteria, rules: CallRules
) -> list[str]:
    expected = criteria.calls
    if len(judged) != len(expected):
        names = [c.name for c, _ in judged]
        return [f"made {len(judged)} judged call(s) {names}, expected {len(expected)}"]
    if criteria.ordered:
        return [
            p
            for (call, args), want in zip(judged, expected, strict=True)
            for p in argument_problems(call, args, want, rules)
        ]
    fits = [
        [not argument_problems(call, args, want, rules) for want in expected]
        for call, args in judged
    ]
    used: set[int] = set()

    def solve(i: int) -> bool:
        if i == len(judged):
            return True
        for j, ok in enumerate(fits[i]):
            if ok and j not in used:
                used.add(j)
                if solve(i + 1):
                    return True
                used.discard(j)
        return False

    if solve(0):
        return []
    return [
        "the calls do not match the expected calls one to one: "
        + "; ".join(
            p
            for (c, a), w in zip(judged, expected, strict=True)
            for p in argument_problems(c, a, w, rules)
        )
    ]


def verify_calls(
    criteria: CallCriteria,
    rules: CallRules,
    calls: Sequence[ToolCall],
    *,
    texts: Iterable[str] = (),
    before: State | None = None,
    after: State | None = None,
) -> Verdict:
    """Judge one episode's calls (and final state) against the task's criteria."""
    judged_raw = [c for c in calls if not rules.is_free(c)]
    parsed = [(c, parse_arguments(c)) for c in judged_raw]
    unparseable = [c.name for c, a in parsed if a is None]
    evidence: dict[str, Any] = {}
    subscores: dict[str, float] = {}
    problems: list[str] = []
    flags: list[str] = []
    judges_calls = bool(criteria.calls) or criteria.no_call  # `allowed` judges names only
    if judges_calls and unparseable:
        return Verdict(
            status=Status.parse_error,
            evidence={
                "problems": [f"arguments of {n!r} are not a JSON object" for n in unparseable]
            },
        )
    judged = [(c, a) for c, a in parsed if a is not None]
    if criteria.no_call:
        if judged:
            problems.append(f"the right answer makes no call; made {[c.name for c, _ in judged]}")
        subscores["no_call"] = float(not judged)
    elif criteria.calls:
        invalid = [p for c, a in judged for p in call_problems(c, a, rules)]
        call_issues = invalid or _match_calls(judged, criteria, rules)
        problems.extend(call_issues)
        subscores["calls"] = float(not call_issues)
    if criteria.allowed is not None:
        others = sorted({rules.name_of(c) for c in judged_raw} - set(criteria.allowed))
        if others:
            problems.append(f"attempted {others}, which this task does not call for")
        subscores["only_allowed_calls"] = float(not others)
    if criteria.state is not None:
        if before is None or after is None:
            raise ValueError("criteria expect a final state; pass before= and after= states")
        result = check_state(before, after, criteria.state, rules.state)
        problems.extend(result.problems)
        problems.extend(f"collateral: {c}" for c in result.collateral)
        subscores["state"] = float(not result.problems)
        subscores["no_collateral"] = float(not result.collateral)
        evidence["changes"] = result.diff.summary()
        flags.extend(claim_flags(texts, result.diff, rules.claims))
    return Verdict.all_or_nothing(problems, subscores, evidence, flags)
