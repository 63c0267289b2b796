"""What the transcript audit reads of an episode, computed once per episode, and where in the
transcript a flag belongs.

The texts are joined and lower-cased up front so that a clean episode costs a few substring
checks; locating the message that raised a flag is done only after a detector fired, so the
placement costs nothing on the common, clean path.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from workgym.core.environment import Environment
    from workgym.core.episode import Episode
    from workgym.core.tasks import Task

SCAN_CHARS = 64_000  # text the regular expressions read: head and tail halves of longer texts
HUGE_CHARS = 1_000_000  # an assistant output beyond this is itself flagged


def clip(text: str) -> str:
    """Bound the audit's cost on a 10 MB output; the huge output itself is flagged instead."""
    if len(text) <= SCAN_CHARS:
        return text
    half = SCAN_CHARS // 2
    return text[:half] + "\n" + text[-half:]


_HINT_RES: dict[tuple[str, ...], re.Pattern[str]] = {}


def any_in(text: str, hints: tuple[str, ...]) -> bool:
    """Does any hint occur in `text`? (One literal alternation: faster than a loop of `in`.)"""
    found = _HINT_RES.get(hints)
    if found is None:
        found = _HINT_RES[hints] = re.compile("|".join(re.escape(h) for h in hints))
    return bool(text) and found.search(text) is not None


def as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return repr(value)
    return json.dumps(value, default=str)


def string_args(arguments: str) -> Iterator[str]:
    """Every string inside a call's JSON arguments (the raw text when it is not JSON)."""
    try:
        value = json.loads(arguments)
    except ValueError:
        yield arguments
        return
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


@dataclass
class View:
    """The parts of an episode every detector reads, computed once."""

    env: Environment
    task: Task
    ep: Episode
    final_name: str | None
    has_tools: bool
    answer_text: str
    assistant_text: str
    observation_text: str
    huge: bool  # some assistant output is over HUGE_CHARS
    args_text: str  # arguments of every call except the final tool's, joined, lower case
    all_args_text: str  # arguments of every call, lower case
    assistant_lower: str

    @property
    def evidence_required(self) -> bool:
        return bool(self.task.meta.get("evidence_required", True))

    def ok_calls(self) -> list[Any]:
        return [c for c in self.ep.tool_calls if c.status == "ok" and c.name != self.final_name]

    # -- where a flag belongs (index into Episode.messages); only computed once one fired ------

    @cached_property
    def result_sites(self) -> list[int | None]:
        """For each entry of Episode.tool_calls, the assistant message that proposed the call.

        The loop appends one tool message per executed call right after the assistant message,
        in order, so order pairs them even when a scripted model reuses call ids; a transcript
        built some other way falls back to matching ids.
        """
        owners: list[int] = []
        by_id: dict[str, int] = {}
        last = -1
        for i, m in enumerate(self.ep.messages):
            if m.role == "assistant":
                last = i
                by_id.update((c.id, i) for c in m.tool_calls)
            elif m.role == "tool" and last >= 0:
                owners.append(last)
        results = self.ep.tool_calls
        if len(owners) == len(results):
            return list(owners)
        return [by_id.get(r.call_id) for r in results]

    @cached_property
    def submission(self) -> int | None:
        """The assistant message whose answer was scored: the one that called the final tool
        successfully, else the last assistant message (a free-text reply)."""
        for k, r in enumerate(self.ep.tool_calls):
            if r.name == self.final_name and r.status == "ok":
                return self.result_sites[k]
        last = [i for i, m in enumerate(self.ep.messages) if m.role == "assistant"]
        return last[-1] if last else None

    @cached_property
    def shown_text(self) -> str:
        """What the agent was told before acting: the system and user messages, and the tools'
        names, descriptions and argument schemas (an enum's values are vocabulary, not data)."""
        said = [m.content for m in self.ep.messages if m.role in ("system", "user")]
        specs = json.dumps([t.spec.model_dump() for t in self.env.tools], default=str)
        return "\n".join([*said, specs])

    @cached_property
    def used_args(self) -> list[str]:
        """Every string the agent passed to a lookup that succeeded (queries, ids, names)."""
        return [a for c in self.ok_calls() for a in string_args(c.arguments)]

    def assistant_turns(self) -> list[tuple[int, str, str]]:
        """(message index, content, call arguments joined) of every assistant message, clipped."""
        return [
            (i, clip(m.content), "\n".join(clip(c.arguments) for c in m.tool_calls))
            for i, m in enumerate(self.ep.messages)
            if m.role == "assistant"
        ]


def view(env: Environment, task: Task, ep: Episode) -> View:
    final = env.final_tool
    assistant = [m.content for m in ep.messages if m.role == "assistant" and m.content]
    observed = [m.content for m in ep.messages if m.role in ("user", "tool")]
    final_name = final.name if final is not None else None
    args = [c.arguments for c in ep.tool_calls if c.name != final_name]
    all_args = [c.arguments for c in ep.tool_calls]
    huge = any(len(t) > HUGE_CHARS for t in (*assistant, *all_args))
    if huge:
        assistant = [clip(t) for t in assistant]
        args = [clip(t) for t in args]
        all_args = [clip(t) for t in all_args]
        observed = [clip(t) for t in observed]
    answer = "" if ep.answer is None else clip(as_text(ep.answer))
    return View(
        env=env,
        task=task,
        ep=ep,
        final_name=final_name,
        has_tools=any(not t.final for t in env.tools),
        answer_text=answer,
        assistant_text="\n".join(assistant),
        observation_text="\n".join(observed),
        huge=huge,
        args_text="\n".join(args).lower(),
        all_args_text="\n".join(all_args).lower(),
        assistant_lower="\n".join(assistant).lower(),
    )
