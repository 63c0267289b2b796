"""Checks that run before a command spends something it cannot take back.

A look at the test split is recorded before the first test episode (so an abandoned attempt
still counts). A look spent on a run that then dies on an unreachable endpoint is a look wasted,
so every command that records one first checks that its models answer.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from workgym.run.policy import Policy


@runtime_checkable
class Pingable(Protocol):
    """A model behind a network endpoint (workgym.models.openai.OpenAIModel)."""

    async def ping(self, timeout_s: float = 10.0) -> None: ...


async def models_reachable(*policies: Policy) -> None:
    """Raise ConfigError, saying what to fix, when a policy's model endpoint does not answer.

    Local models (hf/) and test doubles (scripted/) have nothing to reach."""
    for policy in policies:
        if isinstance(policy.model, Pingable):
            await policy.model.ping()
