"""The investigation probes of GUARDS.md give their expected verdicts on every task."""

from __future__ import annotations

import asyncio

import pytest
from warehouse_investigate_support import (  # noqa: F401  (fixtures)
    nyc_env_fixture,
    nyc_inv_fixture,
    play,
)

from workgym.envs.warehouse.investigate.investigation_probes import (
    ATTACKS,
    InvestigationProbe,
    attacks,
    investigation_probes,
    turns,
)
from workgym.envs.warehouse.investigate.vocab import NORMAL, SYMPTOM
from workgym.envs.warehouse.runtime.env import WarehouseEnv
from workgym.guards.probes import AttackContext, Expect


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_probe_gets_its_expected_verdict_on_every_task(nyc_env: WarehouseEnv, name: str) -> None:
    expect = ATTACKS[name][0]
    tasks = list(nyc_env.taskset)
    played = 0
    for task in tasks:
        for attack in attacks(name, task, tasks):
            ep = play(nyc_env, task, turns(attack))
            assert ep.verdict is not None, ep.error
            wanted = expect == Expect.must_pass
            assert ep.success is wanted, (name, task.meta["cause_type"], attack, ep.verdict)
            for flag in attack.expect_flags:
                assert flag in ep.verdict.flags, (name, ep.verdict.flags)
            played += 1
    assert played >= 7, f"{name} applied to only {played} tasks"  # 7 symptoms at least


def test_probes_cover_the_cases_guards_md_names(nyc_env: WarehouseEnv) -> None:
    tasks = list(nyc_env.taskset)
    downstream = [t for t in tasks if attacks("downstream-symptom", t, tasks)]
    assert {t.meta["cause_type"] for t in downstream} == set(SYMPTOM)
    hedges = [a.note for t in tasks for a in attacks("hedge-two-causes", t, tasks)]
    assert "type hedge" in hedges and "slice hedge" in hedges
    common = [t for t in tasks if attacks("most-common-cause", t, tasks)]
    assert len(common) >= len(tasks) - 1  # skipped only where the guess is the truth
    null = next(t for t in tasks if t.meta["cause_type"] == NORMAL)
    assert attacks("cause-alias", null, tasks)[0].answer["cause_type"] == "NO CAUSE"


def test_probes_plug_into_the_guards_attack_loop(nyc_env: WarehouseEnv) -> None:
    """The same probes as `workgym attack` would run them (capability `conclusion`)."""
    ctx = AttackContext(env=nyc_env, tags=frozenset({"conclusion"}))
    task = next(t for t in nyc_env.taskset if t.meta["cause_type"] == "duplication")
    for probe in investigation_probes():
        assert probe.applies(ctx.tags) and not probe.applies(frozenset({"sql_answer"}))
        outcome = asyncio.run(probe.run(ctx, task))
        if probe.name == "most-common-cause" and outcome is None:
            continue  # the train split may hold no planted task in a 10-task build
        assert outcome is not None and outcome.passed, (probe.name, outcome)
        assert outcome.expected == ATTACKS[probe.name][0]
    assert isinstance(investigation_probes()[0], InvestigationProbe)


def test_the_guards_catalog_probes_attack_f9_through_the_surface(nyc_env: WarehouseEnv) -> None:
    """workgym.guards' own investigation probes, through WarehouseEnv's ConclusionAnswers."""
    from workgym.guards.capabilities import ConclusionAnswers
    from workgym.guards.catalog_investigation import INVESTIGATION

    assert isinstance(nyc_env, ConclusionAnswers)
    ctx = AttackContext(env=nyc_env, tags=frozenset({"conclusion"}))
    ran: dict[str, int] = {}
    for probe in INVESTIGATION:
        for task in nyc_env.taskset:
            outcome = asyncio.run(probe.run(ctx, task))
            if outcome is None:
                continue
            assert outcome.passed, (probe.name, task.meta["cause_type"], outcome)
            ran[probe.name] = ran.get(probe.name, 0) + 1
    # downstream-symptom needs a component, which a warehouse slice does not have.
    assert set(ran) == {p.name for p in INVESTIGATION} - {"downstream-symptom"}, ran
