"""The token ledger: every token the training run spends, by role and iteration, against a budget.

A playbook is only worth having if it pays for itself, so the cost of learning it is counted as
carefully as the reward: agent rollouts on train and dev, the reflector and the curator. Test
tokens are kept apart (the certificate spends them, training never does) and do not count
against the training budget.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Literal

from pydantic import BaseModel, Field

Role = Literal["agent-train", "agent-dev", "agent-test", "reflector", "curator"]
ROLES: tuple[Role, ...] = ("agent-train", "agent-dev", "agent-test", "reflector", "curator")
TRAINING_ROLES: tuple[Role, ...] = ("agent-train", "agent-dev", "reflector", "curator")


class BudgetExceeded(Exception):
    """The next step would spend more than the token budget allows."""


class Charge(BaseModel):
    role: Role
    iteration: int
    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0
    key: str = ""

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class Ledger(BaseModel):
    """Charges in the order they happened. A key is charged once (a resumed run re-reads cached
    work; it must not pay for it twice)."""

    budget: int | None = None
    charges: list[Charge] = Field(default_factory=list)

    def charge(
        self,
        role: Role,
        iteration: int,
        prompt_tokens: int,
        completion_tokens: int,
        *,
        calls: int = 0,
        key: str = "",
    ) -> bool:
        if role not in ROLES:
            raise ValueError(f"unknown ledger role {role!r}; use one of {', '.join(ROLES)}")
        if min(prompt_tokens, completion_tokens, calls) < 0:
            raise ValueError("token and call counts cannot be negative")
        if key and any(c.key == key for c in self.charges):
            return False
        self.charges.append(
            Charge(
                role=role,
                iteration=iteration,
                prompt_tokens=prompt_tokens,
                completion_tokens=completion_tokens,
                calls=calls,
                key=key,
            )
        )
        return True

    def has(self, key: str) -> bool:
        return any(c.key == key for c in self.charges)

    def total(self, roles: tuple[Role, ...] = ROLES) -> int:
        return sum(c.tokens for c in self.charges if c.role in roles)

    @property
    def training_tokens(self) -> int:
        """What counts against the budget: everything but agent-test."""
        return self.total(TRAINING_ROLES)

    def by_role(self) -> dict[str, int]:
        out: dict[str, int] = dict.fromkeys(ROLES, 0)
        for c in self.charges:
            out[c.role] += c.tokens
        return out

    def by_iteration(self) -> dict[int, dict[str, int]]:
        out: dict[int, dict[str, int]] = defaultdict(lambda: dict.fromkeys(ROLES, 0))
        for c in self.charges:
            out[c.iteration][c.role] += c.tokens
        return {k: out[k] for k in sorted(out)}

    def iteration_tokens(self, iteration: int) -> int:
        return sum(
            c.tokens for c in self.charges if c.iteration == iteration and c.role != "agent-test"
        )

    @property
    def remaining(self) -> int | None:
        return None if self.budget is None else self.budget - self.training_tokens

    def allows(self, projected: int = 0) -> bool:
        """Whether `projected` more training tokens fit in the budget (always, without one)."""
        remaining = self.remaining
        return remaining is None or (remaining > 0 and projected <= remaining)

    def ensure(self, projected: int = 0, what: str = "the next step") -> None:
        """Raise BudgetExceeded unless `projected` more tokens fit."""
        if not self.allows(projected):
            raise BudgetExceeded(
                f"token budget {self.budget} would be exceeded by {what} "
                f"(spent {self.training_tokens}, about {projected} more needed)"
            )
