"""`workgym certify` from the command line: the three forms, exit codes, one-line errors."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from certify_scripted import JOB, STRONG, SUITE_A, SUITE_B, WEAK, own_admission
from typer.testing import CliRunner

from workgym.apps.cli.main import app

runner = CliRunner()


@pytest.fixture
def admitted(tmp_path: Path) -> Path:
    return own_admission(JOB, tmp_path)


def _args(tmp: Path, admitted: Path, *extra: str) -> list[str]:
    return [
        "certify",
        *extra,
        "--suites",
        f"{SUITE_A},{SUITE_B}",
        "--admission-dir",
        str(admitted),
        "--looks-log",
        str(tmp / "looks.jsonl"),
        "--no-progress",
    ]


def test_env_form_passes_then_recomputes(tmp_path: Path, admitted: Path) -> None:
    out = tmp_path / "cert"
    result = runner.invoke(
        app,
        [
            *_args(tmp_path, admitted, JOB),
            "--baseline-model",
            WEAK,
            "--candidate-model",
            STRONG,
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "PASS" in result.output
    assert re.search(r"next: \S*workgym certify --recompute", result.output)
    assert (out / "certificate.html").exists()
    again = runner.invoke(app, ["certify", "--recompute", str(out / "certificate.json")])
    assert again.exit_code == 0 and "identical" in again.output


def test_from_runs_form_exits_1_on_fail(tmp_path: Path, admitted: Path) -> None:
    out = tmp_path / "cert"
    first = runner.invoke(
        app,
        [
            *_args(tmp_path, admitted, JOB),
            "--baseline-model",
            WEAK,
            "--candidate-model",
            WEAK,
            "--out",
            str(out),
        ],
    )
    assert first.exit_code == 1 and "no significant gain" in first.output
    runs = out / "runs"
    second = runner.invoke(
        app,
        [
            *_args(tmp_path, admitted, "--from-runs"),
            str(runs / "task/baseline"),
            str(runs / "task/candidate"),
            str(runs / "test-certify_suite-a/baseline"),
            str(runs / "test-certify_suite-a/candidate"),
            "--out",
            str(tmp_path / "from-runs"),
        ],
    )
    assert second.exit_code == 1 and "FAIL" in second.output
    cert = json.loads((tmp_path / "from-runs" / "certificate.json").read_text())
    assert cert["failed"] == ["gain"] and cert["frozen"]["looks"]["attempt"] == 2


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["certify", JOB, "--baseline-model", WEAK], "give one ENV with --baseline-model"),
        (["certify", "--from-runs", "nowhere"], "--from-runs takes pairs"),
        (["certify", "--recompute", "missing.json"], "no certificate at missing.json"),
        (
            ["certify", JOB, "--baseline", WEAK, "--candidate", STRONG, "--suite-margin", "x"],
            "write SUITE=MARGIN",
        ),
    ],
)
def test_bad_input_is_one_line_that_says_what_to_do(argv: list[str], message: str) -> None:
    result = runner.invoke(app, argv)
    assert result.exit_code == 2
    assert message in result.output and "Traceback" not in result.output
