"""The conversation vocabulary shared by models, the episode loop and run files.

Messages follow the OpenAI chat shape (role, content, tool calls) because every serving stack we
target speaks it; keeping one shape means a transcript on disk can be replayed to any provider.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Role = Literal["system", "user", "assistant", "tool"]


class ToolCall(BaseModel):
    """One function call proposed by the model.

    `arguments` is the raw JSON text as the model wrote it: it may be malformed, and that is the
    toolkit's job to report back to the agent, not the provider's to repair.
    """

    model_config = ConfigDict(frozen=True)

    id: str
    name: str
    arguments: str = "{}"


class Message(BaseModel):
    model_config = ConfigDict(frozen=True)

    role: Role
    content: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    tool_call_id: str | None = None
    name: str | None = None

    def to_openai(self) -> dict[str, Any]:
        """The chat-completions wire form of this message."""
        out: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            out["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments},
                }
                for c in self.tool_calls
            ]
        if self.tool_call_id is not None:
            out["tool_call_id"] = self.tool_call_id
        if self.name is not None and self.role == "tool":
            out["name"] = self.name
        return out


def system(text: str) -> Message:
    return Message(role="system", content=text)


def user(text: str) -> Message:
    return Message(role="user", content=text)


def assistant(text: str = "", tool_calls: list[ToolCall] | None = None) -> Message:
    return Message(role="assistant", content=text, tool_calls=tool_calls or [])


def from_openai(data: dict[str, Any]) -> Message:
    """An assistant message from its chat-completions form (what a client or trainer sends).

    Arguments given as an object rather than JSON text are serialised; a call without an id is
    given one by position, so the tool reply can refer to it.
    """
    calls = []
    for i, c in enumerate(data.get("tool_calls") or []):
        fn = c.get("function", c)
        args = fn.get("arguments", "{}")
        calls.append(
            ToolCall(
                id=c.get("id") or f"call_{i}",
                name=fn.get("name", ""),
                arguments=args if isinstance(args, str) else json.dumps(args),
            )
        )
    return Message(role="assistant", content=data.get("content") or "", tool_calls=calls)
