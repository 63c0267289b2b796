from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from workgym.apps.cli.main import app
from workgym.envs.toy_rules.env import GOOD_RULE

runner = CliRunner()
TOY = [
    "workgym/toy-rules",
    "--model",
    "scripted/toy-rules-agent",
    "--reflector-model",
    "scripted/toy-rules-reflector",
    "--no-progress",
]


def test_train_playbook_then_eval_with_the_learned_file(tmp_path: Path) -> None:
    out = tmp_path / "pb"
    result = runner.invoke(app, ["train", "playbook", *TOY, "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "stopped (rejections) after 4 iterations: 1 deltas accepted" in result.output
    assert "matches untrained scripted/toy-rules-agent" in result.output
    assert f"playbook: {out / 'playbook.md'}" in result.output
    assert re.search(
        r"next: \S*workgym eval workgym/toy-rules --model scripted/toy-rules-agent", result.output
    )
    assert GOOD_RULE in (out / "playbook.md").read_text()

    again = runner.invoke(app, ["train", "playbook", *TOY, "--out", str(out)])  # resumes: done
    assert again.exit_code == 0 and (out / "playbook.md").read_text().count(GOOD_RULE) == 1

    ev = runner.invoke(
        app,
        [
            "eval",
            "workgym/toy-rules",
            "--model",
            "scripted/toy-rules-agent",
            "--playbook",
            str(out / "playbook.md"),
            "--split",
            "dev",
            "--out",
            str(tmp_path / "ev"),
            "--no-progress",
        ],
    )
    assert ev.exit_code == 0, ev.output
    first = json.loads((tmp_path / "ev" / "episodes.jsonl").read_text().splitlines()[0])
    assert GOOD_RULE in first["messages"][0]["content"]


def test_the_token_budget_stops_training(tmp_path: Path) -> None:
    out = tmp_path / "pb"
    result = runner.invoke(
        app,
        ["train", "playbook", *TOY, "--out", str(out), "--budget-tokens", "12000",
         "--reflector-max-tokens", "700"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    # a small reflector's replies are bounded (SmolLM2-135M repeated one heading for 400 tokens)
    assert json.loads((out / "train.json").read_text())["config"]["reflector_max_tokens"] == 700
    report = json.loads((out / "report.json").read_text())
    assert report["stop_reason"] == "budget" and report["ledger"]["budget"] == 12000
    # every new rollout run is checked against the budget before it starts
    assert 0 < report["ledger"]["training_tokens"] <= 12000
    assert report["efficiency"] is None  # the best checkpoint is the untrained agent itself
    assert "nothing to compare" in (out / "report.md").read_text()


def test_bad_input_gets_one_line_errors(tmp_path: Path) -> None:
    def wg(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "workgym", *args], capture_output=True, text=True
        )

    bad = wg(
        "train",
        "playbook",
        "acme/nope",
        "--model",
        "scripted/null",
        "--out",
        str(tmp_path / "x"),
        "--no-progress",
    )
    assert bad.returncode == 2 and "unknown environment 'acme/nope'" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1
    out = tmp_path / "pb"
    runner.invoke(app, ["train", "playbook", *TOY, "--out", str(out), "--max-iterations", "1"])
    other = wg("train", "playbook", *TOY, "--out", str(out), "--max-iterations", "2")
    assert other.returncode == 2 and "holds a different training run" in other.stderr
    assert "differs in: config" in other.stderr and len(other.stderr.strip().splitlines()) == 1
    refl = wg(
        "train",
        "playbook",
        *TOY[:3],
        "--reflector-model",
        "scripted/oracle",
        "--out",
        str(tmp_path / "y"),
        "--no-progress",
    )
    assert refl.returncode == 2 and "cannot be a reflector" in refl.stderr


def test_the_learner_is_a_literal_and_a_wrong_one_names_the_choices(tmp_path: Path) -> None:
    """`--learner` takes exactly the config's `Learner` names; a typo fails before any work, in
    one line that lists them."""
    import typing

    from workgym.apps.cli.train_playbook import playbook
    from workgym.train.playbook.config import LEARNERS, Learner

    hints = typing.get_type_hints(playbook, include_extras=True)
    assert typing.get_args(hints["learner"])[0] is Learner
    assert LEARNERS == ("reflect", "bootstrap")
    out = tmp_path / "never"
    bad = runner.invoke(app, ["train", "playbook", *TOY, "--out", str(out), "--learner", "nope"])
    assert bad.exit_code == 2 and not out.exists()
    (line,) = [x for x in bad.output.splitlines() if x.startswith("Error:")]
    assert "'--learner'" in line and "'nope' is not one of 'reflect', 'bootstrap'" in line
