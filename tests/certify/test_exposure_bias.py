"""Exposure bias, the compounding check and the same-data null on cases whose answer is known.

The doubles are test doubles (named `scripted/...`): each is written so that its gold-prefix and
own-prefix accuracies are known in advance, which is what checks the measurement. They play the
real `workgym/lookup` environment, whose state-conditional oracle labels their own steps.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

import workgym as wg
from workgym.apps.cli.main import app
from workgym.certify.exposure_bias import OWN
from workgym.certify.gap_null import Measures, old_slope, same_data_null, simulate
from workgym.certify.imitation_gap import ImitationReport, measure
from workgym.core.environment import Environment
from workgym.core.messages import Message, ToolCall
from workgym.core.model import Completion, Model, Sampling
from workgym.core.next_action import NextActionOracle, next_action_oracle
from workgym.core.tasks import Task
from workgym.core.tools import ToolSpec
from workgym.envs.lookup.env import LOOKUPS, Lookup, lookup_value

LIMIT = 56  # two train tasks of most families (the task order interleaves the families)


class _Turns:
    """One episode of a double: `fn(task, oracle, messages)` answers each turn."""

    def __init__(self, name: str, task: Task, oracle: NextActionOracle, fn: Any) -> None:
        self.name, self.task, self.oracle, self.fn = name, task, oracle, fn

    async def complete(
        self, messages: list[Message], tools: list[ToolSpec], sampling: Sampling
    ) -> Completion:
        return Completion(message=self.fn(self.task, self.oracle, messages))


class Double:
    """A task-aware test double that asks the environment's state oracle what is right."""

    def __init__(self, name: str, fn: Any) -> None:
        self.name, self.fn = name, fn

    def for_task(self, task: Task, env: Environment) -> Model:
        oracle = next_action_oracle(env)
        assert oracle is not None
        return _Turns(self.name, task, oracle, self.fn)


def _call(name: str, args: dict[str, Any], content: str = "") -> Message:
    call = ToolCall(id=f"own_{name}", name=name, arguments=json.dumps(args))
    return Message(role="assistant", content=content, tool_calls=[call])


def lost_on_its_own_text(task: Task, oracle: NextActionOracle, messages: list[Message]) -> Message:
    """Right whenever the prefix looks like the gold (no assistant text): perfect teacher-forced.
    It writes a sentence with each call, and once its own sentence is in the prefix it is lost
    and looks up nonsense until the turn limit: its own errors compound."""
    if any(m.role == "assistant" and m.content for m in messages):
        return _call("city_of", {"name": "Nobody"})
    right = oracle.next_action(task, messages).tool_calls[0]
    return _call(right.name, json.loads(right.arguments), content="Let me look that up.")


def slips_on_the_last_step(
    task: Task, oracle: NextActionOracle, messages: list[Message]
) -> Message:
    """Memoryless: the right next action from any state, except that on the phrasings that do
    not name the tool (templates 2 and 3) it submits a wrong answer. Its accuracy is the same on
    any prefix, and its slip ends the episode, so nothing compounds; it fails half the time."""
    right = oracle.next_action(task, messages).tool_calls[0]
    if right.name == "submit_answer" and int(task.meta["template"]) >= 2:
        return _call("submit_answer", {"answer": "not the answer"})
    return _call(right.name, json.loads(right.arguments))


def run(models: dict[str, Any], out: Path, env: Environment | None = None) -> ImitationReport:
    return asyncio.run(
        measure(env or Lookup(), models, split="train", out=out, limit=LIMIT, progress=False)
    )


