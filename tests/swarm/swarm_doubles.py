"""Test doubles for the swarm tests, all named scripted/...: their results check the machinery
(accounting, budgets, selection, comparisons) and are never learning results.

Every double writes the usage of each completion it returns into a `CallLog`, keyed by the
instance that answered, so a test can recompute every agent's tokens independently of the
swarm's own accounting.
"""

from __future__ import annotations

import json
import random
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import workgym as wg
from workgym.core.episode import AgentRecord
from workgym.core.messages import Message, ToolCall
from workgym.core.model import Completion, Sampling, Usage, message_tokens


@dataclass
class CallLog:
    """(agent label, usage) of every completion, in call order."""

    calls: list[tuple[str, Usage]] = field(default_factory=list)

    def add(self, label: str, usage: Usage) -> None:
        self.calls.append((label, usage))

    def tokens(self) -> int:
        return sum(u.total_tokens for _, u in self.calls)

    def by_label(self) -> dict[str, int]:
        out: dict[str, int] = defaultdict(int)
        for label, u in self.calls:
            out[label] += u.total_tokens
        return dict(out)


def usage_of(messages: list[Message], reply: Message) -> Usage:
    # Odd weights, so that a token counted twice or dropped shows in every sum.
    return Usage(
        prompt_tokens=sum(message_tokens(m) for m in messages) + 3,
        completion_tokens=message_tokens(reply) + 1,
    )


def call(name: str, /, **args: object) -> ToolCall:
    return ToolCall(id=f"c_{name}", name=name, arguments=json.dumps(args))


class _Episode:
    """One episode of `Guesser`: look the subject up, then submit (right with probability p)."""

    def __init__(self, owner: Guesser, task: wg.Task, label: str) -> None:
        self.owner, self.task, self.label = owner, task, label
        self.name = owner.name

    async def complete(
        self, messages: list[Message], tools: list[wg.ToolSpec], sampling: Sampling
    ) -> Completion:
        o = self.owner
        system = messages[0].content if messages[0].role == "system" else ""
        p = o.p_plan if "## Plan from the planner" in system else o.p
        if not any(m.role == "tool" for m in messages):
            reply = Message(
                role="assistant",
                content="looking it up " + "word " * o.pad,
                tool_calls=[call("get_item", name="assam")],
            )
        else:
            rng = random.Random(f"{sampling.seed}|guess")
            right = rng.random() < p
            # a wrong guess is a fresh draw per attempt, so wrong attempts rarely agree
            answer = self.task.answer if right else self.task.answer + rng.randrange(1, 10_000)
            reply = Message(role="assistant", tool_calls=[call("submit_answer", answer=answer)])
        usage = usage_of(messages, reply)
        o.log.add(self.label, usage)
        return Completion(message=reply, usage=usage, finish_reason="stop")


class Guesser:
    """`scripted/guess`: right with probability p per episode (from its sampling seed), p_plan when
    a planner's plan is in its instructions; `pad` words make every turn more expensive. It sees
    the task (a test double): that is how it can be right on purpose."""

    def __init__(
        self, log: CallLog, *, p: float = 0.5, p_plan: float | None = None, pad: int = 0
    ) -> None:
        self.name = "scripted/guess"
        self.log, self.p, self.pad = log, p, pad
        self.p_plan = p if p_plan is None else p_plan
        self.episodes = 0

    def for_task(self, task: wg.Task, env: wg.Environment) -> _Episode:
        self.episodes += 1
        return _Episode(self, task, f"guess-{self.episodes - 1}")


class Talker:
    """`scripted/<label>`: a tool-less agent (planner, checker, judge) with canned replies; it
    never sees the task and records every prompt it was shown."""

    def __init__(self, log: CallLog, label: str, replies: list[str], *, pad: int = 0) -> None:
        self.name = f"scripted/{label}"
        self.log, self.label, self.replies, self.pad = log, label, replies, pad
        self.prompts: list[list[Message]] = []

    async def complete(
        self, messages: list[Message], tools: list[wg.ToolSpec], sampling: Sampling
    ) -> Completion:
        assert tools == []
        self.prompts.append(list(messages))
        text = self.replies[min(len(self.prompts) - 1, len(self.replies) - 1)]
        reply = Message(role="assistant", content=text + " word" * self.pad)
        usage = usage_of(messages, reply)
        self.log.add(self.label, usage)
        return Completion(message=reply, usage=usage, finish_reason="stop")


def seen_text(messages: list[Message]) -> str:
    return "\n".join(m.content + "".join(c.arguments for c in m.tool_calls) for m in messages)


def agents_of(ep: wg.Episode) -> list[AgentRecord]:
    """The agents' shares of a team's episode; [] when one agent played."""
    return ep.team.agents if ep.team is not None else []


def records_tokens(agents: list[Any]) -> int:
    return sum(a.usage.prompt_tokens + a.usage.completion_tokens for a in agents)
