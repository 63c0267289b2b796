"""`workgym certify --plan` and the design refusal before the look (issue 33, decision 0071)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from certify_scripted import JOB, STRONG, SUITE_A, WEAK, own_admission
from typer.testing import CliRunner

import workgym as wg
from workgym.apps.cli.main import app
from workgym.certify.looks import read_looks
from workgym.stats import power as sim

runner = CliRunner()


@wg.register
class NoTestFamilies(wg.Environment):
    """Every family in train: nothing is held out."""

    id = "test-certify/no-test"

    def tasks(self) -> wg.TaskSet:
        items = [wg.Task(id=f"t{i}", family=f"f{i % 3}", prompt="1?", answer=1) for i in range(9)]
        return wg.TaskSet(items, wg.SplitSpec(salt="x", train=1.0, dev=0.0, test=0.0))

    def verify(self, task: wg.Task, episode: Any) -> wg.Verdict:
        return wg.Verdict.wrong()


def _mde(output: str) -> float:
    found = re.search(r"smallest detectable gain: ([0-9.]+)", output)
    assert found, output
    return float(found.group(1))


def _sizes(env_ref: str) -> tuple[int, ...]:
    counts: dict[str, int] = {}
    for task in wg.load(env_ref).taskset.split("test"):
        counts[task.family] = counts.get(task.family, 0) + 1
    return tuple(counts.values())


def _check_against_simulation(sizes: tuple[int, ...], rate: float, mde: float) -> None:
    estimand, _ = sim.default_estimand(len(sizes), 0.05)
    design = sim.Design(sizes, 1, (rate,), estimand)
    # an independent simulation (other seed, more certificates) crosses 80% power within 0.02
    assert sim.power(design, mde - 0.02, 1000, seed=11) < 0.8
    assert sim.power(design, mde + 0.02, 1000, seed=11) > 0.8


def test_plan_on_lookup_matches_the_simulation() -> None:
    result = runner.invoke(
        app, ["certify", "workgym/lookup", "--plan", "--baseline-rate", "0.1", "--suites", "none"]
    )
    assert result.exit_code == 0, result.output
    assert "estimand: items" in result.output and "0.062 > alpha" in result.output
    assert "400 simulated certificates" in result.output
    _check_against_simulation(_sizes("workgym/lookup"), 0.1, _mde(result.output))


def test_plan_prints_the_epochs_a_target_needs_with_these_items() -> None:
    """`--target` with the items fixed: the plan searches K and prints it; the number is the
    smallest K at which the certificate's own simulated gate reaches the power."""
    from dataclasses import replace

    args = ["workgym/lookup", "--plan", "--baseline-rate", "0.3", "--target", "0.3"]
    result = runner.invoke(app, ["certify", *args, "--suites", "none"])
    assert result.exit_code == 0, result.output
    found = re.search(r"for a gain of 0.3 with these (\d+) items: (\d+) epochs", result.output)
    assert found, result.output
    n, k = int(found.group(1)), int(found.group(2))
    sizes = _sizes("workgym/lookup")
    assert n == sum(sizes)
    estimand, _ = sim.default_estimand(len(sizes), 0.05)
    design = sim.Design(sizes, 1, (0.3,), estimand)
    assert sim.power(replace(design, epochs=k), 0.3, 400, 0) >= 0.8
    if k > 1:
        assert sim.power(replace(design, epochs=k - 1), 0.3, 400, 0) < 0.8


def test_plan_on_a_generated_warehouse_matches_the_simulation(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    pytest.importorskip("duckdb")
    from workgym.envs.warehouse.generate.pipeline import GenerateOptions, generate
    from workgym.envs.warehouse.source.snapshot import build_snapshot

    snap = tmp_path_factory.mktemp("nyc")
    build_snapshot("builtin:nycflights13", snap)
    out = tmp_path_factory.mktemp("env")
    generate(
        GenerateOptions(
            db=f"duckdb://{snap / 'snapshot.duckdb'}", out=out, tasks=45, investigations=False
        ),
        progress=False,
    )
    result = runner.invoke(
        app, ["certify", str(out), "--plan", "--baseline-rate", "0.3", "--suites", "none"]
    )
    assert result.exit_code == 0, result.output
    _check_against_simulation(_sizes(str(out)), 0.3, _mde(result.output))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["test-certify/no-test", "--baseline-rate", "0.3"], "0 items in its test split"),
        (["workgym/lookup", "--estimand", "families", "--baseline-rate", "0.3"], "at least 5"),
        (["workgym/lookup"], "--plan needs the baseline's success rate"),
        (["workgym/lookup", "--baseline-rate", "1.5"], "give a rate in [0, 1)"),
        (["workgym/lookup", "--baseline-rate", "0.1", "--target", "2"], "give a gain in (0, 0.9]"),
        (["workgym/lookup", "--baseline-rate", "0.1", "--target", "0"], "give a gain in (0, 0.9]"),
    ],
)
def test_plan_wrong_input_is_one_line_exit_2(args: list[str], message: str) -> None:
    result = runner.invoke(app, ["certify", "--plan", "--suites", "none", *args])
    assert result.exit_code == 2, result.output
    assert message in result.output and "Traceback" not in result.output


def test_a_design_that_cannot_pass_is_refused_before_the_look(tmp_path: Path) -> None:
    """Suites of 32 items cannot show non-inferiority at 0.05 even when every pair ties."""
    admission = own_admission(JOB, tmp_path)
    log = admission / "looks.jsonl"  # a registered environment's log lives beside admission.json
    base = [
        "certify",
        JOB,
        "--baseline-model",
        WEAK,
        "--candidate-model",
        STRONG,
        "--suites",
        SUITE_A,
        "--suite-limit",
        "32",
        "--admission-dir",
        str(admission),
        "--out",
        str(tmp_path / "cert"),
        "--no-progress",
    ]
    refused = runner.invoke(app, base)
    assert refused.exit_code == 2, refused.output
    assert "cannot show non-regression" in refused.output and "59 items" in refused.output
    assert not log.exists() or read_looks(log) == []  # the refusal cost no look
    families = runner.invoke(app, [*base[:-1], "--estimand", "families", "--force-design"])
    assert families.exit_code in (0, 1), families.output  # forced: it runs, and is a look
    assert [e.kind for e in read_looks(log)].count("certify") == 1
