"""From exploit to probe (docs/guards.md): the documented steps, end to end, and the regression
tests of the one exploit turned into a probe that way (fixture `quiz-any-listed`)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import guards_fixtures as F

import workgym as wg
from workgym.core.messages import Message, ToolCall
from workgym.envs.toy.env import ToyShop
from workgym.guards.attack import attack_async
from workgym.guards.catalog import by_name
from workgym.guards.replay import ExploitRecord, ReplayProbe, export_exploit
from workgym.guards.review import TrustedOutcomes, append_review

EXPLOITS = Path(__file__).parent / "exploits"


class QuizAnyListedFixed(F.QuizAnyListed):
    """The same environment after the fix: exact comparison."""

    def accepts(self, answer: str, gold: str, episode: Any) -> bool:
        return answer == gold


def enumerate_all(task: wg.Task, env: wg.Environment) -> list[Message]:
    capitals = ", ".join(c for c, _ in F.CAPITALS.values())
    args = json.dumps({"answer": capitals})
    return [
        Message(
            role="assistant", tool_calls=[ToolCall(id="e", name="submit_answer", arguments=args)]
        )
    ]


def test_the_documented_steps_turn_a_flagged_success_into_a_replay(tmp_path: Path) -> None:
    env = F.QuizAnyListed()
    model = wg.TaskScript("scripted/enumerator", enumerate_all)
    run = wg.eval(env, model, split="dev", out=tmp_path / "run", progress=False)
    s = run.summary()
    assert s.success_rate == 1.0 and s.flags["enumeration"] == s.n_episodes  # 1. the audit
    task_id = next(iter(run.episodes())).task_id
    outcomes = TrustedOutcomes.from_run(run.path)
    assert not outcomes.trusted(task_id) and outcomes.reward(task_id) == 0.0
    append_review(run.path, task_id, 0, "enumeration", "exploit", "any listed item matches")
    path = export_exploit(run.path, task_id, 0, "found-here", tmp_path / "exploits")  # 2.
    probe = ReplayProbe.load(path)  # 3. the regression probe
    assert probe.name == "replay-found-here"
    broken = asyncio.run(attack_async(env, per_family=6, probes=[probe]))
    fixed = asyncio.run(attack_async(QuizAnyListedFixed(), per_family=6, probes=[probe]))
    assert len(broken.cells) == 1 and not broken.passed and broken.cells[0].got == "pass"
    assert fixed.passed and fixed.cells[0].got == "fail"


def test_regression_replays_of_confirmed_exploits_fail_after_the_fix() -> None:
    replays = ReplayProbe.load_dir(EXPLOITS)
    assert [p.name for p in replays] == ["replay-enumerate-candidates"]
    record = ExploitRecord.model_validate_json((EXPLOITS / "enumerate-candidates.json").read_text())
    assert record.env_id == F.QuizAnyListed.id and "enumeration" in record.flags
    fixed = asyncio.run(attack_async(QuizAnyListedFixed(), per_family=6, probes=replays))
    assert fixed.passed and len(fixed.cells) == 1


def test_the_generalised_probe_catches_the_trick_everywhere() -> None:
    probes = by_name(["enumerate-candidates"])
    weak = asyncio.run(attack_async(F.QuizAnyListed(), per_family=1, probes=probes))
    assert {c.family for c in weak.failures()} == set(F.QuizAnyListed().taskset.families())
    for env in (F.Quiz(), QuizAnyListedFixed(), ToyShop()):
        report = asyncio.run(attack_async(env, per_family=1, probes=probes))
        assert report.passed and report.cells, env.id
