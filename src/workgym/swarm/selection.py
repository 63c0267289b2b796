"""Choosing one answer among independent attempts, without the verifier.

A selector sees what the agents saw and said — the task prompt, each attempt's answer and
transcript — and nothing else: it is handed neither the Task (whose `answer` is the ground truth)
nor the Environment (whose `verify` is the reward). That is structural, not a promise: the
selection that a swarm is credited for is one it could make at test time.

- `MajorityVote` (self-consistency): the most frequent answer; ties go to the answer given first.
- `JudgeSelect` (best-of-k): one call to a model that reads the candidates and names the best;
  when its reply names no candidate, the vote decides. Its tokens are the swarm's cost.
"""

from __future__ import annotations

import asyncio
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from workgym.core.episode import AgentRecord, TokenUsage
from workgym.core.errors import ConfigError
from workgym.core.messages import Message
from workgym.core.model import Model, Sampling
from workgym.core.tasks import canonical_json
from workgym.swarm.accounting import agent_record, conversation_usage
from workgym.swarm.work import work_text


@dataclass(frozen=True)
class Candidate:
    """One attempt that submitted an answer: its index, answer and visible transcript."""

    index: int
    answer: Any
    messages: list[Message]


@dataclass
class Selection:
    """Which candidate won (None when there were none), and any agents the choice cost."""

    index: int | None
    method: str
    agents: list[AgentRecord] = field(default_factory=list)


@runtime_checkable
class Selector(Protocol):
    name: str

    def describe(self) -> dict[str, Any]: ...

    async def select(
        self,
        prompt: list[Message],
        candidates: list[Candidate],
        *,
        seed: int,
        timeout_s: float | None,
    ) -> Selection: ...


def answer_key(answer: Any) -> str:
    """Answers that mean the same compare equal: whitespace-normalised text, canonical JSON."""
    if isinstance(answer, str):
        return " ".join(answer.split())
    return canonical_json(answer)


def plurality(candidates: list[Candidate]) -> int | None:
    """Index of the first candidate with the most frequent answer; None without candidates."""
    if not candidates:
        return None
    keys = [answer_key(c.answer) for c in candidates]
    counts = Counter(keys)
    best = max(counts.values())
    winner = next(k for k in keys if counts[k] == best)  # the earliest of the tied answers
    return next(c.index for c, k in zip(candidates, keys, strict=True) if k == winner)


class MajorityVote:
    """Self-consistency: the most frequent answer wins; costs no model call."""

    name = "vote"

    def describe(self) -> dict[str, Any]:
        return {"kind": "vote"}

    async def select(
        self,
        prompt: list[Message],
        candidates: list[Candidate],
        *,
        seed: int,
        timeout_s: float | None,
    ) -> Selection:
        return Selection(plurality(candidates), "vote")


JUDGE_SYSTEM = (
    "You compare candidate answers to one task, written by independent attempts of an agent. "
    "You cannot run tools. Judge from the task and the work each attempt shows. Reply with "
    "one line: BEST: <number of the best candidate>."
)
PICK = re.compile(r"BEST\s*[:#-]?\s*(\d+)", re.IGNORECASE)
MAX_WORK_CHARS = 3000


class JudgeSelect:
    """Best-of-k: a model reads the task and the distinct candidates and names the best one."""

    name = "judge"

    def __init__(self, model: Model, *, sampling: Sampling | None = None) -> None:
        if not isinstance(model, Model):
            raise ConfigError(
                f"{getattr(model, 'name', model)!r} cannot judge: a judge answers a prompt "
                "(openai/<model> or a scripted model with complete()); it must not see the task"
            )
        self.model = model
        self.sampling = sampling or Sampling()

    def describe(self) -> dict[str, Any]:
        return {"kind": "judge", "model": self.model.name, "sampling": self.sampling.describe()}

    def prompt(self, task_prompt: list[Message], distinct: list[Candidate]) -> list[Message]:
        task_text = "\n".join(m.content for m in task_prompt)
        parts = [f"# Task\n{task_text}"]
        for n, c in enumerate(distinct, 1):
            # the judge reads the attempt's moves; its instructions and the task are not work
            work = work_text(c.messages, MAX_WORK_CHARS, drop=("system", "user"))
            parts.append(f"# Candidate {n}\nanswer: {answer_key(c.answer)}\nwork:\n{work}")
        parts.append(f"Which candidate is best? Reply BEST: <1-{len(distinct)}>.")
        return [
            Message(role="system", content=JUDGE_SYSTEM),
            Message(role="user", content="\n\n".join(parts)),
        ]

    async def select(
        self,
        prompt: list[Message],
        candidates: list[Candidate],
        *,
        seed: int,
        timeout_s: float | None,
    ) -> Selection:
        distinct: list[Candidate] = []
        seen: set[str] = set()
        for c in candidates:
            if answer_key(c.answer) not in seen:
                seen.add(answer_key(c.answer))
                distinct.append(c)
        if len(distinct) <= 1:  # nothing to choose between: no call, no cost
            return Selection(distinct[0].index if distinct else None, "judge:unanimous")
        messages = self.prompt(prompt, distinct)
        call = self.model.complete(messages, [], self.sampling.with_seed(seed))
        if timeout_s is not None:
            try:
                reply = await asyncio.wait_for(call, max(timeout_s, 0.0))
            except TimeoutError:
                return Selection(plurality(candidates), "judge:timeout->vote")
        else:
            reply = await call
        usage = TokenUsage()
        conversation_usage(usage, messages, reply)
        record = agent_record(
            "selector",
            "selector",
            self.model.name,
            usage,
            transcript=[*messages, reply.message],
            turns=1,
            outcome="terminated",
        )
        found = PICK.search(reply.message.content)
        number = int(found.group(1)) if found else 0
        if 1 <= number <= len(distinct):
            return Selection(distinct[number - 1].index, "judge", [record])
        return Selection(plurality(candidates), "judge:unparsed->vote", [record])


def selector(spec: str | Selector, judge_model: Model | None = None) -> Selector:
    """`"vote"`, `"judge"` (needs `judge_model`) or a Selector object."""
    if not isinstance(spec, str):
        return spec
    if spec == "vote":
        return MajorityVote()
    if spec == "judge":
        if judge_model is None:
            raise ConfigError("select='judge' needs judge_model= (openai/<model>)")
        return JudgeSelect(judge_model)
    raise ConfigError(f"unknown selection {spec!r}: use 'vote', 'judge' or a Selector object")
