"""Playing a conclusion through the real tools: the oracle, and any scripted submission.

A conclusion only counts when its evidence was run in the episode, so the oracle does what an
investigator does: it runs each evidence query with run_sql, then submits. `conclusion_turns`
builds those assistant turns for any answer (the probes use it to play their attacks through
the same loop); the warehouse environment's `oracle()` calls `oracle_turns` for F9 tasks.
"""

from __future__ import annotations

import json
from typing import Any

from workgym.core.messages import Message, ToolCall
from workgym.core.tasks import Task
from workgym.envs.warehouse.runtime.conclusion_answer import ConclusionAnswer, parse_conclusion

RUN_SQL = "run_sql"
SUBMIT = "submit_answer"


def conclusion_turns(
    answer: dict[str, Any], *, run: list[str] | None = None, prefix: str = "oracle"
) -> list[Message]:
    """Run `run` (default: the answer's evidence queries) with run_sql, then submit `answer`."""
    if run is None:
        try:
            run = [q.sql for q in parse_conclusion(answer).queries()]
        except ValueError:
            run = []  # an invalid answer is still played: the tool will refuse it
    turns: list[Message] = []
    if run:
        calls = [
            ToolCall(id=f"{prefix}_sql_{i}", name=RUN_SQL, arguments=json.dumps({"sql": sql}))
            for i, sql in enumerate(run)
        ]
        turns.append(Message(role="assistant", tool_calls=calls))
    submit = ToolCall(
        id=f"{prefix}_submit", name=SUBMIT, arguments=json.dumps({"answer": answer}, default=str)
    )
    turns.append(Message(role="assistant", tool_calls=[submit]))
    return turns


def oracle_answer(task: Task) -> dict[str, Any]:
    """The gold conclusion as an agent submits it (without the hidden manifest)."""
    return ConclusionAnswer.model_validate(task.answer).submission()


def oracle_turns(task: Task) -> list[Message]:
    """Assistant turns that solve an investigation task: run the evidence, submit the gold."""
    return conclusion_turns(oracle_answer(task))
