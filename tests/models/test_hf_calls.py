"""Tool-call parsing on replies the real model produced, and on the ways small models err.

`fixtures/smollm2_replies.json` holds every reply hf/smollm2-135m wrote in a few toy-shop
episodes (how: fixtures/record_smollm2_replies.py); each is the text the parser saw, prefill
included.
"""

from __future__ import annotations

import json
from pathlib import Path

from workgym.models.hf_calls import INVALID_CALL, malformed, parse_reply

RECORDED = json.loads((Path(__file__).parent / "fixtures" / "smollm2_replies.json").read_text())


def test_every_recorded_reply_becomes_exactly_one_call() -> None:
    tools = set(RECORDED["tools"])
    assert RECORDED["model"] == "hf/smollm2-135m" and len(RECORDED["replies"]) >= 10
    named = 0
    for reply in RECORDED["replies"]:
        message = parse_reply(reply["text"])
        assert len(message.tool_calls) == 1, reply["text"]
        call = message.tool_calls[0]
        if call in malformed(message):
            continue
        assert isinstance(json.loads(call.arguments), dict)
        named += call.name in tools
    assert named >= len(RECORDED["replies"]) // 2  # most replies call a real tool, well formed


def test_small_model_errors_are_tool_calls_not_lost_text() -> None:
    unclosed = parse_reply('<tool_call>\n{"name": "get_item", "arguments": {"name": "sencha"}}')
    assert [(c.name, json.loads(c.arguments)) for c in unclosed.tool_calls] == [
        ("get_item", {"name": "sencha"})
    ]
    extra = parse_reply('<tool_call>\n{"name": "list_items", "arguments": {}}}\n</tool_call>')
    assert extra.tool_calls[0].name == "list_items" and not malformed(extra)
    broken = parse_reply('<tool_call>\n{"name": "get_item", "arguments": {"name": sencha}}')
    call = broken.tool_calls[0]
    assert call.name == "get_item" and malformed(broken) == [call]
    garbage = parse_reply("<tool_call>\nlist the teas please\n</tool_call>")
    assert garbage.tool_calls[0].name == INVALID_CALL
    assert garbage.tool_calls[0].arguments == "list the teas please"
