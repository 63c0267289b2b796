"""Plumbing of bench/sft_patch.py on a tiny random-weight model (its numbers are not results):
every stage runs, the report has both arms' certificates, and a re-run reads each finished stage
back instead of training or looking at the test split again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("trl")

from trainkit import tiny_dir

from fakes.toy_rules_agent import load_bench


def test_the_small_configuration_runs_every_stage_and_resumes(tmp_path: Path) -> None:
    bench = load_bench("sft_patch.py")
    argv = [
        "--env", "workgym/toy-shop", "--model", f"hf/{tiny_dir()}",
        "--steps", "1", "--batch-size", "2", "--num-generations", "2",
        "--train-limit", "4", "--limit", "3", "--suite", "suites/ifeval", "--suite-limit", "2",
        "--max-tokens", "8", "--concurrency", "4", "--force-admission", "--force-design",
        "--admission-dir", str(tmp_path / "admission"), "--out", str(tmp_path),
    ]  # fmt: skip
    report = bench.main(argv)
    # a random-weight model solves nothing, so every kind it played is patched
    assert report["kinds"] == sorted(report["train_success_by_kind"])
    assert all(rate < 0.5 for rate in report["train_success_by_kind"].values())
    assert len(report["sft"]["losses"]) == 1 and report["grpo"]["steps"] == 1
    for name in ("sft", "grpo"):
        arm = report["arms"][name]
        cert = json.loads(Path(arm["certificate"]).read_text())
        assert arm["verdict"] == cert["verdict"]
        assert arm["patched"]["n"] + arm["other"]["n"] == 3
        assert set(arm["suites"]) == {"suites/ifeval"}
    assert (tmp_path / "sft_patch.png").stat().st_size > 0
    written = {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*.json")}
    again = bench.main(argv)
    assert again == json.loads((tmp_path / "sft_patch.json").read_text())
    assert again["arms"] == report["arms"]
    changed = [p for p, t in written.items() if p.stat().st_mtime_ns != t]
    assert changed == [tmp_path / "sft_patch.json"]


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--model", "openai/x"], "--model must be a local model, hf/<dir>"),
        (["--model", "hf/x", "--batch-size", "3"], "multiple of --num-generations"),
    ],
)
def test_inputs_the_trainers_cannot_take_are_refused_before_anything_runs(
    argv: list[str], said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        load_bench("sft_patch.py").main([*argv, "--out", str(tmp_path / "out")])
    assert exit_.value.code == 2 and said in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
