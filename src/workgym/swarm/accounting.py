"""Cost accounting for teams: every agent's tokens counted once, a budget per task, and the
per-role costs read back from stored episodes.

The rule is simple on purpose: each agent owns one `TokenUsage` that only its own model calls
add to, and the episode's `usage` is the exact sum of those (`sum_usage`). Nothing is estimated
or shared, so a test can recompute every number from the calls the models answered.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

from workgym.core.episode import AgentRecord, TokenUsage, Truncation
from workgym.core.messages import Message
from workgym.core.model import Completion

# Sub-transcripts kept in an episode record: enough to see what an agent did, bounded so that a
# swarm of many agents does not make episodes.jsonl many times larger.
MAX_TRANSCRIPT_MESSAGES = 24
MAX_MESSAGE_CHARS = 2000


def sub_seed(seed: int, role: str, index: int) -> int:
    """A 32-bit seed for one agent of a team, derived from the episode's seed by hashing."""
    digest = hashlib.sha256(f"{seed}|{role}|{index}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


def sum_usage(usages: Iterable[TokenUsage]) -> TokenUsage:
    """The exact sum of several agents' usage, field by field (by-role estimates included)."""
    total = TokenUsage(by_role={})
    for u in usages:
        total.calls += u.calls
        total.prompt_tokens += u.prompt_tokens
        total.completion_tokens += u.completion_tokens
        total.cached_tokens += u.cached_tokens
        total.retries += u.retries
        for role, n in u.by_role.items():
            total.by_role[role] = total.by_role.get(role, 0) + n
    for role in ("system", "user", "assistant", "tool"):
        total.by_role.setdefault(role, 0)
    return total


def conversation_usage(usage: TokenUsage, messages: Iterable[Message], reply: Completion) -> None:
    """Charge one model call of an agent that is not an episode driver (planner, checker, judge):
    the call's server counts, and each message of its conversation once in the by-role split."""
    usage.add_call(reply)
    for message in messages:
        usage.add_message(message)
    usage.add_message(reply.message)


def bounded(messages: list[Message]) -> tuple[list[Message], int]:
    """A transcript cut to size: the first two and the last messages, each capped in length.

    Returns the kept messages and how many were left out.
    """
    keep = list(messages)
    dropped = 0
    if len(keep) > MAX_TRANSCRIPT_MESSAGES:
        dropped = len(keep) - MAX_TRANSCRIPT_MESSAGES
        keep = keep[:2] + keep[2 + dropped :]
    out = []
    for m in keep:
        if len(m.content) > MAX_MESSAGE_CHARS:
            cut = len(m.content) - MAX_MESSAGE_CHARS
            m = m.model_copy(update={"content": m.content[:MAX_MESSAGE_CHARS] + f" …[{cut} chars]"})
        out.append(m)
    return out, dropped


class Spend:
    """What a team has spent on one task so far, against its budget (None: no budget).

    Agents register the live `TokenUsage` their calls add to, so the total is always current,
    also while several attempts run at once.
    """

    def __init__(self, budget_tokens: int | None) -> None:
        self.budget = budget_tokens
        self.usages: list[TokenUsage] = []
        self.finished: list[int] = []  # total tokens of each finished attempt

    def track(self, usage: TokenUsage) -> TokenUsage:
        self.usages.append(usage)
        return usage

    @property
    def total(self) -> int:
        return sum(u.total_tokens for u in self.usages)

    def over(self) -> bool:
        return self.budget is not None and self.total >= self.budget

    def stop(self) -> Truncation | None:
        """For `episode.drive`: truncate an agent's episode once the team's budget is spent."""
        return "max_tokens" if self.over() else None

    def may_start(self, planned: int = 0) -> bool:
        """Whether one more attempt fits: the first always does; later ones only when the spend
        so far plus the mean cost of a finished attempt (for it and the `planned` ones not yet
        started) stays within the budget."""
        if self.budget is None:
            return True
        if not self.usages and planned == 0:
            return True
        if self.over():
            return False
        expected = sum(self.finished) / len(self.finished) if self.finished else 0.0
        return self.total + (planned + 1) * expected <= self.budget


def agent_record(
    name: str,
    role: str,
    model: str,
    usage: TokenUsage,
    *,
    transcript: list[Message] | None = None,
    **fields: Any,
) -> AgentRecord:
    """An AgentRecord with a bounded copy of the transcript and a copy of the usage."""
    kept, dropped = bounded(transcript or [])
    return AgentRecord(
        name=name,
        role=role,
        model=model,
        usage=usage.model_copy(deep=True),
        transcript=kept,
        transcript_dropped=dropped,
        **fields,
    )
