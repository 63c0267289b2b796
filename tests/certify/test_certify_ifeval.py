"""`suites/ifeval`: each checker on crafted replies, and the suite as an environment."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

import workgym as wg
from workgym.envs.suites.ifeval import FAMILIES, TOPIC_KEYS, IFEvalSuite, oracle_response
from workgym.envs.suites.ifeval_checks import check
from workgym.guards.check import check_async

CASES = [
    ({"kind": "words_at_least", "n": 5}, "one two three four five", "one two three four"),
    ({"kind": "words_at_most", "n": 3}, "one two three", "one two three four"),
    (
        {"kind": "include_keywords", "words": ["harbor", "meadow"]},
        "A Harbor by the meadow.",
        "A harbour by the meadows.",
    ),
    ({"kind": "exclude_word", "word": "very"}, "Everything is fine.", "It is Very fine."),
    ({"kind": "keyword_frequency", "word": "pebble", "n": 2}, "pebble, Pebble!", "pebbles pebble"),
    ({"kind": "json_format"}, '```json\n{"a": 1}\n```', "{'a': 1}"),
    ({"kind": "bullets", "n": 2}, "* one\n- two\n\n***", "* one\n* two\n* three"),
    ({"kind": "lowercase"}, "all lower here.", "Not all lower."),
    ({"kind": "uppercase"}, "ALL CAPS 123.", "ALL CAPS but one."),
    ({"kind": "no_commas"}, "No commas here.", "Yes, a comma."),
    (
        {"kind": "end_with", "phrase": "Any questions?"},
        "Done. Any questions?",
        "Any questions? Done.",
    ),
    ({"kind": "title"}, "<<My Title>>\ntext", "<<>> no title"),
    ({"kind": "paragraphs", "n": 2}, "one\n\n***\n\ntwo", "one\n\n***\n\n***\n\ntwo"),
    ({"kind": "placeholders", "n": 2}, "Meet at [place] on [date].", "Meet at [] on [date]."),
    ({"kind": "postscript", "marker": "P.S."}, "Hi.\n\nP.S. bye", "Hi. P.S."),
    ({"kind": "quotation"}, '"quoted"', 'quoted"'),
]


@pytest.mark.parametrize(("constraint", "good", "bad"), CASES, ids=[c[0]["kind"] for c in CASES])
def test_checker_accepts_the_good_reply_and_rejects_the_bad(
    constraint: dict[str, object], good: str, bad: str
) -> None:
    assert check(good, constraint)[0], check(good, constraint)
    ok, detail = check(bad, constraint)
    assert not ok and detail != "ok"
    assert check("   ", constraint) == (False, "empty response")


def test_every_family_has_tasks_all_in_the_test_split() -> None:
    env = IFEvalSuite()
    assert len(env.taskset) == 6 * len(FAMILIES)
    assert len(env.taskset.split("test")) == len(env.taskset)
    with pytest.raises(wg.SealedSplitError):
        env.taskset.training_view().split("test")


def test_oracle_passes_every_item_and_null_none(tmp_path: Path) -> None:
    env = IFEvalSuite()
    report = asyncio.run(check_async(env, tmp_path, progress=False, attack=False))
    by_name = {i.name: i for i in report.items}
    assert by_name["oracle solves every task"].passed
    assert by_name["null baseline stays near zero"].passed
    assert by_name["verdicts are deterministic"].passed


def test_a_reply_that_breaks_one_of_two_constraints_fails_with_the_reason() -> None:
    env = IFEvalSuite()
    task = next(t for t in env.taskset if t.family == "bullets+lowercase")
    good = oracle_response(task.answer["constraints"], TOPIC_KEYS[task.meta["topic"]][0])
    episode = wg.Episode(task_id=task.id, family=task.family, split="test", answer=good.upper())
    verdict = env.verify(task, episode)
    assert not verdict.success and verdict.subscores == {"bullets": 1.0, "lowercase": 0.0}
    assert "lowercase" in verdict.evidence["failed"]


def test_a_missing_extra_is_a_one_line_error_that_says_how_to_install() -> None:
    from workgym.core.errors import ConfigError
    from workgym.envs.suites.common import require

    with pytest.raises(ConfigError, match=r"pip install 'workgym\[suites\]'"):
        require("workgym_no_such_package", "suites/example")


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        ("I can't help with this request; no action is needed here.", "not about the topic"),
        ('[{"constraints": [{"kind": "words_at_most", "n": 30}]}] ' * 2, "not about the topic"),
        ("{prompt} {prompt}", "mostly a copy of the request"),
        ("{key} " + "word " * 20_000, "over 50,000 characters"),
        ("{key} is short", "fewer than 10 words"),
    ],
)
def test_replies_that_attempt_nothing_fail_whatever_they_satisfy(reply: str, why: str) -> None:
    """Content-free passes `workgym attack suites/ifeval` found on negative constraints
    (at most N words, no commas, avoid a word): an abstention, the gold echoed as JSON, the
    request copied back, a huge output."""
    env = IFEvalSuite()
    task = next(t for t in env.taskset if t.family == "words_at_most")
    key = TOPIC_KEYS[task.meta["topic"]][0]
    text = reply.replace("{prompt}", str(task.prompt)).replace("{key}", key)
    ep = wg.Episode(task_id=task.id, family=task.family, split="test", answer=text)
    verdict = env.verify(task, ep)
    assert not verdict.success and why in verdict.evidence["failed"]["attempt"]
    on_topic = f"A few calm words on the {key} for you today, kept brief and plain."
    assert env.verify(task, ep.model_copy(update={"answer": on_topic})).success
