"""Acceptance on the built-in environment: every generic probe passes on toy-shop, every family."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

import workgym as wg
from workgym.envs.toy.env import ToyShop
from workgym.guards.attack import attack_async, sample_tasks
from workgym.guards.attack_report import AttackReport
from workgym.guards.capabilities import FINAL_ANSWER, FINAL_TOOL, TOOLS, capabilities
from workgym.guards.catalog import probes, todo
from workgym.guards.catalog_calls import CALLS
from workgym.guards.catalog_generic import GENERIC
from workgym.guards.catalog_harness import HARNESS


@pytest.fixture(scope="module")
def report() -> AttackReport:
    return asyncio.run(attack_async(ToyShop(), per_family=2))


def test_toy_tags_are_inferred() -> None:
    assert capabilities(ToyShop()) == {FINAL_ANSWER, FINAL_TOOL, TOOLS}


def test_every_generic_probe_passes_on_every_family(report: AttackReport) -> None:
    families = ToyShop().taskset.families()
    assert report.families == families and len(families) == 15
    for probe in [*GENERIC, *HARNESS]:
        cells = [c for c in report.cells if c.probe == probe.name]
        bad = [(c.family, c.got) for c in cells if not c.passed]
        assert not bad, f"{probe.name}: {bad}"
        if probe.name == "number-off-1e-12":
            assert not cells  # integer answers: a float is a type error, not a tolerance case
        else:
            assert {c.family for c in cells} == set(families), probe.name
    assert report.passed and not report.failures()


def test_tool_call_probes_that_apply_pass_too(report: AttackReport) -> None:
    ran = {c.probe for c in report.cells}
    for probe in CALLS:
        if probe.name in ("call-every-tool", "normaliser-collision"):
            assert probe.name not in ran  # needs tool_calls/state, or string arguments
        else:
            assert probe.name in ran, probe.name


def test_what_the_verifier_said_is_reported(report: AttackReport) -> None:
    by = {(c.probe, c.family): c for c in report.cells}
    family = report.families[0]
    assert by[("master-key-solution", family)].got == "fail (no_answer)"
    assert by[("other-task-gold", family)].got == "fail"
    assert by[("sleep-forever", family)].got.startswith("truncated: time_limit")
    assert by[("loop-forever", family)].got.startswith("truncated: max_turns")
    assert by[("judge-injection", family)].expected == "must_not_change_score"
    assert by[("same-answer-twice", family)].got.startswith("identical (pass, pass)")
    assert all(c.tasks == 2 for c in report.cells if c.probe == "empty-answer")


def test_sampling_is_stable_and_per_family() -> None:
    env = ToyShop()
    a, b = sample_tasks(env, 2, seed=0), sample_tasks(env, 2, seed=0)
    assert [t.id for t in a] == [t.id for t in b] and len(a) == 30
    assert [t.id for t in sample_tasks(env, 2, seed=1)] != [t.id for t in a]


class ManyFamilies(wg.Environment):
    """A generated warehouse's shape: few kinds, each split into many small families."""

    id = "fixture/many-families"

    def tasks(self) -> wg.TaskSet:
        return wg.TaskSet(
            wg.Task(family=f"K{k}/t{f}", prompt=f"{k} {f} {i}", answer=i)
            for k in range(3)
            for f in range(5 + 10 * k)
            for i in range(3)
        )


def test_a_cap_on_sampled_tasks_spreads_them_over_every_kind() -> None:
    env = ManyFamilies()
    every = sample_tasks(env, 2, seed=0)
    assert len(every) == 2 * 45  # no cap: two tasks of each of the 45 families
    capped = sample_tasks(env, 2, seed=0, max_tasks=20)
    assert capped == sample_tasks(env, 2, seed=0, max_tasks=20) and len(capped) == 20
    families = {t.family for t in capped}
    assert {t.kind for t in capped} == {"K0", "K1", "K2"} and len(families) == 10
    per_kind = [sum(f.startswith(k) for f in families) for k in ("K0", "K1", "K2")]
    assert max(per_kind) - min(per_kind) <= 1  # families taken in turn across kinds
    assert len(sample_tasks(env, 2, seed=0, max_tasks=1)) == 6  # every kind still attacked
    report = asyncio.run(attack_async(env, per_family=2, max_tasks=20, probes=[]))
    assert report.families_total == 45 and len(report.families) == 10
    assert "of 45 families" in report.coverage


def test_report_files_are_written_and_escaped(report: AttackReport, tmp_path: Path) -> None:
    path = report.write(tmp_path)
    data = json.loads(path.read_text())
    assert data["passed"] is True and data["env_id"] == "workgym/toy-shop"
    assert len(data["cells"]) == len(report.cells) and data["todo"] == []
    html = (tmp_path / "attack.html").read_text()
    assert "<table>" in html and "master-key-solution" in html
    hostile = report.model_copy(update={"env_id": "<script>alert(1)</script>"})
    from workgym.guards.attack_report import attack_section

    assert "<script>" not in attack_section(hostile)


def test_the_catalog_covers_every_group_of_guards_md() -> None:
    names = [p.name for p in probes()]
    assert len(names) == len(set(names))
    groups = {p.group for p in probes()}
    assert groups == {"generic", "tool_calls", "sql", "investigation", "found"}
    assert {"collateral-edit", "forbidden-tool", "dependent-calls-out-of-order"} <= set(names)
    assert {"most-common-cause", "unobserved-evidence", "cause-alias"} <= set(names)
    assert todo() == []  # every kind GUARDS.md names has an environment to attack now


def test_probes_of_other_kinds_do_not_run_on_the_toy(report: AttackReport) -> None:
    ran = {c.probe for c in report.cells}
    others = [p.name for p in probes() if p.group in ("sql", "investigation")]
    assert others and not ran & set(others)
    assert "collateral-edit" not in ran