def test_lookup_declares_a_state_oracle_that_replays_its_gold_and_recovers() -> None:
    env = Lookup()
    assert next_action_oracle(env) is env and isinstance(env, NextActionOracle)
    for kind in LOOKUPS:
        task = next(t for t in env.taskset.split("train") if t.meta["kind"] == kind)
        gold = env.oracle(task)
        messages: list[Message] = [Message(role="user", content=task.prompt)]
        for turn in gold:
            right = env.next_action(task, messages)
            assert right.tool_calls[0].name == turn.tool_calls[0].name
            assert json.loads(right.tool_calls[0].arguments) == json.loads(
                turn.tool_calls[0].arguments
            )
            # a wrong lookup (an error reply) teaches nothing: the right call stays the same
            wrong = _call("city_of", {"name": "Nobody"})
            after = [*messages, wrong, Message(role="tool", tool_call_id=wrong.tool_calls[0].id,
                                               content="no person 'Nobody'")]  # fmt: skip
            assert env.next_action(task, after).tool_calls == right.tool_calls
            call = turn.tool_calls[0]
            reply = "answer recorded"
            if call.name != "submit_answer":
                reply = lookup_value(call.name, json.loads(call.arguments)["name"])
            messages += [turn, Message(role="tool", tool_call_id=call.id, content=reply)]
    # a model may reuse a call id: a later failed call under the same id forgets nothing
    task = next(t for t in env.taskset.split("train") if t.meta["kind"] == "lead_of_person")
    first = env.oracle(task)[0].tool_calls[0]
    team = lookup_value("team_of", json.loads(first.arguments)["name"])
    same = ToolCall(id="call_0", name=first.name, arguments=first.arguments)
    wrong = ToolCall(id="call_0", name="city_of", arguments=json.dumps({"name": "Nobody"}))
    messages = [
        Message(role="user", content=task.prompt),
        Message(role="assistant", tool_calls=[same]),
        Message(role="tool", tool_call_id="call_0", content=team),
        Message(role="assistant", tool_calls=[wrong]),
        Message(role="tool", tool_call_id="call_0", content="no person 'Nobody'"),
    ]
    right = env.next_action(task, messages).tool_calls[0]
    assert (right.name, json.loads(right.arguments)) == ("lead_of", {"name": team})


def test_perfect_teacher_forcing_with_compounding_own_errors_shows_exposure_bias(
    tmp_path: Path,
) -> None:
    report = run({"scripted/lost-on-own-text": Double("scripted/lost", lost_on_its_own_text)},
                 tmp_path)  # fmt: skip
    assert report.state_oracle and report.cells
    for cell in report.cells:
        assert cell.tf_step_rate == 1.0 and cell.tf_all_steps == 1.0
        # step 1 right on its own prefix, then wrong to the turn limit (3 turns)
        assert cell.own_step_rate == pytest.approx(1 / 3)
        assert cell.exposure_bias == pytest.approx(2 / 3)
        assert cell.own_by_position == [1.0, 0.0, 0.0] and cell.free_success == 0.0
        assert cell.predicted_success == 1.0  # teacher forcing predicts success; none comes
    (row,) = report.exposure
    assert row.exposure_bias == pytest.approx(2 / 3) and row.lower is not None
    assert row.own_by_position == [1.0, 0.0, 0.0] and set(row.gold_by_position) == {1.0}
    (comp,) = report.compounding
    assert comp.predicted == 1.0 and comp.observed == 0.0 and comp.shortfall == 1.0
    lines = [json.loads(x) for x in (tmp_path / OWN).read_text().splitlines()]
    assert len(lines) == sum(c.n_tasks for c in report.cells)
    assert {tuple(s["matched"] for s in line["steps"]) for line in lines} == {(True, False, False)}


def test_equal_accuracy_on_both_prefixes_is_no_exposure_bias_though_the_old_slope_says_overstated(
    tmp_path: Path,
) -> None:
    models = {
        "scripted/slips-last": Double("scripted/slips", slips_on_the_last_step),
        "scripted/oracle": wg.get_model("scripted/oracle"),
    }
    report = run(models, tmp_path)
    slips = [c for c in report.cells if c.model == "scripted/slips-last"]
    assert any(c.free_success == 0.0 for c in slips) and any(c.free_success == 1 for c in slips)
    for cell in report.cells:
        assert cell.own_step_rate == pytest.approx(cell.tf_step_rate)
        assert cell.exposure_bias == pytest.approx(0.0)
        # its misses end the task, so the per-position product predicts the failures exactly
        assert cell.predicted_success == pytest.approx(cell.free_success)
    for row in report.exposure:
        assert row.exposure_bias == pytest.approx(0.0)
        assert row.lower == pytest.approx(0.0) and row.upper == pytest.approx(0.0)
    overall = sum(c.free_success for c in slips) / len(slips)
    assert 0.3 < overall < 0.7  # it fails often
    # ... and the old slope, read against 0, calls it overstated: positive, interval above 0
    old = report.old_slope
    assert old.slope is not None and old.lower is not None and old.slope > 0.2 and old.lower > 0


