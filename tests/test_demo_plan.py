"""`make demo` says up front what its design can certify, and ends with exit 0 whatever the
verdict (issue 35, decision 0133). The real model and GRPO are replaced by test doubles here:
the scripted oracle plays both arms and training returns the model it was given."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from workgym.apps import demo
from workgym.certify import plan as plan_mod
from workgym.core.loading import load
from workgym.envs.lookup.env import Lookup


def saved_lookup(tmp_path: Path) -> Path:
    env_dir = tmp_path / "env"
    Lookup().save(env_dir)
    return env_dir


def test_the_default_design_is_said_too_small_before_training(tmp_path: Path) -> None:
    env_dir = saved_lookup(tmp_path)
    design = demo.demo_plan(env_dir, demo.TEST_TASKS)
    assert design.n_items == demo.TEST_TASKS and design.mean_rate == 0.0
    assert design.detectable_gain is not None and design.detectable_gain > demo.TARGET_GAIN
    assert design.needed is not None and design.needed > demo.TEST_TASKS
    assert demo.too_small(design)
    text = "\n".join(demo.plan_lines(design, 32, demo.STEPS))
    assert f"is {design.detectable_gain:.2f}" in text  # the plan's own number, printed
    assert "too small to certify a gain" in text and "expect the verdict FAIL" in text
    assert f"at least {design.needed} test tasks" in text
    assert f"WORKGYM_DEMO_LIMIT={design.needed}" in text
    assert "refuse" not in text  # 8 items can reach alpha: the certificate runs as designed


def test_a_large_enough_design_is_not_called_too_small(tmp_path: Path) -> None:
    design = demo.demo_plan(saved_lookup(tmp_path), 32)
    mde = design.detectable_gain
    assert mde is not None
    assert demo.too_small(design) is (mde > demo.TARGET_GAIN)
    text = "\n".join(demo.plan_lines(design, 32, demo.STEPS))
    assert f"is {mde:.2f}" in text
    assert ("too small to certify" in text) is (mde > demo.TARGET_GAIN)


def test_the_plan_command_prints_the_same_design(tmp_path: Path) -> None:
    command = demo.plan_command(tmp_path / "env", 8)
    assert "--plan --limit 8 --suites none --baseline-rate 0" in command
    assert f"--target {demo.TARGET_GAIN:g}" in command


def untrained(env: object, model: str, out: Path, steps: int) -> str:
    """GRPO's test double: writes a flat learning curve and returns the model unchanged."""
    out.mkdir(parents=True, exist_ok=True)
    lines = [f'{{"step": {i}, "episodes": 4, "mean_reward": 1.0}}' for i in range(1, steps + 1)]
    (out / "reward_curve.jsonl").write_text("\n".join(lines) + "\n")
    return model


def test_a_refused_design_runs_to_the_end_with_exit_0(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """WORKGYM_DEMO_LIMIT=4: the gain gate cannot reach alpha 0.05 on 4 items (smallest p
    0.0625); `certify` refuses such a design, the demo says so up front and still ends."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.setenv("WORKGYM_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("WORKGYM_DEMO_MODEL", "scripted/oracle")
    monkeypatch.setenv("WORKGYM_DEMO_LIMIT", "4")
    monkeypatch.setattr(demo, "train", untrained)
    root = tmp_path / "runs" / "demo"
    assert plan_mod.refusal(demo.demo_plan(saved_lookup(tmp_path), 4)) is not None
    assert asyncio.run(demo.demo(root)) == 0
    out = " ".join(capsys.readouterr().out.split())
    plan_at = out.index("the certificate would refuse this design")
    assert plan_at < out.index("workgym eval")  # said before any test task is played
    assert "no gain at all could be detected" in out
    assert "verdict FAIL" in out
    assert "failed non_regression: no regression suites were run" in out
    assert "what FAIL means here: the trained model scored 1.000 against 1.000" in out
    assert "As the plan said before training, 4 tasks can detect no gain" in out
    env = load(root / "env")
    assert (root / env.content_hash()[:12] / "certificate" / "certificate.json").is_file()


def test_the_readme_gives_the_plans_own_numbers(tmp_path: Path) -> None:
    """README's demo paragraph quotes the plan the demo prints; a change to the design or the
    planner that moves them must move the README too."""
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    start = readme.index("`make demo` runs")
    paragraph = " ".join(readme[start : readme.index("\n\n", start)].split())
    design = demo.demo_plan(saved_lookup(tmp_path), demo.TEST_TASKS)
    assert design.detectable_gain is not None and design.needed is not None
    for said in (
        "`workgym certify --plan`",
        f"none of the {demo.TEST_TASKS} tasks",
        f"power {design.power:g} is {design.detectable_gain:.2f}",
        f"about {round(design.detectable_gain * demo.TEST_TASKS)} of the {demo.TEST_TASKS}",
        f"for a gain of {demo.TARGET_GAIN:g} needs at least {design.needed} test tasks",
        "no regression suites",
        "exits 0 whatever the verdict",
    ):
        assert said in paragraph, said
