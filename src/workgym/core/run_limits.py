"""Run-level limits: what the person running an evaluation allows one episode, on top of the
environment's own `Limits`.

The environment's limits are part of what `workgym check` admitted (its content hash); these are
not. They belong to one run, are written into its run.json, and end an episode that is stuck
(a small model calling the same tool with the same arguments again and again, or reading until
its context is a wall of text) with a reason that names the limit. A limit left at None is off.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from workgym.core.messages import ToolCall


class RunLimits(BaseModel):
    """Per-episode budgets a run sets; None turns one off."""

    model_config = ConfigDict(frozen=True)

    max_repeats: int | None = None
    """The episode ends (`repeat_limit`) when one tool call, the same name with the same
    arguments, is made this many times."""
    max_episode_tokens: int | None = None
    """The episode ends (`token_budget`) when its prompt and completion tokens reach this."""
    max_episode_s: float | None = None
    """The episode ends (`time_budget`) after this many seconds of wall time."""

    def off(self) -> bool:
        return (
            self.max_repeats is None
            and self.max_episode_tokens is None
            and (self.max_episode_s is None)
        )


def call_key(call: ToolCall) -> tuple[str, str]:
    """What makes two calls "the same": the tool's name and its arguments, whitespace aside."""
    import json

    try:
        arguments = json.dumps(json.loads(call.arguments or "{}"), sort_keys=True)
    except ValueError:
        arguments = " ".join((call.arguments or "").split())
    return call.name, arguments


DEFAULT_RUN_LIMITS = RunLimits(max_repeats=3, max_episode_tokens=None, max_episode_s=180.0)
"""`workgym eval`'s defaults (decision 0081): a third identical call, or 3 minutes, ends an
episode."""