class Coin:
    """A memoryless double: every step is the right next action with probability one half,
    whatever the prefix, drawn from the call's seed and the prefix length (so paired draws
    repeat). A miss where a lookup is due is a wrong submission half the time (the episode ends)
    and a lookup of nobody otherwise (the episode goes on); a miss at the submission submits a
    wrong answer. So its episodes' lengths depend on its misses, and it has no exposure bias."""

    name = "scripted/coin"

    def for_task(self, task: Task, env: Environment) -> Model:
        oracle = next_action_oracle(env)
        assert oracle is not None
        return _CoinTurns(task, oracle)


class _CoinTurns:
    name = "scripted/coin"

    def __init__(self, task: Task, oracle: NextActionOracle) -> None:
        self.task, self.oracle = task, oracle

    async def complete(
        self, messages: list[Message], tools: list[ToolSpec], sampling: Sampling
    ) -> Completion:
        import random

        rng = random.Random(f"{sampling.seed}|{len(messages)}")
        right = self.oracle.next_action(self.task, messages).tool_calls[0]
        if rng.random() < 0.5:
            return Completion(message=_call(right.name, json.loads(right.arguments)))
        if right.name != "submit_answer" and rng.random() < 0.5:
            return Completion(message=_call("city_of", {"name": "Nobody"}))
        return Completion(message=_call("submit_answer", {"answer": "not the answer"}))


def test_a_memoryless_model_whose_episode_lengths_follow_its_misses_has_no_exposure_bias(
    tmp_path: Path,
) -> None:
    report = asyncio.run(
        measure(Lookup(), {"scripted/coin": Coin()}, split="train", out=tmp_path, limit=LIMIT,
                epochs=8, sampling=Sampling(temperature=0.7), progress=False)
    )  # fmt: skip
    (row,) = report.exposure
    assert row.gold_prefix == pytest.approx(0.5, abs=0.05)
    assert row.exposure_bias == pytest.approx(0.0, abs=0.04)
    assert row.lower is not None and row.upper is not None and row.lower < 0 < row.upper
    # The same episodes scored by each episode's share of right steps (decision 0179's first
    # estimator) lean on the episodes' lengths: a short failed episode weighs as a long one.
    lines = [json.loads(x) for x in (tmp_path / OWN).read_text().splitlines()]
    lengths = {len(line["steps"]) for line in lines}
    assert min(lengths) == 1 and max(lengths) == 3  # lookup allows three turns
    shares = [sum(s["matched"] for s in line["steps"]) / len(line["steps"]) for line in lines]
    pooled = sum(sum(s["matched"] for s in line["steps"]) for line in lines) / sum(
        len(line["steps"]) for line in lines
    )
    assert row.gold_prefix - sum(shares) / len(shares) > row.exposure_bias + 0.05
    assert pooled == pytest.approx(0.5, abs=0.04)


def test_an_environment_without_a_state_oracle_reports_teacher_forced_against_free_only(
    tmp_path: Path,
) -> None:
    from test_imitation_gap import TwoStep

    report = run({"scripted/oracle": wg.get_model("scripted/oracle")}, tmp_path, env=TwoStep())
    assert not report.state_oracle and report.exposure == []
    assert all(c.own_step_rate is None and c.exposure_bias is None for c in report.cells)
    assert report.compounding and report.agreement.n_points == len(report.cells)


