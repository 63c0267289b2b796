"""Provenance of identifiers: an agent may only use an id it has been shown.

A call that names a record the agent never saw — no prompt, no tool result mentioned it — was
guessed or copied from somewhere it should not reach (a leaked answer, another task). Even when
the guess is right, the episode did not do the job (look the record up), so the verifier fails
it and flags `provenance`. Only user and tool messages count as observations: the agent's own
text does not make an id known.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from workgym.core.messages import Message

FLAG = "provenance"
SCAN_CHARS = 128_000  # ids sit near the start of real arguments; a 10 MB argument is clipped


def clip(text: str, limit: int = SCAN_CHARS) -> str:
    """Head and tail of a long text, so a pathological output cannot stall scoring."""
    return text if len(text) <= limit else text[: limit // 2] + "\n" + text[-limit // 2 :]


def unobserved_ids(
    messages: Sequence[Message], pattern: re.Pattern[str], skip: frozenset[str] = frozenset()
) -> list[str]:
    """`tool: id` for each id an assistant call used before any observation showed it.

    Calls to tools in `skip` (those that take no ids, like a final outcome) are not scanned.
    """
    seen: set[str] = set()
    out: list[str] = []
    for message in messages:
        if message.role in ("user", "tool"):
            seen.update(pattern.findall(clip(message.content)))
        elif message.role == "assistant":
            for call in message.tool_calls:
                if call.name in skip:
                    continue
                for found in pattern.findall(clip(call.arguments or "")):
                    if found not in seen and f"{call.name}: {found}" not in out:
                        out.append(f"{call.name}: {found}")
    return out
