"""Tool calls written the ways real models write them: bare JSON, fenced JSON, `name({...})`.

The second half replays replies real models produced (tests/models/fixtures/real_replies.json, 37
recorded by bench/record_replies.py at temperature 0.3, seed 0, dev tasks of workgym/lookup and
workgym/toy-shop, forced and unforced: `--models hf/smollm2-135m`, `--models
llamacpp/qwen2.5-coder-0.5b` (both `--limit 2`) and `--models llamacpp/qwen2.5-coder-1.5b
--limit 1`); each carries the parse a person read off it (`expect`), written after recording.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from workgym.models.hf_calls import INVALID_CALL, malformed, parse_reply

TOOLS = ["lookup_price", "submit_answer"]


def calls(text: str, tools: list[str] = TOOLS) -> list[tuple[str, Any]]:
    out = []
    for call in parse_reply(text, tools).tool_calls:
        try:
            args: Any = json.loads(call.arguments)
        except ValueError:
            args = call.arguments
        out.append((call.name, args))
    return out


def test_a_bare_json_object_naming_an_offered_tool_is_a_call() -> None:
    text = 'I will look it up.\n{"name": "lookup_price", "arguments": {"sku": "A-1"}}'
    reply = parse_reply(text, TOOLS)
    assert calls(text) == [("lookup_price", {"sku": "A-1"})]
    assert reply.content == "I will look it up."


def test_a_fenced_json_block_is_a_call_and_leaves_the_prose() -> None:
    text = 'Sure:\n```json\n{"name": "submit_answer", "arguments": {"answer": "12"}}\n```\nDone.'
    reply = parse_reply(text, TOOLS)
    assert calls(text) == [("submit_answer", {"answer": "12"})]
    assert reply.content == "Sure:\n\nDone."


def test_name_with_a_json_object_in_parentheses_is_a_call() -> None:
    assert calls('submit_answer({"answer": "7"})') == [("submit_answer", {"answer": "7"})]
    assert calls("then lookup_price()") == [("lookup_price", {})]


def test_two_calls_in_one_reply_are_both_read_in_order() -> None:
    text = (
        '{"name": "lookup_price", "arguments": {"sku": "A"}}\n'
        '{"name": "lookup_price", "arguments": {"sku": "B"}}'
    )
    assert calls(text) == [("lookup_price", {"sku": "A"}), ("lookup_price", {"sku": "B"})]


def test_anything_else_stays_text() -> None:
    for text in [
        '{"name": "delete_everything", "arguments": {}}',  # not an offered tool
        '{"answer": 12}',  # JSON, but not a call
        "print(lookup_prices(x))",  # another function whose name contains a tool's
        "First lookup_price (the tool), then submit_answer (the other one).",  # prose
        "The price is 12.",
        "```python\ndef submit(x):\n    return x\n```",
    ]:
        reply = parse_reply(text, TOOLS)
        assert reply.tool_calls == [] and reply.content == text.strip(), text
    # Without offered tools nothing loose is read at all.
    assert parse_reply('{"name": "submit_answer", "arguments": {}}').tool_calls == []


def test_a_malformed_call_of_an_offered_tool_is_a_tool_error_not_lost_text() -> None:
    broken = '{"name": "submit_answer", "arguments": {"answer": "12"'
    reply = parse_reply(broken, TOOLS)
    assert [c.name for c in reply.tool_calls] == ["submit_answer"]
    assert malformed(reply) == reply.tool_calls  # the toolkit answers with a tool error
    paren = parse_reply("submit_answer(answer=12)", TOOLS)
    assert [c.name for c in paren.tool_calls] == ["submit_answer"] and malformed(paren)


def test_tool_call_blocks_still_come_first() -> None:
    text = '<tool_call>\n{"name": "lookup_price", "arguments": {"sku": "A"}}\n</tool_call>'
    assert calls(text) == [("lookup_price", {"sku": "A"})]
    assert parse_reply("<tool_call>\nnonsense", TOOLS).tool_calls[0].name == INVALID_CALL


RECORDED = Path(__file__).parent / "fixtures" / "real_replies.json"


def recorded() -> list[dict[str, Any]]:
    return [r for r in json.loads(RECORDED.read_text(encoding="utf-8")) if "expect" in r]


def test_the_recording_covers_all_three_models() -> None:
    models = {r["model"].split("/", 1)[1] for r in recorded()}
    assert {"smollm2-135m", "qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b"} <= models


@pytest.mark.parametrize("record", recorded(), ids=lambda r: f"{r['model']}-{r['id']}")
def test_recorded_replies_parse_as_a_person_read_them(record: dict[str, Any]) -> None:
    got = calls(record["text"], record["tools"])
    want = [(c["name"], c["arguments"]) for c in record["expect"]]
    assert got == want
