"""A worked example: one verified train episode, rendered as a short line the agent can copy.

It shows the task, the tool calls that worked with their (shortened) outputs and the final
answer, nothing else: no reasoning text, no verifier feedback, and no call the tools refused (a
real model copies an example's first call, so a success reached after a wrong tool name would
teach the wrong name; decision 0132). Only an episode the verifier passed and the audit
did not flag becomes one (`verified`), and an example too long to stay readable is dropped.
"""

from __future__ import annotations

import json

from pydantic import BaseModel, ConfigDict

from workgym.core.episode import Episode
from workgym.core.model import estimate_tokens
from workgym.core.tasks import Task
from workgym.train.playbook.text import normalize

SECTION = "worked examples"


class WorkedExample(BaseModel):
    model_config = ConfigDict(frozen=True)

    task_id: str  # the train task it came from (kept in provenance, not in the text)
    family: str
    episode: str  # "<run key>/<task id>/<epoch>"
    text: str

    @property
    def tokens(self) -> int:
        return estimate_tokens(self.text)


def verified(episode: Episode) -> bool:
    """The verifier passed it and nothing flagged it (a flagged success teaches a shortcut)."""
    v = episode.verdict
    return bool(v is not None and v.success and not episode.flags and not v.flags)


def _short(text: str, limit: int) -> str:
    text = normalize(text)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _call(name: str, arguments: str) -> str:
    try:
        args = json.loads(arguments) if arguments.strip() else {}
    except json.JSONDecodeError:
        return f"{name}({_short(arguments, 80)})"  # unparsed arguments, shown as a hint only
    if not isinstance(args, dict):
        return f"{name}({json.dumps(args)})"
    return f"{name}(" + ", ".join(f"{k}={json.dumps(v)}" for k, v in args.items()) + ")"


def _prompt(task: Task) -> str:
    if isinstance(task.prompt, str):
        return task.prompt
    return " ".join(m.content for m in task.prompt if m.role == "user")


def render(task: Task, episode: Episode, ref: str, *, tool_chars: int) -> WorkedExample:
    """The example line: `Task: ... Calls: a(x=1) -> "out"; b(...) Answer: ...`, failed calls
    left out."""
    calls = [
        _call(r.name, r.arguments) + (f" -> {json.dumps(_short(r.content, tool_chars))}")
        for r in episode.tool_calls
        if not r.is_error
    ]
    answer = episode.answer if isinstance(episode.answer, str) else json.dumps(episode.answer)
    text = f"Task: {normalize(_prompt(task))} Calls: {'; '.join(calls) or '(none)'}"
    text += f" Answer: {answer}"  # whole: a cut answer is a wrong one to copy (the example's
    # length is bounded as a whole by `example_chars`, which drops what is too long)
    return WorkedExample(task_id=task.id, family=task.family, episode=ref, text=text)
