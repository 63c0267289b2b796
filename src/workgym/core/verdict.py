"""Verdicts: how much an episode earned, and why.

A verdict always says *why* (its status) as well as how much: a zero from a verifier that crashed
is not the same fact as a zero for a wrong answer, and training must never confuse them.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, Field


class Status(StrEnum):
    ok = "ok"
    no_answer = "no_answer"
    parse_error = "parse_error"
    timeout = "timeout"
    agent_error = "agent_error"
    forbidden_action = "forbidden_action"
    verifier_error = "verifier_error"


class Verdict(BaseModel):
    reward: float = 0.0
    success: bool = False
    status: Status = Status.ok
    subscores: dict[str, float] = Field(default_factory=dict)
    evidence: dict[str, Any] = Field(default_factory=dict)
    flags: list[str] = Field(default_factory=list)

    @property
    def trainable(self) -> bool:
        """A verifier error masks the episode out of training (it is counted, not dropped)."""
        return self.status != Status.verifier_error

    @classmethod
    def correct(cls, **evidence: Any) -> Verdict:
        return cls(reward=1.0, success=True, evidence=evidence)

    @classmethod
    def wrong(cls, status: Status = Status.ok, **evidence: Any) -> Verdict:
        return cls(reward=0.0, success=False, status=status, evidence=evidence)

    @classmethod
    def all_or_nothing(
        cls,
        problems: list[str],
        subscores: dict[str, float] | None = None,
        evidence: dict[str, Any] | None = None,
        flags: list[str] | None = None,
    ) -> Verdict:
        """Reward 1 exactly when no check found a problem; the problems go into the evidence
        under "problems", so a failure always says why (the strict verifiers' shape)."""
        found = dict(evidence or {})
        if problems:
            found["problems"] = problems
        return cls(
            reward=0.0 if problems else 1.0,
            success=not problems,
            subscores=subscores or {},
            evidence=found,
            flags=flags or [],
        )
