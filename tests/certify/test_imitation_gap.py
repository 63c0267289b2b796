"""The imitation-gap measurement on cases whose answer is known (test doubles, named as such).

None of these numbers is a learning result: the doubles are written so that the teacher-forced
and free-running scores are known in advance, which is what checks the measurement code.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import workgym as wg
from workgym.certify.imitation_gap import REPORT, SCORES, measure
from workgym.core.messages import Message, ToolCall
from workgym.core.tasks import Task, TaskSet
from workgym.stats.regression import ols_slope
from workgym.testing.scripted import ScriptedModel


@wg.tool
def lookup(ctx: wg.Ctx, key: str) -> int:
    """The value stored under a key.

    Args:
        key: The key to read.
    """
    if key not in ctx.state:
        raise wg.ToolError(f"no key {key!r}")
    value: int = ctx.state[key]
    return value


@wg.tool(final=True)
def submit_answer(answer: int) -> str:
    """Submit the value (an integer). This ends the task."""
    return "answer recorded"


class TwoStep(wg.Environment):
    """Every gold trajectory has two steps: look the key up, then submit its value."""

    id = "tests/two-step"
    tools = [lookup, submit_answer]

    def tasks(self) -> TaskSet:
        return TaskSet(
            [
                Task(
                    id=f"t{i}",
                    family=f"fam{i % 40}",
                    prompt=f"What is stored under k{i}?",
                    answer=i,
                )
                for i in range(80)
            ]
        )

    def state(self, task: Task) -> Any:
        return {f"k{task.answer}": task.answer}

    def verify(self, task: Task, episode: wg.Episode) -> wg.Verdict:
        ok = episode.answer == task.answer
        return wg.Verdict.correct() if ok else wg.Verdict.wrong()

    def oracle(self, task: Task) -> list[Message]:
        look = ToolCall(id="o1", name="lookup", arguments=json.dumps({"key": f"k{task.answer}"}))
        done = ToolCall(
            id="o2", name="submit_answer", arguments=json.dumps({"answer": task.answer})
        )
        return [
            Message(role="assistant", tool_calls=[look]),
            Message(role="assistant", tool_calls=[done]),
        ]


def late_starter(messages: list[Message], tools: list[Any]) -> Message:
    """Submits what the last tool reply said, but never looks the right key up by itself: right
    at step 2 given the gold prefix, wrong at step 1 and so wrong when running free."""
    last = messages[-1]
    if last.role == "tool":
        try:
            value = int(last.content or "")
        except ValueError:
            value = -1
        call = ToolCall(id="s", name="submit_answer", arguments=json.dumps({"answer": value}))
    else:
        call = ToolCall(id="l", name="lookup", arguments=json.dumps({"key": "wrong"}))
    return Message(role="assistant", tool_calls=[call])


def run(env: wg.Environment, models: dict[str, Any], out: Path) -> Any:
    return asyncio.run(measure(env, models, split="dev", out=out, progress=False))


def test_a_model_that_copies_the_gold_scores_one_and_has_no_gap(tmp_path: Path) -> None:
    report = run(TwoStep(), {"scripted/oracle": wg.get_model("scripted/oracle")}, tmp_path)
    assert report.cells and report.scripted
    for cell in report.cells:
        assert cell.tf_step_rate == 1.0 and cell.tf_all_steps == 1.0
        assert cell.free_success == 1.0 and cell.gap == 0.0


def test_a_model_that_answers_nothing_scores_zero_both_ways(tmp_path: Path) -> None:
    report = run(TwoStep(), {"scripted/null": wg.get_model("scripted/null")}, tmp_path)
    for cell in report.cells:
        assert cell.tf_step_rate == 0.0 and cell.free_success == 0.0


def test_teacher_forcing_overstates_a_model_that_cannot_start(tmp_path: Path) -> None:
    model = ScriptedModel("scripted/late-starter", fn=late_starter)
    report = run(TwoStep(), {"scripted/late-starter": model}, tmp_path)
    for cell in report.cells:
        assert cell.tf_step_rate == 0.5  # step 2 right given the gold lookup, step 1 wrong
        assert cell.tf_all_steps == 0.0 and cell.free_success == 0.0
        assert cell.gap == 0.5
    lines = [json.loads(x) for x in (tmp_path / SCORES).read_text().splitlines()]
    assert {tuple(s["matched"] for s in line["steps"]) for line in lines} == {(False, True)}


def test_slope_is_fitted_over_models_and_a_rerun_appends_nothing(tmp_path: Path) -> None:
    models = {
        "scripted/oracle": wg.get_model("scripted/oracle"),
        "scripted/late-starter": ScriptedModel("scripted/late-starter", fn=late_starter),
        "scripted/null": wg.get_model("scripted/null"),
    }
    report = run(TwoStep(), models, tmp_path)
    # points: (0, 0) per family for the oracle, (1, .5) the late starter, (1, 0) the null model
    x = [1 - c.free_success for c in report.cells]
    y = [c.gap for c in report.cells]
    expected = ols_slope(x, y)
    assert report.old_slope.slope == pytest.approx(expected.slope) == pytest.approx(0.25)
    families = {c.family for c in report.cells}
    assert len(families) >= 2 and report.old_slope.n_points == 3 * len(families)
    saved = json.loads((tmp_path / REPORT).read_text())
    assert saved["old_slope"]["slope"] == pytest.approx(0.25)
    assert (tmp_path / "imitation.png").stat().st_size > 0
    before = (tmp_path / SCORES).read_text()
    run(TwoStep(), models, tmp_path)
    assert (tmp_path / SCORES).read_text() == before


def test_ols_slope_matches_statsmodels() -> None:
    sm = pytest.importorskip("statsmodels.api")
    rng = np.random.default_rng(0)
    x = rng.random(12)
    y = 0.5 + 2 * x + rng.normal(0, 0.3, 12)
    fit = ols_slope(x, y)
    ref = sm.OLS(y, sm.add_constant(x)).fit()
    assert fit.slope == pytest.approx(ref.params[1]) and fit.se == pytest.approx(ref.bse[1])
    lo, hi = ref.conf_int()[1]
    assert (fit.lower, fit.upper) == (pytest.approx(lo), pytest.approx(hi))
    assert np.isnan(ols_slope([1.0, 1.0, 1.0], [0.0, 1.0, 2.0]).slope)


def test_the_command_refuses_the_test_split(tmp_path: Path) -> None:
    import subprocess
    import sys

    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "workgym",
            "imitation-gap",
            "workgym/toy-shop",
            "--model",
            "scripted/oracle",
            "--split",
            "test",
            "--out",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2 and "train or dev only" in proc.stderr
    assert "Traceback" not in proc.stderr


class SeedParity:
    """A double whose first step is right exactly when the call's seed is even, so the expected
    teacher-forced rate of every task follows from `episode_seed` alone (a double: no learning)."""

    name = "scripted/seed-parity"

    async def complete(self, messages: list[Message], tools: list[Any], sampling: Any) -> Any:
        from workgym.core.model import Completion

        if messages[-1].role == "tool":
            reply = late_starter(messages, tools)
        else:
            key = messages[-1].content.split()[-1].rstrip("?") if messages[-1].content else ""
            good = sampling.seed is not None and sampling.seed % 2 == 0
            args = json.dumps({"key": key if good else "wrong"})
            call = ToolCall(id="l", name="lookup", arguments=args)
            reply = Message(role="assistant", tool_calls=[call])
        return Completion(message=reply)


def sampled(out: Path, *, temperature: float, epochs: int = 4) -> Any:
    from workgym.core.model import Sampling

    return asyncio.run(
        measure(
            TwoStep(),
            {"scripted/seed-parity": SeedParity()},  # type: ignore[dict-item]
            split="dev",
            out=out,
            epochs=epochs,
            limit=6,
            progress=False,
            sampling=Sampling(temperature=temperature),
            seed=3,
        )
    )


def test_sampled_teacher_forcing_draws_one_answer_per_epoch_seeded_as_the_free_episode(
    tmp_path: Path,
) -> None:
    from workgym.run.attempt import episode_seed

    report = sampled(tmp_path, temperature=0.7)
    lines = [json.loads(x) for x in (tmp_path / SCORES).read_text().splitlines()]
    tasks = {line["task_id"] for line in lines}
    assert len(lines) == 4 * len(tasks) == 4 * 6
    assert {(line["task_id"], line["epoch"]) for line in lines} == {
        (t, e) for t in tasks for e in range(4)
    }
    assert {line["temperature"] for line in lines} == {0.7}
    # Per task: the first step is right in the draws whose seed is even; the submission always.
    even = {t: sum(episode_seed(3, t, e) % 2 == 0 for e in range(4)) / 4 for t in tasks}
    expected = sum((even[t] + 1) / 2 for t in tasks) / len(tasks)
    # Free running uses the same seeds: an episode succeeds exactly when its draw's seed is even.
    free = sum(c.free_success * c.n_tasks for c in report.cells) / 6
    assert free == pytest.approx(sum(even.values()) / len(tasks))
    observed = sum(c.tf_step_rate * c.n_tasks for c in report.cells) / sum(
        c.n_tasks for c in report.cells
    )
    assert observed == pytest.approx(expected)
    assert 0 < expected < 1  # the draws differ, so the rate is not a single greedy answer
    assert all(n == 2 * 4 for c in report.cells for n in c.gold_steps)
    before = (tmp_path / SCORES).read_text()
    sampled(tmp_path, temperature=0.7)
    assert (tmp_path / SCORES).read_text() == before


def test_greedy_teacher_forcing_draws_once_and_a_folder_keeps_its_temperature(
    tmp_path: Path,
) -> None:
    from workgym.core.errors import ConfigError

    sampled(tmp_path, temperature=0.0)
    lines = [json.loads(x) for x in (tmp_path / SCORES).read_text().splitlines()]
    assert len(lines) == 6 and {line["epoch"] for line in lines} == {0}
    with pytest.raises(ConfigError, match=r"temperature 0\.0 in this folder"):
        sampled(tmp_path, temperature=0.7)
