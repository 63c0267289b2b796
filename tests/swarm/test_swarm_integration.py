"""A swarm is a Policy: `wg.eval` (with resume), the playbook trainer and the certificate accept
it unchanged. Scripted doubles throughout: the machinery is tested, nothing is learned."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from swarm_doubles import CallLog, Guesser

import workgym as wg
from workgym.certify.certificate import recompute
from workgym.certify.workflow import Request, certify_async
from workgym.envs.toy.env import ToyShop
from workgym.envs.toy_rules.env import GOOD_RULE, ToyRules, ToyRulesAgent, ToyRulesReflector
from workgym.run.rundir import RunDir, read_spec
from workgym.swarm import Attempts, Roles
from workgym.train.playbook.api import train_playbook
from workgym.train.playbook.config import TrainConfig
from workgym.train.playbook.playbook import load_playbook


def test_eval_runs_a_swarm_into_a_resumable_run_directory(tmp_path: Path) -> None:
    def policy() -> wg.Policy:
        return Attempts(Guesser(CallLog()), n=3, budget_tokens=400).policy(playbook="- rule")

    run = wg.eval(ToyShop(), policy=policy(), split="dev", out=tmp_path / "r", progress=False)
    spec = read_spec(tmp_path / "r")
    assert spec.policy["team"]["kind"] == "attempts" and spec.policy["team"]["budget_tokens"] == 400
    records = list(RunDir(tmp_path / "r", spec).records())
    assert records and all(len(r["team"]["agents"]) >= 1 for r in records)
    for r in records:  # the stored total is the sum of the stored agents
        total = r["usage"]["prompt_tokens"] + r["usage"]["completion_tokens"]
        parts = sum(
            a["usage"]["prompt_tokens"] + a["usage"]["completion_tokens"]
            for a in r["team"]["agents"]
        )
        assert total == parts and sum(a["selected"] for a in r["team"]["agents"]) == 1
    again = wg.eval(ToyShop(), policy=policy(), split="dev", out=tmp_path / "r", progress=False)
    assert again.summary().n_episodes == run.summary().n_episodes == len(records)  # resumed
    assert (tmp_path / "r" / "episodes.jsonl").read_text().count("\n") == len(records)


def test_the_playbook_trainer_trains_a_swarm(tmp_path: Path) -> None:
    team = Attempts(ToyRulesAgent(), n=3)
    result = train_playbook(
        ToyRules(),
        team,
        reflector=ToyRulesReflector(),
        out=tmp_path / "pb",
        config=TrainConfig(max_iterations=2, group_size=3, batch_size=4, dev_k=2, gate_tasks=4),
    )
    assert GOOD_RULE in load_playbook(result.playbook_path).render()
    report = json.loads((tmp_path / "pb" / "report.json").read_text())
    assert report["best"]["reward"] > report["baselines"][0]["reward"]
    episodes = list((tmp_path / "pb" / "episodes").glob("*/episodes.jsonl"))
    line = json.loads(episodes[0].read_text().splitlines()[0])
    assert line["model"] == team.name and len(line["team"]["agents"]) == 3


def test_a_role_swarm_trains_with_a_section_per_role(tmp_path: Path) -> None:
    team = Roles(ToyRulesAgent(), roles=("executor", "checker"))
    sections = (*team.sections(), "format")
    result = train_playbook(
        ToyRules(),
        team,
        reflector=ToyRulesReflector(),
        out=tmp_path / "pb",
        config=TrainConfig(
            max_iterations=1, group_size=3, batch_size=4, dev_k=2, gate_tasks=4, sections=sections
        ),
    )
    assert result.playbook.sections[:2] == ("executor", "checker")
    assert GOOD_RULE in result.playbook.render()  # a shared section: every role reads it


def certify(tmp: Path, candidate: wg.Policy, name: str) -> Path:
    req = Request(
        env="workgym/toy-shop",
        baseline=wg.Policy(Guesser(CallLog(), p=0.3)),
        candidate=candidate,
        suites=[],
        out=tmp / name,
        force=True,
        admission_dir=tmp / "admission",
        looks_log=tmp / "looks.jsonl",
        progress=False,
        n_resamples=500,
    )
    asyncio.run(certify_async(req))
    return tmp / name / "certificate.json"


def test_the_certificate_shows_a_cost_matched_section_when_a_swarm_is_involved(
    tmp_path: Path,
) -> None:
    swarm = Attempts(Guesser(CallLog(), p=0.3), n=3).policy()
    path = certify(tmp_path, swarm, "swarm")
    data = json.loads(path.read_text())
    section = data["cost_matched"]
    assert (
        section["teams"]["candidate"]["kind"] == "attempts" and "baseline" not in section["teams"]
    )
    assert not section["matched"] and section["ratio"] > 2.5
    assert section["statement"].startswith("NOT cost-matched") and section["scripted"]
    assert set(section["by_role"]["candidate"]) == {"solver"}
    assert section["by_role"]["candidate"]["solver"] == section["candidate_tokens"]
    html = (path.parent / "certificate.html").read_text()
    assert "Cost-matched comparison" in html and "not learning results" in html
    _, same, changed = recompute(path)
    assert same and not changed
    single = certify(tmp_path, wg.Policy(Guesser(CallLog(), p=0.6)), "single")
    assert "cost_matched" not in json.loads(single.read_text())  # no swarm, no section
    assert "Cost-matched" not in (single.parent / "certificate.html").read_text()
