from __future__ import annotations

import json

from workgym.core.episode import Episode
from workgym.core.messages import Message, ToolCall
from workgym.core.verdict import Verdict
from workgym.train.playbook.deltas import DeltaOp
from workgym.train.playbook.lessons import parse_reflection
from workgym.train.playbook.reflect import GroupView, build_prompt, transcript

GOOD = {
    "diagnoses": ["best upper-cased"],
    "lessons": [
        {
            "op": "ADD",
            "section": "format",
            "text": "Upper-case codes.",
            "evidence": ["E1", "E2"],
            "rationale": "r",
        }
    ],
    "tags": [{"id": "pb-001", "tag": "helpful"}],
}


def test_strict_json_parses() -> None:
    r = parse_reflection(json.dumps(GOOD))
    assert r.error is None and r.problems == () and r.diagnoses == ("best upper-cased",)
    (lesson,) = r.lessons
    assert lesson.op == DeltaOp.ADD and lesson.evidence == ("E1", "E2")
    assert r.tags[0].id == "pb-001" and r.tags[0].tag == "helpful"


def test_fences_prose_and_aliases_are_tolerated() -> None:
    fenced = "```json\n" + json.dumps(GOOD) + "\n```"
    assert parse_reflection(fenced).lessons == parse_reflection(json.dumps(GOOD)).lessons
    chatty = "Sure! Here you go: {not json} and then " + json.dumps(GOOD) + " Hope it helps."
    assert len(parse_reflection(chatty).lessons) == 1
    alias = {
        "deltas": [
            {
                "operation": "update",
                "targets": "pb-002",
                "content": "New text.",
                "category": "Tools",
                "evidence_ids": "E3",
            }
        ],
        "diagnosis": "one",
    }
    r = parse_reflection(json.dumps(alias))
    (lesson,) = r.lessons
    assert (lesson.op, lesson.target_ids, lesson.section, lesson.evidence) == (
        DeltaOp.UPDATE,
        ("pb-002",),
        "tools",
        ("E3",),
    )
    assert r.diagnoses == ("one",)


def test_bad_parts_are_dropped_with_reasons_and_nothing_raises() -> None:
    reply = {
        "lessons": [
            "just a string",
            {"op": "REWRITE_ALL", "text": "x"},
            {"op": "ADD", "text": 5},
            {"op": "ADD", "text": "ok", "evidence": [{"nested": 1}]},
            {"op": "TAG", "target_ids": ["pb-1"], "tag": "great"},
            {"op": "ADD", "section": "tools", "text": "kept", "evidence": ["E1"]},
        ],
        "tags": [{"id": "pb-1"}, "x"],
    }
    r = parse_reflection(json.dumps(reply))
    assert [lesson.text for lesson in r.lessons] == ["kept"]
    assert len(r.problems) == 7
    assert any("unknown op 'REWRITE_ALL'" in p for p in r.problems)
    for junk in ["", "no json here", "[1, 2]", "{'single': 'quotes'}", "{" * 50]:
        assert parse_reflection(junk).error is not None and parse_reflection(junk).lessons == ()


def test_lessons_over_the_limit_are_dropped() -> None:
    many = {"lessons": [{"op": "ADD", "section": "tools", "text": f"L{i}"} for i in range(7)]}
    r = parse_reflection(json.dumps(many), max_lessons=3)
    assert len(r.lessons) == 3 and sum("over the limit" in p for p in r.problems) == 4


def _episode(reward: float, answer: str) -> Episode:
    return Episode(
        task_id="t1",
        family="f",
        split="train",
        messages=[
            Message(role="system", content="SYSTEM PROMPT WITH PLAYBOOK"),
            Message(role="user", content="the task"),
            Message(
                role="assistant",
                content="Following [pb-001].",
                tool_calls=[
                    ToolCall(id="c", name="submit_code", arguments=json.dumps({"code": answer}))
                ],
            ),
            Message(role="tool", content="code recorded", name="submit_code", tool_call_id="c"),
        ],
        verdict=Verdict(reward=reward, success=reward == 1.0, evidence={"note": "case"}),
    )


def test_the_prompt_shows_contrast_marks_verifier_feedback_and_leaves_out_system_text() -> None:
    best, worst = _episode(1.0, "AB-1"), _episode(0.0, "ab-1")
    assert "SYSTEM PROMPT" not in transcript(best) and "submit_code" in transcript(best)
    msgs = build_prompt(
        instructions="Find codes.",
        playbook_text="- [pb-001] Upper-case.",
        groups=[GroupView("Find X.", "contrastive", (1.0, 0.0), best, "E1", worst, "E2")],
        recent=['d-0001 ADD [strategy] "x" -> rejected: gate A'],
        sections=["strategy", "format"],
        max_words=60,
        max_lessons=3,
    )
    assert [m.role for m in msgs] == ["system", "user"]
    text = msgs[1].content
    assert "episode id E1 (reward 1)" in text and "episode id E2 (reward 0)" in text
    assert text.count("NOT available to the agent at test time") == 2
    assert "Entries it cited: pb-001" in text and "rejected: gate A" in text
    assert "one of: strategy, format" in text and "at most 60 words" in text


def test_the_prompt_lists_the_agents_tools_and_a_reply_that_parses() -> None:
    """A small reflector sees the tools the agent has and one worked reply whose shape is the
    one `parse_reflection` accepts (the example is for another job, so it carries no answer)."""
    from workgym.envs.toy_rules.env import ToyRules

    msgs = build_prompt(
        instructions="Find part codes.",
        playbook_text="",
        groups=[],
        recent=[],
        sections=["strategies", "pitfalls"],
        max_words=40,
        max_lessons=3,
        tools=[t.spec for t in ToyRules.tools],
    )
    text = msgs[1].content
    assert "# The agent's tools\n\n- lookup_code: Look up the catalogue code of a part." in text
    assert "- submit_code: Submit the part's code. This ends the task." in text
    example = text.split("(a unit-conversion agent):\n", 1)[1]
    reflection = parse_reflection(example)
    assert [d.op for d in reflection.lessons] == [DeltaOp.ADD]
    assert reflection.lessons[0].section == "strategies" and json.loads(example)["tags"] == []
