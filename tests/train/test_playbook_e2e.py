"""End to end on `workgym/toy-rules` with scripted doubles: the loop must accept the good rule,
reject the harmful one, refuse the leak, and stop early; the same seed gives the same run. These
check the machinery only: a scripted agent's gains are built in, not learned."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_playbook_toy import run_toy

from workgym.core.errors import ModelError, SealedSplitError
from workgym.core.messages import Message
from workgym.core.model import Completion
from workgym.core.tasks import TaskSet, TrainingTaskSet
from workgym.envs.toy_rules.env import GOOD_RULE, HARMFUL_RULE, ToyRules, ToyRulesAgent
from workgym.train.playbook.api import train_playbook
from workgym.train.playbook.config import TrainConfig
from workgym.train.playbook.entries import EntryStatus
from workgym.train.playbook.playbook import load_playbook
from workgym.train.playbook.rollouts import sealed_view
from workgym.train.playbook.runlog import read_events


def events(out: Path, kind: str) -> list[dict[str, Any]]:
    return [e for e in read_events(out) if e["kind"] == kind]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("e2e")
    run_toy(root / "a")
    run_toy(root / "b")
    return root / "a", root / "b"


def test_the_loop_accepts_the_good_rule_rejects_the_harmful_one_and_stops_early(
    runs: tuple[Path, Path],
) -> None:
    out = runs[0]
    report = json.loads((out / "report.json").read_text())
    pb = load_playbook(out / "playbook.md")
    assert [e.text for e in pb.live] == [GOOD_RULE]
    (entry,) = pb.live
    assert entry.status == EntryStatus.active and entry.section == "format"
    assert entry.provenance.gates and "reward rose" in entry.provenance.gates[0]
    assert entry.provenance.tasks and entry.provenance.reflections == ("r-0001",)
    # the harmful rule went to the gates (inside a batch, then alone) and lost both times
    by_text = {d["id"]: d["text"] for c in events(out, "curation") for d in c["deltas"]}
    harmful = [i for i, t in by_text.items() if t == HARMFUL_RULE]
    gates = [g for g in events(out, "gate") if set(g["deltas"]) & set(harmful)]
    assert [(len(g["deltas"]), g["accepted"]) for g in gates] == [(2, False), (1, False)]
    assert "gate A" in gates[1]["reason"]
    # bisection judged the second half against the playbook the first half produced
    assert gates[1]["gate_a"]["baseline"] > gates[0]["gate_a"]["baseline"]
    assert all(
        HARMFUL_RULE not in v["playbook"].get("entries", [{}])[0].get("text", "")
        for v in events(out, "version")
        if v["playbook"]["entries"]
    )
    # the leaked train answer never reached a gate
    first = events(out, "curation")[0]
    assert [r["stage"] for r in first["rejected"]] == ["lint"]
    assert "answer" in first["rejected"][0]["reason"]
    # stopped early, on repeated rejections, well before its epochs ran out
    assert report["stop_reason"] == "rejections" and report["iterations"] == 4
    assert events(out, "batch")[-1]["epoch"] < 1.0
    base = report["baselines"][0]
    assert report["best"]["iteration"] == 1 and report["best"]["reward"] > base["reward"] + 0.5


def test_every_iteration_makes_one_reflection_call_and_the_ledger_adds_up(
    runs: tuple[Path, Path],
) -> None:
    out = runs[0]
    reflections = events(out, "reflection")
    assert [r["iteration"] for r in reflections] == [1, 2, 3, 4]
    report = json.loads((out / "report.json").read_text())
    ledger = report["ledger"]
    assert ledger["by_role"]["reflector"] == sum(
        r["prompt_tokens"] + r["completion_tokens"] for r in reflections
    )
    assert ledger["by_role"]["agent-test"] == 0 and ledger["by_role"]["curator"] == 0
    assert ledger["training_tokens"] == sum(
        v for k, v in ledger["by_role"].items() if k != "agent-test"
    )
    last = events(out, "iteration")[-1]
    assert last["training_tokens"] == ledger["training_tokens"]
    history = [json.loads(x) for x in (out / "playbook.history.jsonl").read_text().splitlines()]
    assert history[0]["parent"] is None and history[0]["reason"] == "seed"
    assert [v["parent"] for v in history[1:]] == [v["hash"] for v in history[:-1]]  # one chain
    for name in ("report.md", "learning_curve.png", "playbook.history.jsonl", "current.md"):
        assert (out / name).exists(), name


def test_the_same_seed_gives_the_same_run(runs: tuple[Path, Path]) -> None:
    a, b = runs

    def strip(out: Path) -> list[dict[str, Any]]:
        return [{k: v for k, v in e.items() if k != "time"} for e in read_events(out)]

    assert strip(a) == strip(b)
    for name in ("playbook.md", "playbook.history.jsonl", "report.json", "ledger.json"):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name


class SpyTaskSet(TaskSet):
    calls: list[str] = []

    def split(self, name: str) -> list:  # type: ignore[type-arg]
        SpyTaskSet.calls.append(name)
        return super().split(name)


class SpyRules(ToyRules):
    """The toy, recording which splits are asked for and which tasks get an episode."""

    played: list[str] = []

    def tasks(self) -> TaskSet:
        base = super().tasks()
        return SpyTaskSet(list(base), base.split_spec)

    def state(self, task: Any) -> Any:
        SpyRules.played.append(task.id)
        return super().state(task)


def test_training_never_touches_the_sealed_test_split(tmp_path: Path) -> None:
    env = SpyRules()
    test_ids = {t.id for t in env.taskset.split("test")}
    SpyTaskSet.calls.clear()
    SpyRules.played.clear()
    run_toy(tmp_path / "r", env=env, max_iterations=2)
    assert SpyRules.played and not set(SpyRules.played) & test_ids
    assert "test" not in SpyTaskSet.calls and "all" not in SpyTaskSet.calls
    for spec in (tmp_path / "r" / "episodes").glob("*/run.json"):
        assert json.loads(spec.read_text())["split"] in ("train", "dev")
    sealed = sealed_view(env)
    assert isinstance(sealed.taskset, TrainingTaskSet)
    assert sealed.content_hash() == env.content_hash()
    assert not {t.id for t in sealed.taskset} & test_ids
    with pytest.raises(SealedSplitError, match="sealed"):
        sealed.taskset.split("test")
    with pytest.raises(SealedSplitError):
        sealed.taskset.split("all")


class Mumbler:
    """A scripted reflector that never returns JSON, then one whose endpoint is down."""

    name = "scripted/mumbler"

    def __init__(self, fail: bool = False) -> None:
        self.fail = fail

    async def complete(self, messages: Any, tools: Any, sampling: Any) -> Completion:
        if self.fail:
            raise ModelError("503 upstream", retryable=True)
        return Completion(message=Message(role="assistant", content="Upper-case things, maybe?"))


@pytest.mark.parametrize("fail", [False, True])
def test_a_useless_or_failing_reflector_costs_iterations_not_the_run(
    tmp_path: Path, fail: bool
) -> None:
    result = train_playbook(
        ToyRules(),
        ToyRulesAgent(),
        reflector=Mumbler(fail),
        out=tmp_path,
        config=TrainConfig(patience=2),
    )
    assert result.stop_reason == "rejections" and result.iterations == 2
    errors = [c["error"] for c in events(tmp_path, "curation")]
    expected = "reflector call failed: 503" if fail else "reply is not a JSON object"
    assert len(errors) == 2 and all(e and expected in e for e in errors)
    assert result.playbook.render() == ""
