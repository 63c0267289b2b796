"""`workgym train grpo`: train split only, curve logged, checkpoint and run directory written."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("trl")
pytest.importorskip("peft")

from trainkit import OpeningChar, tiny_dir  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from workgym.apps.cli.main import app  # noqa: E402
from workgym.core.errors import ConfigError  # noqa: E402
from workgym.run.rundir import RunDir, read_spec  # noqa: E402
from workgym.run.runner import Run  # noqa: E402


def grpo(*args: str) -> tuple[int, str]:
    """Exit code and output; a ConfigError (which `workgym` prints as one line and exits 2
    with) comes back as code 2 and its message."""
    # --trust: OpeningChar is a test class, not an installed, registered environment.
    result = CliRunner().invoke(app, ["--trust", "train", "grpo", *args])
    if isinstance(result.exception, ConfigError):
        return 2, str(result.exception)
    return result.exit_code, result.output + (repr(result.exception) if result.exception else "")


def test_train_grpo_with_lora_writes_a_run_a_curve_and_a_checkpoint(tmp_path: Path) -> None:
    from transformers import AutoModelForCausalLM

    env_dir = OpeningChar().save(tmp_path / "env")
    out = tmp_path / "run"
    code, output = grpo(
        str(env_dir), "--model", f"hf/{tiny_dir()}", "--out", str(out), "--lora",
        "--steps", "2", "--num-generations", "4", "--prompts-per-step", "2",
        "--max-new-tokens", "3", "--learning-rate", "0.05",
    )  # fmt: skip
    assert code == 0, output
    assert "step    1  reward" in output
    assert re.search(r"next: \S*workgym certify \S+ --baseline-model", output), output

    curve = [json.loads(line) for line in (out / "reward_curve.jsonl").read_text().splitlines()]
    assert [p["step"] for p in curve] == [0, 1] and all(p["episodes"] == 8 for p in curve)
    assert (out / "reward_curve.png").stat().st_size > 0
    assert (out / "trainer_log.jsonl").read_text().count('"reward"') == 2

    spec = read_spec(out)
    assert spec.split == "train" and spec.env_id == OpeningChar.id
    episodes = list(Run(RunDir(out, spec)).episodes())
    train_ids = {t.id for t in OpeningChar().taskset.split("train")}
    assert len(episodes) == 16 and {e.task_id for e in episodes} <= train_ids
    assert all(e.split == "train" and e.trainer for e in episodes)
    assert len({(e.task_id, e.epoch) for e in episodes}) == 16  # resumable keys stay unique

    record = json.loads((out / "train.json").read_text())
    assert record["baseline"] == f"hf/{tiny_dir()}"
    assert record["candidate"] == f"hf/{out / 'checkpoint'}" and record["steps"] == 2
    assert (out / "adapter" / "adapter_config.json").exists()
    trained = AutoModelForCausalLM.from_pretrained(out / "checkpoint")
    start = AutoModelForCausalLM.from_pretrained(tiny_dir())
    moved = [
        name
        for (name, a), (_, b) in zip(
            trained.named_parameters(), start.named_parameters(), strict=True
        )
        if not torch.equal(a, b)
    ]
    assert moved  # the merged LoRA update changed the saved weights
    assert all("layers" in name for name in moved)  # LoRA touched the linear layers only

    code, output = grpo(str(env_dir), "--model", f"hf/{tiny_dir()}", "--out", str(out))
    assert code == 2 and "training does not resume" in output


def test_bad_input_gets_one_line_errors(tmp_path: Path) -> None:
    env_dir = OpeningChar().save(tmp_path / "env")
    code, output = grpo(str(env_dir), "--model", "openai/gpt-4o", "--out", str(tmp_path / "o"))
    assert code == 2 and "--model hf/<dir>" in output
    code, output = grpo(
        str(env_dir), "--model", f"hf/{tiny_dir()}", "--out", str(tmp_path / "o2"),
        "--adapter", "magic",
    )  # fmt: skip
    assert code == 2 and "use rollout or tools" in output


def test_save_every_leaves_loadable_checkpoints_along_one_run(tmp_path: Path) -> None:
    from transformers import AutoModelForCausalLM

    env_dir = OpeningChar().save(tmp_path / "env")
    out = tmp_path / "run"
    code, output = grpo(
        str(env_dir), "--model", f"hf/{tiny_dir()}", "--out", str(out), "--lora",
        "--steps", "3", "--save-every", "1", "--num-generations", "2", "--prompts-per-step", "1",
        "--max-new-tokens", "3", "--learning-rate", "0.05",
    )  # fmt: skip
    assert code == 0, output
    along = [out / "steps" / "step-0001", out / "steps" / "step-0002"]
    # step 3 is the final checkpoint/, not written twice
    assert sorted((out / "steps").iterdir()) == along
    record = json.loads((out / "train.json").read_text())
    assert [(a["model"], a["step"]) for a in record["along"]] == [
        (f"hf/{path}", step) for step, path in enumerate(along, 1)
    ]
    trained = [a["episodes_trained"] for a in record["along"]]
    assert trained == sorted(trained) and trained[-1] <= record["episodes_trained"]
    for path in [*along, out / "checkpoint"]:
        model = AutoModelForCausalLM.from_pretrained(path)  # plain weights: LoRA merged in
        assert not any("lora" in name for name, _ in model.named_parameters())
    # a mid-run save merged a copy: the adapters kept training and were saved at the end
    assert (out / "adapter" / "adapter_config.json").exists()
    hint = next(line for line in output.splitlines() if line.startswith("along training:"))
    assert hint.count("--checkpoints hf/") == 3 and hint.endswith(f"hf/{out / 'checkpoint'}")

    code, output = grpo(
        str(env_dir), "--model", f"hf/{tiny_dir()}", "--out", str(tmp_path / "o"),
        "--save-every", "-1",
    )  # fmt: skip
    assert code != 0 and "save-every" in output
