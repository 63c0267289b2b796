"""The reflection reply schema: what it lets a constrained reflector write, and that the loop
sends it. jsonschema stands in for the runtime's grammar here; the runtime itself is tested with
the real 0.5B in tests/models/test_llamacpp.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from workgym.core.messages import Message
from workgym.core.model import Completion, Sampling
from workgym.envs.toy_rules.env import ToyRules, ToyRulesAgent
from workgym.train.playbook.api import train_playbook
from workgym.train.playbook.config import TrainConfig
from workgym.train.playbook.lessons import parse_reflection
from workgym.train.playbook.reflect import EXAMPLE
from workgym.train.playbook.reply_schema import reflection_schema

jsonschema = pytest.importorskip("jsonschema")

# The 1.5B's reply in the claim-3 run (decision 0171): the right lesson as an UPDATE of ids that
# named no entry of the empty playbook.
ORPHAN_UPDATE = {
    "diagnoses": ["the worst attempt submitted the code in lower case"],
    "lessons": [{"op": "UPDATE", "section": "strategies", "text": "Always capitalize the code.",
                 "target_ids": ["pb-1"], "rationale": "case matters", "evidence": ["E2"]}],
    "tags": [],
}  # fmt: skip


def valid(reply: dict[str, Any], schema: dict[str, Any]) -> bool:
    try:
        jsonschema.validate(reply, schema)
    except jsonschema.ValidationError:
        return False
    return True


def test_an_empty_playbook_admits_adds_only_and_the_worked_example_fits() -> None:
    schema = reflection_schema(
        sections=["strategies", "pitfalls"], entry_ids=[], evidence=["E1", "E2"], max_lessons=3
    )
    example = json.loads(EXAMPLE.format(section="strategies").split(":\n", 1)[1])
    assert valid(example, schema)
    assert not valid(ORPHAN_UPDATE, schema)
    as_add = json.loads(json.dumps(ORPHAN_UPDATE))
    as_add["lessons"][0].update(op="ADD", target_ids=[])
    assert valid(as_add, schema)
    assert len(parse_reflection(json.dumps(as_add)).lessons) == 1
    for field, bad in (("section", "misc"), ("evidence", ["E9"]), ("op", "TAG")):
        wrong = json.loads(json.dumps(as_add))
        wrong["lessons"][0][field] = bad
        assert not valid(wrong, schema), field


def test_live_entries_can_be_named_and_made_up_ones_cannot() -> None:
    schema = reflection_schema(
        sections=["strategies"], entry_ids=["pb-1", "pb-2"], evidence=["E1"], max_lessons=1
    )
    lesson = {"op": "UPDATE", "section": "strategies", "text": "t", "target_ids": ["pb-1"],
              "rationale": "r", "evidence": ["E1"]}  # fmt: skip
    update = {"diagnoses": [], "tags": [{"id": "pb-2", "tag": "harmful"}], "lessons": [lesson]}
    assert valid(update, schema)
    update["lessons"][0]["target_ids"] = ["pb-9"]
    assert not valid(update, schema)
    update["lessons"][0]["target_ids"] = ["pb-1"]
    update["tags"] = [{"id": "pb-9", "tag": "harmful"}]
    assert not valid(update, schema)
    update["tags"] = []
    update["lessons"] = update["lessons"] * 2
    assert not valid(update, schema)  # over max_lessons


class SpyReflector:
    """Records the sampling of every reflection call; replies with no lessons."""

    name = "scripted/spy"

    def __init__(self) -> None:
        self.seen: list[Sampling] = []

    async def complete(self, messages: Any, tools: Any, sampling: Sampling) -> Completion:
        self.seen.append(sampling)
        reply = '{"diagnoses": [], "lessons": [], "tags": []}'
        return Completion(message=Message(role="assistant", content=reply))


@pytest.mark.parametrize("constrained", [True, False])
def test_the_loop_sends_the_schema_unless_told_not_to(tmp_path: Path, constrained: bool) -> None:
    spy = SpyReflector()
    cfg = TrainConfig(max_iterations=1, reflector_schema=constrained)
    train_playbook(ToyRules(), ToyRulesAgent(), reflector=spy, out=tmp_path, config=cfg)
    (sampling,) = spy.seen
    if constrained:
        schema = sampling.json_schema
        assert schema is not None
        assert schema["properties"]["lessons"]["items"]["properties"]["op"]["enum"] == ["ADD"]
        assert "reflector_schema" in cfg.identity()
    else:
        assert sampling.json_schema is None
        # a run from before the option had no such key, and resumes with the option off
        assert "reflector_schema" not in cfg.identity()
