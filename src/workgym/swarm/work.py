"""An agent's work as another agent reads it: the judge of an attempts swarm, the checker of a
role swarm.

Neither reader has tools, so the work reaches it as plain lines inside its prompt. The text is
bounded so a long episode cannot blow up the reader's prompt, and it is cut from the front,
because the last calls and results are what show whether the answer is supported.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from workgym.core.messages import Message


def work_text(messages: Sequence[Message], max_chars: int, *, drop: Collection[str]) -> str:
    """One line per message not in `drop` (tool calls and results included), cut from the front.

    The reader's own prompt says what it already holds (the task, the system text), so the
    caller names the roles that would only repeat it.
    """
    lines = []
    for m in messages:
        if m.role in drop:
            continue
        if m.role == "tool":
            lines.append(f"tool {m.name}: {m.content}")
            continue
        calls = "; ".join(f"{c.name}({c.arguments})" for c in m.tool_calls)
        lines.append(f"{m.role}: {m.content}" + (f" [calls: {calls}]" if calls else ""))
    text = "\n".join(lines)
    return text if len(text) <= max_chars else "…" + text[-max_chars:]