def no_overstatement_world(seed: int) -> tuple[list[Measures], np.ndarray]:
    """176 cells of 1-2 tasks with 2-3 gold steps each (the shape of the published study), and
    true rates spread over (0.05, 0.95), equal for teacher forcing and free running."""
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.05, 0.95, 176)
    sizes = rng.integers(1, 3, 176)
    cells = [
        Measures(
            tf=float(q),
            free=float(q),
            gold_steps=tuple(int(s) for s in rng.integers(2, 4, k)),
            episodes=int(k),
        )
        for q, k in zip(p, sizes, strict=True)
    ]
    return cells, p


def test_the_same_data_null_reproduces_the_simulated_slope_range_without_overstatement() -> None:
    world, p = no_overstatement_world(1)
    tf, free = simulate(world, p, 4000, np.random.default_rng(2))
    truth = np.nanquantile(old_slope(tf, free), [0.025, 0.975])
    assert truth[0] > 0.3  # no overstatement anywhere, and still a clearly positive old slope
    for i in range(4):  # four data sets drawn from that world, each given only its own data
        data = [Measures(tf=float(a), free=float(b), gold_steps=c.gold_steps, episodes=c.episodes)
                for a, b, c in zip(tf[i], free[i], world, strict=True)]  # fmt: skip
        null = same_data_null(data, draws=1000, seed=i)
        lo, hi = null.old_slope.null_lower, null.old_slope.null_upper
        assert lo is not None and hi is not None
        assert abs(lo - truth[0]) < 0.12 and abs(hi - truth[1]) < 0.12
        assert lo > 0 and lo <= null.old_slope.observed <= hi  # type: ignore[operator]
        assert null.bias.null_lower < 0 < null.bias.null_upper  # type: ignore[operator]


def test_the_same_data_null_rejects_a_real_overstatement() -> None:
    world, p = no_overstatement_world(3)
    rng = np.random.default_rng(4)
    tf, free = simulate(world, p, 1, rng)
    lifted = [  # teacher forcing 0.25 above free running in every cell
        Measures(
            tf=min(1.0, float(a) + 0.25),
            free=float(b),
            gold_steps=c.gold_steps,
            episodes=c.episodes,
        )
        for a, b, c in zip(tf[0], free[0], world, strict=True)
    ]
    null = same_data_null(lifted, draws=1000)
    assert null.bias.p_two_sided is not None and null.bias.p_two_sided < 0.01
    assert null.bias.observed > null.bias.null_upper  # type: ignore[operator]


def test_the_command_reports_exposure_compounding_and_bland_altman(tmp_path: Path) -> None:
    args = ["imitation-gap", "workgym/lookup", "--model", "scripted/oracle", "--split", "train",
            "--limit", "14", "--out", str(tmp_path), "--no-progress"]  # fmt: skip
    first = CliRunner().invoke(app, args)
    assert first.exit_code == 0, first.output
    text = " ".join(first.output.split())
    wanted = ["exposure bias scripted/oracle: +0.000", "compounding scripted/oracle",
              "Bland-Altman over", "same-data null", "old slope (secondary"]  # fmt: skip
    assert [line for line in wanted if line not in text] == []
    before = (tmp_path / "teacher_forced.jsonl").read_text()
    again = CliRunner().invoke(app, args)  # resumes: nothing scored twice
    assert again.exit_code == 0 and (tmp_path / "teacher_forced.jsonl").read_text() == before
    assert (tmp_path / "imitation.png").stat().st_size > 0


def test_the_command_says_when_the_environment_has_no_state_oracle(tmp_path: Path) -> None:
    args = ["imitation-gap", "workgym/toy-shop", "--model", "scripted/oracle", "--split", "dev",
            "--limit", "4", "--out", str(tmp_path), "--no-progress"]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "declares no state-conditional oracle" in text and "exposure bias scripted" not in text


def test_the_null_is_not_drawn_from_fewer_than_three_cells() -> None:
    null = same_data_null([Measures(tf=0.5, free=0.0, gold_steps=(2,), episodes=1)] * 2)
    assert null.draws == 0 and null.old_slope.observed is None and null.bias.observed is None
