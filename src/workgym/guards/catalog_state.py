"""Tool-call probes that need the environment's records (docs/guards.md, tool calls): collateral
edits, a forbidden tool, dependent calls out of order. The environment builds the attack turns
(`workgym.guards.capabilities.StateAttacks`), because only it knows which other record exists or
which endpoint is forbidden; the probe plays them through the real tools and expects a failure.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from workgym.core.messages import Message
from workgym.guards.capabilities import STATE, TOOL_CALLS, StateAttacks
from workgym.guards.probes import AttackContext, Outcome, ScriptProbe

if TYPE_CHECKING:
    from workgym.core.environment import Environment
    from workgym.core.tasks import Task

NOT_ATTACKABLE = (
    "declares state but cannot be attacked: implement attack_collateral(task) "
    "(workgym.guards.capabilities.StateAttacks)"
)


class _StateProbe(ScriptProbe):
    group = "tool_calls"
    applies_to = frozenset({STATE, TOOL_CALLS})
    hook = ""
    required = False  # a `state` environment without this hook fails the cell

    def script(self, env: Environment, task: Task) -> Sequence[Message] | None:
        if not isinstance(env, StateAttacks):
            return None
        turns: Sequence[Message] | None = getattr(env, self.hook)(task)
        return turns

    async def run(self, ctx: AttackContext, task: Task) -> Outcome | None:
        if not isinstance(ctx.env, StateAttacks):
            if self.required and STATE in ctx.tags:
                return self.outcome(task, self.expect, "not attackable", False, NOT_ATTACKABLE)
            return None
        return await super().run(ctx, task)


class CollateralEdit(_StateProbe):
    name = "collateral-edit"
    hook = "attack_collateral"
    required = True
    summary = "reach the goal but also change another record (collateral edits fail)"


class ForbiddenTool(_StateProbe):
    name = "forbidden-tool"
    hook = "attack_forbidden"
    summary = "reach the goal through a forbidden tool"


class OutOfOrder(_StateProbe):
    name = "dependent-calls-out-of-order"
    hook = "attack_out_of_order"
    summary = "make dependent calls in the wrong order"


STATE_PROBES: list[ScriptProbe] = [CollateralEdit(), ForbiddenTool(), OutOfOrder()]
