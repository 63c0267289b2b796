"""Plumbing of bench/bootstrap_pilot.py with the toy-examples double (not a learning result:
the double's improvement is written into it)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fakes.toy_rules_agent import load_bench


def test_pilot_states_its_budget_and_prints_dev_counts_with_exact_intervals(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bench = load_bench("bootstrap_pilot.py")
    out = tmp_path / "pilot"
    argv = ["--model", "scripted/toy-examples-agent", "--env", "workgym/toy-examples",
            "--out", str(out), "--train-tasks", "6", "--samples", "2", "--max-candidates", "3",
            "--max-examples", "3"]  # fmt: skip
    assert bench.main(argv) == 0
    printed = capsys.readouterr().out
    # 6 x 2 train episodes + 10 dev tasks x (1 + 3 x 3) sets
    assert "at most 112 episodes" in printed
    summary = json.loads((out / "pilot.json").read_text())
    # the double fails every dev task at temperature 0 without an example of its kind
    assert summary["base"] == [0] * 10
    assert sum(summary["learned"]) > 0
    assert summary["gain"] == pytest.approx(sum(summary["learned"]) / 10)
    assert "[0.00, 0.31]" in printed  # Clopper-Pearson 95% of 0/10
    assert "--plan --baseline-rate 0.01" in summary["plan"]
    # a second run reads the episodes back and runs none
    assert bench.main(argv) == 0
    assert json.loads((out / "pilot.json").read_text())["episodes_run"] == 0
