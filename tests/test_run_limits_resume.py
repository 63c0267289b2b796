"""A run folder written before run limits existed (no `run_limits` in run.json) resumes when the
limits are turned off, and the refusal under eval's default limits says how."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from workgym.apps.cli.main import app

EVAL = ["eval", "workgym/toy-shop", "--model", "scripted/oracle", "--no-progress"]


def test_a_run_from_before_run_limits_resumes_with_them_off(tmp_path: Path) -> None:
    out = tmp_path / "run"
    runner = CliRunner()
    first = runner.invoke(app, [*EVAL, "--limit", "2", "--max-repeats", "0", "--episode-seconds",
                                "0", "--out", str(out)])  # fmt: skip
    assert first.exit_code == 0, first.output
    spec = json.loads((out / "run.json").read_text())
    assert spec["run_limits"] is None  # all off is recorded as no limits
    spec.pop("run_limits")  # as written before run limits existed
    spec.pop("sample", None)
    (out / "run.json").write_text(json.dumps(spec))
    refused = runner.invoke(app, [*EVAL, "--limit", "2", "--out", str(out)])
    assert refused.exit_code != 0  # a ConfigError: `workgym` prints it as one line, exit 2
    said = " ".join(f"{refused.output} {refused.exception}".split())
    assert "resume it with --max-repeats 0 --episode-seconds 0" in said
    resumed = runner.invoke(app, [*EVAL, "--limit", "2", "--max-repeats", "0",
                                  "--episode-seconds", "0", "--out", str(out)])  # fmt: skip
    assert resumed.exit_code == 0, resumed.output
    lines = (out / "episodes.jsonl").read_text().splitlines()
    assert len(lines) == 2  # nothing played twice
