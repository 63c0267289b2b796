"""Baselines, `workgym check` with the guards, and the admission gate."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import guards_fixtures as F
import pytest
from typer.testing import CliRunner

import workgym as wg
from workgym.apps.cli.main import app
from workgym.envs.toy.env import ToyShop
from workgym.guards.admission import (
    NotAdmittedError,
    admission_path,
    read_admissions,
    require_admitted,
)
from workgym.guards.baselines import BASELINES, run_baselines, thresholds
from workgym.guards.check import check_async

runner = CliRunner()


def test_baselines_stay_near_zero_on_the_toy(tmp_path: Path) -> None:
    report = asyncio.run(run_baselines(ToyShop(), tmp_path, split="all"))
    got = {r.name: r for r in report.results}
    assert list(got) == list(BASELINES) and report.passed
    assert got["null"].mean_reward == 0.0 and got["enumerating"].mean_reward == 0.0
    # The constant baseline guesses the most common train answer of each kind: with four
    # categories it is right on about a quarter of the category questions, which the toy
    # declares as its threshold (0.35) instead of the 0.10 default.
    assert 0.0 < got["constant"].mean_reward <= 0.35 and got["random"].threshold is None
    assert all((tmp_path / name / "episodes.jsonl").exists() for name in BASELINES)


class YesNo(F.Quiz):
    """Every answer is 'yes': a constant guess scores 1.0, and the gate must say so."""

    id = "test/yes-no"

    def tasks(self) -> wg.TaskSet:
        tasks = [t.model_copy(update={"answer": "yes", "id": ""}) for t in F.quiz_tasks()]
        return wg.TaskSet([wg.Task(**t.model_dump()) for t in tasks], F.SPLITS)


def test_a_constant_baseline_that_scores_is_flagged(tmp_path: Path) -> None:
    report = asyncio.run(run_baselines(YesNo(), tmp_path, split="all"))
    constant = report.result("constant")
    assert constant.mean_reward == 1.0 and not constant.passed and not report.passed


class Unique(F.Quiz):
    """Every answer is its own: no constant can be right, but a guesser scored on the train
    task whose answer it memorised would be right once per kind (decision 0184)."""

    id = "test/unique"

    def tasks(self) -> wg.TaskSet:
        tasks = [
            t.model_copy(update={"answer": f"answer {i}", "id": ""})
            for i, t in enumerate(F.quiz_tasks())
        ]
        return wg.TaskSet([wg.Task(**t.model_dump()) for t in tasks], F.SPLITS)


def test_a_train_answer_is_guessed_from_the_other_train_tasks(tmp_path: Path) -> None:
    report = asyncio.run(run_baselines(Unique(), tmp_path, split="all", names=["constant"]))
    assert report.result("constant").mean_reward == 0.0


def test_thresholds_are_per_environment() -> None:
    class Lenient(F.Quiz):
        baseline_thresholds = {"constant": 0.5, "random": 0.2}

    class Typo(F.Quiz):
        baseline_thresholds = {"constnat": 0.5}

    assert thresholds(Lenient())["constant"] == 0.5 and thresholds(Lenient())["random"] == 0.2
    assert thresholds(F.Quiz())["constant"] == 0.10
    with pytest.raises(ValueError, match="unknown baseline"):
        thresholds(Typo())


def test_check_includes_attack_and_baselines_and_records_admission(tmp_path: Path) -> None:
    env = ToyShop()
    report = asyncio.run(check_async(env, tmp_path / "check" / "toy", progress=False))
    names = [i.name for i in report.items]
    assert "probes give their expected verdicts" in names
    assert "baselines stay at or below their thresholds" in names
    data = next(i for i in report.items if i.name == "data files match the tasks")
    assert data.passed and data.detail == "no data files beyond the hashed content"
    assert report.passed and report.attack is not None and report.baselines is not None
    saved = json.loads((tmp_path / "check" / "toy" / "check.json").read_text())
    assert saved["attack"]["cells"] and saved["baselines"]["results"]
    assert (tmp_path / "check" / "toy" / "attack.html").exists()
    records = read_admissions(tmp_path / "check")
    assert records[env.content_hash()].passed
    admitted = require_admitted(env, directory=tmp_path / "check")
    assert admitted.admitted and admitted.forced == []


def test_unadmitted_environments_are_refused_unless_forced(tmp_path: Path) -> None:
    env = YesNo()
    with pytest.raises(NotAdmittedError, match=r"workgym check test/yes-no.*--force-unadmitted"):
        require_admitted(env, directory=tmp_path)
    forced = require_admitted(env, force=True, directory=tmp_path)
    assert not forced.admitted and forced.forced == [
        f"unadmitted-environment:test/yes-no@{env.content_hash()[:12]}"
    ]
    # A failed check is recorded too, and still refused.
    report = asyncio.run(check_async(env, tmp_path / "c" / "yes", progress=False, attack=False))
    assert not report.passed
    with pytest.raises(NotAdmittedError, match="failed admission"):
        require_admitted(env, directory=tmp_path / "c")
    record = read_admissions(tmp_path / "c")[env.content_hash()]
    assert any("constant" in f for f in record.failures)


def test_a_changed_environment_needs_a_new_check(tmp_path: Path) -> None:
    asyncio.run(check_async(ToyShop(), tmp_path / "toy", progress=False, attack=False))

    class V2(ToyShop):
        version = "2"

    with pytest.raises(NotAdmittedError, match="no admission record"):
        require_admitted(V2(), directory=tmp_path)
    admission_path(tmp_path).write_text("{broken")
    with pytest.raises(wg.ConfigError, match="corrupt"):
        require_admitted(ToyShop(), directory=tmp_path)


def test_attack_and_baselines_commands(tmp_path: Path) -> None:
    result = runner.invoke(
        app,
        ["attack", "workgym/toy-shop", "--out", str(tmp_path / "a"), "--per-family", "1",
         "--no-progress", "--probe", "master-key-solution", "--probe", "two-answers"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "attack PASSED" in result.output and re.search(r"next: \S*workgym check", result.output)
    data = json.loads((tmp_path / "a" / "attack.json").read_text())
    assert {c["probe"] for c in data["cells"]} == {"master-key-solution", "two-answers"}
    listing = runner.invoke(app, ["attack", "workgym/toy-shop", "--list"])
    assert "sleep-forever" in listing.output and "collateral-edit" in listing.output
    bad = runner.invoke(app, ["attack", "workgym/toy-shop", "--probe", "nope"])
    assert bad.exit_code != 0 and "unknown probe(s) nope" in str(bad.exception)
    base = runner.invoke(
        app, ["baselines", "workgym/toy-shop", "--out", str(tmp_path / "b"), "--no-progress"]
    )
    assert base.exit_code == 0, base.output
    assert "constant" in base.output and "reported" in base.output


def test_probe_attackers_replay_as_ordinary_runs(tmp_path: Path, **_: Any) -> None:
    runner.invoke(app, ["envs"])  # registering the CLI registers the attackers
    run = wg.eval(
        ToyShop(), "scripted/probe-master-key-solution", split="dev", out=tmp_path, progress=False
    )
    assert run.summary().success_rate == 0.0 and run.summary().n_episodes == 12


def test_admission_records_the_quality_rules_and_older_rules_say_so(tmp_path: Path) -> None:
    """Issue 40: new lint rules change verdicts, so the record keeps the rules it ran under."""
    from workgym.core.environment import QualityCheck
    from workgym.guards.check import reusable

    class Linted(ToyShop):
        quality_rules = "toy-lint/1"

        def quality_check(self) -> QualityCheck:
            return QualityCheck(name="toy lint", passed=True, detail="ok")

    env = Linted()
    out = tmp_path / "check" / "toy"
    report = asyncio.run(check_async(env, out, progress=False, attack=False))
    assert report.rules == "toy-lint/1, baselines/2"
    assert (
        read_admissions(tmp_path / "check")[env.content_hash()].rules == "toy-lint/1, baselines/2"
    )
    same = require_admitted(env, directory=tmp_path / "check")
    assert same.admitted and same.note == ""
    Linted.quality_rules = "toy-lint/2"  # the rules moved on; the content did not
    try:
        newer = Linted()
        assert newer.content_hash() == env.content_hash()
        later = require_admitted(newer, directory=tmp_path / "check")
        assert later.admitted
        assert "admitted under toy-lint/1" in later.note and "toy-lint/2" in later.note
        assert reusable(newer, out, tmp_path / "check") is None  # the check runs again
    finally:
        Linted.quality_rules = "toy-lint/1"
