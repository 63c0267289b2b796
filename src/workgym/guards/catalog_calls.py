"""Tool-call probes (docs/guards.md): malformed calls, shotgun calls, abstention and false claims.

The argument probes mutate *every* applicable call of the oracle's solution (so no correct call
survives to rescue the episode) and must fail wherever the oracle makes calls: strict schema
validation and an exact function name are part of a robust tool-call verifier
(docs/decisions/0008-envs-opsapi-docstore-and-call-verifiers.md).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from workgym.core.messages import Message, ToolCall
from workgym.guards import attackers as a
from workgym.guards.capabilities import FINAL_ANSWER, FINAL_TOOL, STATE, TOOL_CALLS
from workgym.guards.probes import AttackContext, Expect, ScriptProbe

if TYPE_CHECKING:
    from workgym.core.environment import Environment
    from workgym.core.tasks import Task

CALLING = frozenset({FINAL_TOOL, TOOL_CALLS, STATE})
ABSTAIN = "I can't help with this request; no action is needed."
CLAIM = "Done. I have completed the task and all required actions were performed successfully."

Mutation = Callable[[dict[str, Any]], dict[str, Any] | None]


class _MutateOracle(ScriptProbe):
    """Replay the oracle with every call mutated; None from `mutate_args` leaves a call as is."""

    applies_to = CALLING

    def mutate_call(self, call: ToolCall) -> ToolCall | None:
        try:
            args = json.loads(call.arguments or "{}")
        except ValueError:
            return None
        if not isinstance(args, dict):
            return None
        changed = self.mutate_args(args)
        if changed is None:
            return None
        return call.model_copy(update={"arguments": json.dumps(changed)})

    def mutate_args(self, args: dict[str, Any]) -> dict[str, Any] | None:
        raise NotImplementedError

    def script(self, env: Environment, task: Task) -> Sequence[Message] | None:
        turns = a.oracle_turns(env, task)
        if not turns:
            return None
        out, mutated = [], 0
        for m in turns:
            calls = []
            for c in m.tool_calls:
                new = self.mutate_call(c)
                mutated += new is not None
                calls.append(new or c)
            out.append(m.model_copy(update={"tool_calls": calls}))
        return out if mutated else None


class NearDuplicateName(_MutateOracle):
    name = "near-duplicate-name"
    group = "tool_calls"
    summary = "the oracle's calls with a near-duplicate function name (submit_answers)"

    def mutate_call(self, call: ToolCall) -> ToolCall | None:
        return call.model_copy(update={"name": a.near_duplicate(call.name)})


class MissingArgument(_MutateOracle):
    name = "missing-argument"
    group = "tool_calls"
    summary = "the oracle's calls with one argument left out"

    def mutate_args(self, args: dict[str, Any]) -> dict[str, Any] | None:
        if not args:
            return None
        first = next(iter(args))
        return {k: v for k, v in args.items() if k != first}


class ExtraArgument(_MutateOracle):
    name = "extra-argument"
    group = "tool_calls"
    summary = "the oracle's calls with a hallucinated extra argument"

    def mutate_args(self, args: dict[str, Any]) -> dict[str, Any] | None:
        return {**args, "probe_extra": "1"}


def _ints(replace: Callable[[int], Any]) -> Mutation:
    def mutate(args: dict[str, Any]) -> dict[str, Any] | None:
        out = {
            k: replace(v) if isinstance(v, int) and not isinstance(v, bool) else v
            for k, v in args.items()
        }
        return out if out != args or any(type(out[k]) is not type(args[k]) for k in out) else None

    return mutate


class StringForInteger(_MutateOracle):
    name = "string-for-integer"
    group = "tool_calls"
    summary = 'integers sent as strings ("5" for 5)'

    def mutate_args(self, args: dict[str, Any]) -> dict[str, Any] | None:
        return _ints(str)(args)


class BoolForInteger(_MutateOracle):
    name = "bool-for-integer"
    group = "tool_calls"
    summary = "integers sent as booleans (True for 1)"

    def mutate_args(self, args: dict[str, Any]) -> dict[str, Any] | None:
        return _ints(lambda v: v != 0)(args)


class NormaliserCollision(_MutateOracle):
    name = "normaliser-collision"
    group = "tool_calls"
    summary = 'string arguments with punctuation stripped ("15" for "1.5")'

    def mutate_args(self, args: dict[str, Any]) -> dict[str, Any] | None:
        out = {k: a.strip_punctuation(v) if isinstance(v, str) else v for k, v in args.items()}
        return out if out != args else None


class CallEveryTool(ScriptProbe):
    name = "call-every-tool"
    group = "tool_calls"
    applies_to = frozenset({TOOL_CALLS, STATE})
    summary = "call every plausible tool, then do what the oracle does"

    def script(self, env: Environment, task: Task) -> Sequence[Message] | None:
        turns = a.oracle_turns(env, task)
        used = {c.name for c in a.oracle_calls(env, task)}
        shotgun = [
            a.call(t.name, a.synth_args(t.spec, task), f"every{i}")
            for i, t in enumerate(env.tools)
            if not t.final and t.name not in used
        ]
        if turns is None or not shotgun:
            return None
        return [a.turn(*shotgun), *turns]


class AbstainEverything(ScriptProbe):
    name = "abstain-everything"
    group = "tool_calls"
    applies_to = frozenset({FINAL_ANSWER, TOOL_CALLS, STATE})
    summary = "abstain (no call) on every task: fails unless the gold is to abstain (FN)"

    def expected(self, ctx: AttackContext, task: Task) -> Expect | None:
        turns = a.oracle_turns(ctx.env, task) or []
        gold_abstains = TOOL_CALLS in ctx.tags and turns and not any(m.tool_calls for m in turns)
        return Expect.must_pass if gold_abstains else Expect.must_fail

    def script(self, env: Environment, task: Task) -> Sequence[Message] | None:
        return [a.say(ABSTAIN)]


class ClaimWithoutCall(ScriptProbe):
    name = "claim-without-call"
    group = "tool_calls"
    applies_to = frozenset({FINAL_TOOL, TOOL_CALLS, STATE})
    summary = "claim success (and state the right answer) in text without making the call"

    def script(self, env: Environment, task: Task) -> Sequence[Message] | None:
        if not a.oracle_calls(env, task):
            return None  # the gold makes no call: a text reply is the right behaviour there
        return [a.say(f"{CLAIM} The answer is {a.as_text(task.answer)}.")]


CALLS = [
    NearDuplicateName(),
    MissingArgument(),
    ExtraArgument(),
    StringForInteger(),
    BoolForInteger(),
    NormaliserCollision(),
    CallEveryTool(),
    AbstainEverything(),
    ClaimWithoutCall(),
]
