"""Known answers for bench/sft_rl_sweep.py's report (decision 0194), on written eval folders: no
model runs. Identical arms give a zero-variance difference, which must read "cannot be
decided", never "does not hold"; an SFT arm that loses items GRPO keeps reads "holds"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fakes.toy_rules_agent import load_bench

ITEMS = 40


def _folder(root: Path, name: str, dev: list[int], ifeval: list[int], kl: float) -> None:
    for split, wins in (("dev", dev), ("ifeval", ifeval)):
        folder = root / name / split
        folder.mkdir(parents=True)
        lines = [
            json.dumps({"task_id": f"{split}-{i}", "verdict": {"success": bool(w)}, "turns": 1,
                        "usage": {"completion_tokens": 10}})
            for i, w in enumerate(wins)
        ]  # fmt: skip
        (folder / "episodes.jsonl").write_text("\n".join(lines) + "\n")
    (root / name / "kl.json").write_text(json.dumps({"kl": kl, "se": 0.0, "n": 1}))


def _report(tmp_path: Path, sft_ifeval: list[int]) -> dict:  # type: ignore[type-arg]
    bench = load_bench("sft_rl_sweep.py")
    evals = tmp_path / "evals"
    base = [1] * 20 + [0] * 20
    _folder(evals, "base", [0] * 40, base, 0.0)
    _folder(evals, "grpo-s0-6", [1] * 8 + [0] * 32, base, 0.1)
    _folder(evals, "sft-s0-1", [1] * 2 + [0] * 38, base, 0.2)
    _folder(evals, "sft-s0-2", [1] * 9 + [0] * 31, sft_ifeval, 0.5)  # nearest to GRPO's 8/40
    _folder(evals, "sft-s0-8", [1] * 30 + [0] * 10, base, 2.0)
    _folder(evals, "control-s0-8", [0] * 40, base, 1.0)
    argv = ["report", str(evals), "--out", str(tmp_path / "out")]
    bench.main(argv)
    return json.loads((tmp_path / "out" / "sweep.json").read_text())  # type: ignore[no-any-return]


def test_identical_arms_cannot_decide_and_a_forgetting_sft_arm_holds(tmp_path: Path) -> None:
    same = _report(tmp_path / "same", [1] * 20 + [0] * 20)
    (pair,) = same["pairs"]
    assert (pair["grpo"], pair["sft"]) == ("grpo-s0-6", "sft-s0-2")
    assert pair["dev_gap"] == pytest.approx(-1 / ITEMS)
    assert same["primary"]["sd"] == 0 and same["verdict"].startswith("cannot be decided")
    lost = [0] * 12 + [1] * 8 + [0] * 20  # SFT loses 12 of the base's 20 ifeval items
    forgot = _report(tmp_path / "forgot", lost)
    assert forgot["primary"]["mean"] == 12 / ITEMS and forgot["primary"]["lower"] > 0
    assert forgot["verdict"].startswith("holds")
    row = next(c for c in forgot["checkpoints"] if c["name"] == "sft-s0-2")
    assert (row["lost"], row["gained"], row["forgetting"]) == (12, 0, 12 / ITEMS)
    assert (tmp_path / "forgot" / "out" / "sweep.png").stat().st_size > 0


def test_bad_inputs_are_refused_in_one_line_before_anything_runs(tmp_path: Path) -> None:
    bench = load_bench("sft_rl_sweep.py")
    for argv in (
        ["eval", "llamacpp/qwen2.5-coder-0.5b", "--out", str(tmp_path / "e")],
        ["report", str(tmp_path / "missing"), "--out", str(tmp_path / "r")],
    ):
        with pytest.raises(SystemExit) as exit_:
            bench.main(argv)
        assert exit_.value.code == 2
    assert not (tmp_path / "e").exists() and not (tmp_path / "r").exists()


def test_the_full_scale_is_one_flag_and_the_reduced_run_stays_the_default(tmp_path: Path) -> None:
    bench = load_bench("sft_rl_sweep.py")
    reduced = bench.parse(["eval", "hf/base", "--out", str(tmp_path)]).size
    full = bench.parse(["--scale", "full", "eval", "hf/base", "--out", str(tmp_path)]).size
    assert (reduced.base, reduced.ifeval_items, reduced.max_tokens) == ("hf/smollm2-135m", 96, 128)
    assert (full.base, full.ifeval_items, full.max_tokens) == ("hf/qwen2.5-coder-0.5b", 156, 512)
