"""Tool calls in a local model's text: `<tool_call>` blocks, and the looser forms real models use.

Qwen2.5-style `<tool_call>{json}</tool_call>` blocks are the format the templates teach. Left
unforced, real small models write calls other ways (tests/models/fixtures/real_replies.json):
a bare JSON object `{"name": ..., "arguments": {...}}`, the same object in a fenced ```json
block, or `name({...})`. When a reply has no `<tool_call>` block these are read as calls too,
but only where the name is one of the tools offered on that turn: anything else (a JSON answer,
code about some other function) stays text.

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
from collections.abc import Collection

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


def parse_reply(text: str, tools: Collection[str] = ()) -> Message:
    """The assistant message in decoded completion text (special tokens already removed).

    `tools` are the names offered on this turn: without a `<tool_call>` block, loose calls of
    those tools (bare JSON, fenced JSON, `name({...})`) are read as calls.
    """
    calls = [parse_call(block) for block in BLOCK.findall(text)]
    if calls:
        return Message(role="assistant", content=BLOCK.sub("", text).strip(), tool_calls=calls)
    if tools:
        loose, spans = loose_calls(text, frozenset(tools))
        if loose:
            kept, last = [], 0
            for start, end in spans:
                kept.append(text[last:start])
                last = end
            kept.append(text[last:])
            content = "".join(kept).strip()
            return Message(role="assistant", content=content, tool_calls=loose)
    return Message(role="assistant", content=text.strip(), tool_calls=[])


_FENCE = re.compile(r"```[A-Za-z]*[ \t]*\n?(.*?)(?:```|\Z)", re.DOTALL)


def _start_pattern(tools: frozenset[str]) -> re.Pattern[str]:
    names = "|".join(re.escape(n) for n in sorted(tools, key=len, reverse=True))
    # `name(` with no space: code's call syntax; prose such as "submit_answer (the tool)" is text
    return re.compile(r"```|\{|(?<![\w.])(" + names + r")\(")


def _json_call(text: str, start: int, tools: frozenset[str]) -> tuple[ToolCall | None, int]:
    """A call object starting at `text[start] == "{"`, and where it ends.

    Decodes to a dict naming an offered tool: a call. Undecodable, but `"name": "<tool>"` opens
    it: a call of that tool with the raw text as arguments (a tool error, not lost text) running
    to the end of `text`. Anything else: no call, and the end of the object (or start + 1).
    """
    try:
        obj, end = json.JSONDecoder().raw_decode(text, start)
    except ValueError:
        named = re.match(r'\{\s*"name"\s*:\s*"([^"]{1,128})"', text[start:])
        if named is not None and named.group(1) in tools:
            return parse_call(text[start:]), len(text)
        return None, start + 1
    if isinstance(obj, dict) and obj.get("name") in tools:
        return parse_call(text[start:end]), end
    return None, end


def _paren_call(text: str, name: str, open_at: int) -> tuple[ToolCall, int]:
    """`name(...)` with `text[open_at] == "("`: a JSON object, nothing, or raw arguments."""
    call_id = f"call_{uuid.uuid4().hex[:16]}"
    inner = open_at + 1
    while inner < len(text) and text[inner].isspace():
        inner += 1
    if text.startswith(")", inner):
        return ToolCall(id=call_id, name=name, arguments="{}"), inner + 1
    if text.startswith("{", inner):
        try:
            obj, end = json.JSONDecoder().raw_decode(text, inner)
        except ValueError:
            obj, end = None, inner
        if isinstance(obj, dict):
            close = re.match(r"\s*\)", text[end:])
            stop = end + (close.end() if close else 0)
            return ToolCall(id=call_id, name=name, arguments=json.dumps(obj)), stop
    close_at = text.find(")", inner)
    stop = len(text) if close_at < 0 else close_at + 1
    raw = text[inner : stop - (0 if close_at < 0 else 1)].strip()
    return ToolCall(id=call_id, name=name, arguments=raw or "{}"), stop


def loose_calls(text: str, tools: frozenset[str]) -> tuple[list[ToolCall], list[tuple[int, int]]]:
    """Calls of offered tools written as bare JSON, fenced JSON or `name({...})`, in order,
    with the spans of text they occupied."""
    calls: list[ToolCall] = []
    spans: list[tuple[int, int]] = []
    pattern = _start_pattern(tools)
    at = 0
    while (found := pattern.search(text, at)) is not None:
        start = found.start()
        if found.group(0) == "```":
            fence = _FENCE.match(text, start)
            if fence is None:
                at = start + 3
                continue
            inner, _ = loose_calls(fence.group(1), tools)
            if inner:
                calls.extend(inner)
                spans.append((start, fence.end()))
            at = fence.end()
        elif found.group(0) == "{":
            call, at = _json_call(text, start, tools)
            if call is not None:
                calls.append(call)
                spans.append((start, at))
        else:
            call, at = _paren_call(text, found.group(1), found.end() - 1)
            calls.append(call)
            spans.append((start, at))
    return calls, spans


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
