"""Tool calls in a local model's text: Qwen2.5-style `<tool_call>{json}</tool_call>` blocks.

Small models get the format nearly right more often than exactly right: a block left open when
the turn ends, a stray brace after the object. The first JSON object of a block is taken as the
call (`raw_decode`), and a block with no closing tag runs to the end of the text. What cannot be
read as a call is never dropped: it becomes a call named `invalid_tool_call` holding the raw
text, or, when only the arguments are broken, a call of the named tool with the raw arguments,
so the toolkit answers with a tool error that says what was wrong and the episode goes on.
"""

from __future__ import annotations

import json
import re
import uuid

from workgym.core.messages import Message, ToolCall

OPEN, CLOSE = "<tool_call>", "</tool_call>"
BLOCK = re.compile(r"<tool_call>(.*?)(?:</tool_call>|\Z)", re.DOTALL)
INVALID_CALL = "invalid_tool_call"
_NAME = re.compile(r'"name"\s*:\s*"([A-Za-z0-9_.\-]{1,128})"')
_ARGS = re.compile(r'"arguments"\s*:\s*(.*)', re.DOTALL)


def parse_call(block: str) -> ToolCall:
    """One block's call: valid, of a named tool with broken arguments, or `invalid_tool_call`."""
    raw = block.strip()
    call_id = f"call_{uuid.uuid4().hex[:16]}"
    start = raw.find("{")
    obj: object = None
    if start >= 0:
        try:
            obj, _ = json.JSONDecoder().raw_decode(raw, start)
        except ValueError:
            obj = None
    if isinstance(obj, dict) and isinstance(obj.get("name"), str):
        args = obj.get("arguments", obj.get("parameters", {}))
        arguments = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
        return ToolCall(id=call_id, name=obj["name"], arguments=arguments)
    named = _NAME.search(raw)
    if named is not None:  # the name is readable, the JSON is not: let the tool say why
        rest = _ARGS.search(raw)
        arguments = rest.group(1).strip().removesuffix("}").strip() if rest else raw
        return ToolCall(id=call_id, name=named.group(1), arguments=arguments or raw)
    return ToolCall(id=call_id, name=INVALID_CALL, arguments=raw)


def parse_reply(text: str) -> Message:
    """The assistant message in decoded completion text (special tokens already removed)."""
    calls = [parse_call(block) for block in BLOCK.findall(text)]
    content = BLOCK.sub("", text).strip() if calls else text.strip()
    return Message(role="assistant", content=content, tool_calls=calls)


def malformed(message: Message) -> list[ToolCall]:
    """The calls of a reply whose text could not be read as a well-formed call."""
    bad = []
    for call in message.tool_calls:
        if call.name == INVALID_CALL:
            bad.append(call)
            continue
        try:
            json.loads(call.arguments or "{}")
        except ValueError:
            bad.append(call)
    return bad
