"""Plumbing of bench/bootstrap_pilot.py with the toy-examples double (not a learning result:
the double's improvement is written into it)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fakes.toy_rules_agent import load_bench
from workgym.envs.toy_examples.env import ToyExamples

ENV = ToyExamples()
TRAIN = [t for t in ENV.taskset if ENV.taskset.split_of(t) == "train"]


def examples(out: Path) -> list[str]:
    return [line for line in (out / "playbook.md").read_text().splitlines() if "Calls:" in line]


def test_pilot_states_its_budget_and_prints_dev_counts_with_exact_intervals(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bench = load_bench("bootstrap_pilot.py")
    out = tmp_path / "pilot"
    argv = ["--model", "scripted/toy-examples-agent", "--env", "workgym/toy-examples",
            "--out", str(out), "--train-tasks", "6", "--samples", "2", "--max-candidates", "3",
            "--max-examples", "3", "--train-check"]  # fmt: skip
    assert bench.main(argv) == 0
    printed = capsys.readouterr().out
    # 6 x 2 train episodes + 12 dev tasks x (1 + 3 x 3) sets
    assert "at most 132 episodes" in printed
    summary = json.loads((out / "pilot.json").read_text())
    # the double fails every dev task at temperature 0 without an example of its kind
    assert summary["base"] == [0] * 12
    assert sum(summary["learned"]) > 0
    assert summary["gain"] == pytest.approx(sum(summary["learned"]) / 12)
    assert "[0.00, 0.26]" in printed  # Clopper-Pearson 95% of 0/12
    assert "--plan --baseline-rate 0.01" in summary["plan"]
    # the train check: the learned example's kind is solved on every train task of that kind
    # (the double copies an example of its task's kind), nothing without it
    kinds = {
        t.meta["kind"] for t in TRAIN if any(f"'{t.meta['word']}'" in e for e in examples(out))
    }
    solved = sum(1 for t in TRAIN if t.meta["kind"] in kinds)
    assert f"every train task: learned {solved}/24" in printed
    assert "empty 0/24" in printed
    ok = summary["train_check"]["ok"]
    assert sum(ok["learned"].values()) == solved and not any(ok["empty"].values())
    # a second run reads the episodes back and runs none
    assert bench.main(argv) == 0
    assert json.loads((out / "pilot.json").read_text())["episodes_run"] == 0


@pytest.mark.parametrize("bad", ["1", "all", "-4"])
def test_a_bad_number_of_dev_tasks_is_one_line_and_exit_2(
    bad: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bench = load_bench("bootstrap_pilot.py")
    with pytest.raises(SystemExit) as stop:
        bench.main(["--model", "scripted/toy-examples-agent", "--out", str(tmp_path),
                    "--dev-tasks", bad])  # fmt: skip
    assert stop.value.code == 2
    assert f"{bad!r} is not a number of dev tasks: give 2 or more" in capsys.readouterr().err
