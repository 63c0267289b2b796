"""Reviews: the reviews.jsonl format, trusted successes, and `workgym review`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import workgym as wg
from workgym.apps.cli.main import app
from workgym.core.episode import record_flags
from workgym.envs.toy.env import ToyShop
from workgym.guards.review import REVIEWS, TrustedOutcomes, append_review, read_reviews

runner = CliRunner()


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    """A run whose every success is flagged: the oracle answers without looking anything up."""
    run = wg.eval(
        ToyShop(), "scripted/oracle", split="dev", out=tmp_path / "r", limit=3, progress=False
    )
    return run.path


def first(run: Path) -> tuple[str, list[str]]:
    record = json.loads((run / "episodes.jsonl").read_text().splitlines()[0])
    return record["task_id"], record_flags(record)


def test_flagged_successes_are_untrusted_until_every_flag_is_accepted(run_dir: Path) -> None:
    task_id, flags = first(run_dir)
    assert len(flags) == 2
    outcomes = TrustedOutcomes.from_run(run_dir)
    assert not outcomes.trusted(task_id) and outcomes.reward(task_id) == 0.0
    append_review(run_dir, task_id, 0, flags[0], "accepted", "oracle")
    assert not TrustedOutcomes.from_run(run_dir).trusted(task_id)
    append_review(run_dir, task_id, 0, flags[1], "accepted", "oracle")
    outcomes = TrustedOutcomes.from_run(run_dir)
    assert outcomes.trusted(task_id) and outcomes.reward(task_id) == 1.0
    s = outcomes.summary()
    assert (s.successes, s.flagged_successes, s.trusted_successes) == (3, 3, 1)
    # The latest review wins: a later exploit verdict revokes the trust.
    append_review(run_dir, task_id, 0, flags[1], "exploit", "on second thought")
    outcomes = TrustedOutcomes.from_run(run_dir)
    assert not outcomes.trusted(task_id) and outcomes.summary().exploits == 1


def test_reviews_file_has_exactly_the_shared_format(run_dir: Path) -> None:
    task_id, flags = first(run_dir)
    append_review(run_dir, task_id, 0, flags[0], "exploit", "note")
    line = json.loads((run_dir / REVIEWS).read_text().splitlines()[0])
    assert list(line) == ["task_id", "epoch", "flag", "decision", "note", "at"]
    assert line["decision"] == "exploit" and line["at"].endswith("+00:00")
    # A line written by another tool (the viewer) in the same format is read back.
    other = {"task_id": task_id, "epoch": 0, "flag": flags[1], "decision": "accepted",
             "note": "", "at": "2025-01-01T00:00:00+00:00"}  # fmt: skip
    with (run_dir / REVIEWS).open("a") as fh:
        fh.write(json.dumps(other) + "\n")
    assert read_reviews(run_dir)[(task_id, 0, flags[1])].decision == "accepted"


def test_bad_reviews_are_refused_with_a_hint(run_dir: Path) -> None:
    task_id, _ = first(run_dir)
    with pytest.raises(wg.ConfigError, match="has no flag 'peek'"):
        append_review(run_dir, task_id, 0, "peek", "accepted")
    with pytest.raises(wg.ConfigError, match="no episode"):
        append_review(run_dir, "nope", 0, "peek", "accepted")
    (run_dir / REVIEWS).write_text('{"task_id": "x", "decision": "maybe"}\n')
    with pytest.raises(wg.ConfigError, match=r"reviews\.jsonl:1 is not a review"):
        read_reviews(run_dir)


def test_review_command_lists_and_marks(run_dir: Path) -> None:
    task_id, flags = first(run_dir)
    listed = runner.invoke(app, ["review", str(run_dir)])
    assert listed.exit_code == 0 and "3 successes, 3 flagged, 0 trusted" in listed.output
    marked = runner.invoke(
        app, ["review", str(run_dir), "--task", task_id, "--accept", "--note", "oracle"]
    )
    assert marked.exit_code == 0, marked.output
    assert "1 trusted" in marked.output
    assert len((run_dir / REVIEWS).read_text().splitlines()) == len(flags)
    both = runner.invoke(app, ["review", str(run_dir), "--task", task_id, "--accept", "--exploit"])
    assert both.exit_code != 0
