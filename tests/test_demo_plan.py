"""`make demo` learns a playbook, plans its certificate from dev before the look, and certifies
(issue 35, decisions 0133, 0155). The real model is replaced by the scripted double of
`workgym/toy-examples` here: it solves a task only after seeing a worked example of its kind, so
the learner's gain is known in advance. These are known-answer tests of the demo's flow, not a
learning result."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from workgym.apps import demo
from workgym.certify import plan as plan_mod
from workgym.core.loading import load
from workgym.envs.toy_examples.env import ToyExamples


def saved_env(tmp_path: Path) -> Path:
    env_dir = tmp_path / "env"
    ToyExamples().save(env_dir)
    return env_dir


def test_a_dev_gain_the_design_can_detect_is_said_to_be_certifiable(tmp_path: Path) -> None:
    env_dir = saved_env(tmp_path)
    design = demo.plan(demo.plan_request(env_dir, None, 0.0, 0.5))
    assert design.n_items == 24 and design.mean_rate == 0.0
    assert design.suites[0].n_items == demo.SUITE_ITEMS
    assert design.suites[0].tie_lower > -demo.SUITE_MARGIN  # tied arms clear the margin
    mde = design.detectable_gain
    assert mde is not None and mde < 0.5
    assert demo.powered(design, 0.5) and not demo.powered(design, mde - 0.05)
    text = "\n".join(demo.plan_lines(design, 0.5))
    assert f"power 0.8: {mde:.2f}" in text and "should PASS" in text
    small = "\n".join(demo.plan_lines(design, mde - 0.05))
    assert "cannot certify the gain it learned" in small and "expect FAIL" in small


def test_the_plan_command_prints_the_same_design(tmp_path: Path) -> None:
    command = demo.plan_command(tmp_path / "env", None, 0.0, 0.5)
    assert f"--suites {demo.SUITE} --suite-limit {demo.SUITE_ITEMS}" in command
    assert f"--suite-margin {demo.SUITE}={demo.SUITE_MARGIN:g}" in command
    assert "--baseline-rate 0.000 --target 0.500" in command


def test_the_demo_learns_plans_before_the_look_and_certifies_the_doubles_gain(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The double learns two kinds of three from its own verified train successes; the plan,
    printed before the test split is played, says the dev gain is detectable; the certificate
    finds the gain on test. The double answers no BFCL item, so the suite cannot show
    non-regression and the verdict is FAIL: the demo says which condition failed and why."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.setenv("WORKGYM_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("WORKGYM_DEMO_MODEL", "scripted/toy-examples-agent")
    root = tmp_path / "runs" / "demo"
    assert asyncio.run(demo.demo(root)) == 0
    out = " ".join(capsys.readouterr().out.split())
    env = load(root / "env")
    runs = root / env.content_hash()[:12]
    learned = json.loads((runs / "playbook" / "bootstrap.json").read_text())
    assert learned["baseline"]["reward"] == 0.0 and learned["learned"]["reward"] > 0.3
    assert "dev, untrained (empty playbook): 0/12 = 0.00 [0.00, 0.26]" in out
    assert "### worked examples" in out  # the playbook itself is shown
    plan_at = out.index("smallest gain detected with power 0.8")
    assert plan_at < out.index("--baseline-model")  # printed before the look
    assert "should PASS" in out
    cert = json.loads((runs / "certificate" / "certificate.json").read_text())
    assert cert["task"]["gain"]["significant"] and cert["task"]["gain"]["diff"] > 0.5
    assert cert["failed"] == ["non_regression"]  # the double answers no BFCL item
    assert "failed non_regression" in out and "FAIL: the model with its playbook scored" in out
    # a second run plays nothing and spends no new look at the test split
    looks = root / "env" / "looks.jsonl"
    first = [json.loads(line) for line in looks.read_text().splitlines()]
    assert asyncio.run(demo.demo(root)) == 0
    again = " ".join(capsys.readouterr().out.split())
    assert "admission reused" in again
    assert json.loads((runs / "certificate" / "certificate.json").read_text())["verdict"] == "FAIL"
    again_looks = [json.loads(line) for line in looks.read_text().splitlines()]
    assert max(look["attempt"] for look in again_looks) == 1  # the first look, read again
    assert max(look["attempt"] for look in first) == 1


def test_a_design_the_certificate_refuses_is_said_so_and_exits_2_or_runs(
    tmp_path: Path,
) -> None:
    """WORKGYM_DEMO_LIMIT=4: the gain gate cannot reach alpha 0.05 on 4 items (smallest p
    0.0625); the plan says the certificate would refuse it before anything is played."""
    design = demo.plan(demo.plan_request(saved_env(tmp_path), 4, 0.0, 0.5))
    assert plan_mod.refusal(design) is not None
    text = "\n".join(demo.plan_lines(design, 0.5))
    assert "the certificate would refuse this design" in text
    assert not demo.powered(design, 0.5) and "expect FAIL" in text


def test_a_limit_that_is_not_a_number_is_one_clear_line_and_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("WORKGYM_DEMO_LIMIT", "abc")
    assert asyncio.run(demo.demo(tmp_path / "runs" / "demo")) == 2
    out = capsys.readouterr().out
    assert "WORKGYM_DEMO_LIMIT='abc' is not a number of test tasks" in out
    assert "Traceback" not in out and not (tmp_path / "runs").exists()  # checked before writing
