"""`scripted/mixed`: the test double that the adapter tests compare harnesses with.

Comparing per-task rewards is only a test when they differ by task: this double is right on
about half the tasks and wrong on the rest, through the same guard hooks the probes use to play
an answer. It lives here, above the guards, because it plays answers with them; it is declared
in the `workgym.scripted` entry points, so `workgym eval --model scripted/mixed` finds it.
Its rewards are a test double's, never a result.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

from workgym.core.messages import Message, ToolCall
from workgym.guards.capabilities import submit, wrong_answer
from workgym.testing.scripted import TaskScript

if TYPE_CHECKING:
    from workgym.core.environment import Environment
    from workgym.core.tasks import Task


def _mixed_turns(task: Task, env: Environment) -> Sequence[Message]:
    """Right on about half the tasks (by a hash of the id), a plausible wrong answer on the
    rest, after one malformed call to a lookup tool (an empty argument list): a double whose
    per-task rewards differ, for comparing harnesses task by task."""
    lookups = [t for t in env.tools if not t.final]
    opening = (
        [
            Message(
                role="assistant",
                tool_calls=[ToolCall(id="m0", name=lookups[0].name, arguments=json.dumps({}))],
            )
        ]
        if lookups
        else []
    )
    if hashlib.sha256(task.id.encode()).digest()[0] % 2 == 0:
        return [*opening, *env.oracle(task)]
    return [*opening, *submit(env, task, wrong_answer(env, task))]


def mixed() -> TaskScript:
    """`scripted/mixed`: per-task rewards that differ (see `_mixed_turns`), never a result."""
    return TaskScript("scripted/mixed", _mixed_turns)
