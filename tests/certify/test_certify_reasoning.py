"""`suites/reasoning`: reasoning-gym's items and scorers (skips without the [suites] extra)."""

from __future__ import annotations

import pytest

import workgym as wg

pytest.importorskip("reasoning_gym", reason="needs the [suites] extra")

from workgym.envs.suites.reasoning import GENERATORS, PER_GENERATOR, ReasoningSuite


@pytest.fixture(scope="module")
def env() -> ReasoningSuite:
    return ReasoningSuite()


def _episode(task: wg.Task, text: str) -> wg.Episode:
    return wg.Episode(task_id=task.id, family=task.family, split="test", answer=text)


def test_items_are_fixed_and_held_out(env: ReasoningSuite) -> None:
    assert len(env.taskset) == len(GENERATORS) * PER_GENERATOR
    assert env.taskset.families() == sorted(GENERATORS)
    assert env.content_hash() == ReasoningSuite().content_hash()  # same seeds, same items
    assert len(env.taskset.split("test")) == len(env.taskset)


def test_the_generators_own_answer_scores_full_credit_on_every_item(env: ReasoningSuite) -> None:
    for task in env.taskset:
        verdict = env.verify(
            task, _episode(task, f"Thinking...\n<answer>{task.answer['answer']}</answer>")
        )
        assert verdict.success and verdict.reward == 1.0, (task.id, verdict)


def test_wrong_untagged_and_partial_answers_fail(env: ReasoningSuite) -> None:
    task = next(t for t in env.taskset if t.family == "basic_arithmetic")
    right = task.answer["answer"]
    no_tag = env.verify(task, _episode(task, f"The answer is {right}."))
    assert not no_tag.success and no_tag.status == wg.Status.parse_error
    wrong = env.verify(task, _episode(task, f"<answer>{int(right) + 1}</answer>"))
    assert not wrong.success and wrong.reward == 0.0
    partial = env.verify(task, _episode(task, f"<answer>{right} apples</answer>"))
    assert not partial.success and 0 < partial.subscores["reasoning_gym_score"] < 1
    last = env.verify(task, _episode(task, f"<answer>0</answer> no: <answer>{right}</answer>"))
    assert last.success  # the last tagged answer counts
