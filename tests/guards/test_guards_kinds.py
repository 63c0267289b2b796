"""State and conclusion probes: weak verifiers of those kinds are caught, correct ones pass."""

from __future__ import annotations

import asyncio

import guards_kinds as K
import pytest

import workgym as wg
from workgym.guards.attack import attack_async
from workgym.guards.attack_report import AttackReport
from workgym.guards.catalog import by_name
from workgym.guards.catalog_investigation import INVESTIGATION
from workgym.guards.catalog_state import STATE_PROBES


def attack(env: wg.Environment, names: list[str] | None = None) -> AttackReport:
    chosen = by_name(names) if names else None
    return asyncio.run(attack_async(env, per_family=2, probes=chosen))


def test_state_probes_catch_a_goal_only_verifier() -> None:
    names = [p.name for p in STATE_PROBES]
    weak = attack(K.RecordsGoalOnly(), names)
    assert {c.probe for c in weak.failures()} == {"collateral-edit", "forbidden-tool"}
    # Out of order, the close fails before the read: even the weak verifier fails it.
    assert all(c.passed for c in weak.cells if c.probe == "dependent-calls-out-of-order")
    assert attack(K.Records(), names).passed


def test_investigation_probes_catch_an_any_match_verifier() -> None:
    names = [p.name for p in INVESTIGATION]
    weak = attack(K.IncidentsAnyMatch(), names)
    caught = {c.probe for c in weak.failures()}
    assert {"enumerate-causes", "hedge-two-causes", "downstream-symptom"} <= caught
    assert "unobserved-evidence" in caught
    correct = attack(K.Incidents(), names)
    assert correct.passed, [(c.probe, c.family, c.got) for c in correct.failures()]
    alias = [c for c in correct.cells if c.probe == "cause-alias"]
    assert alias and all(c.expected == "must_pass" and c.got == "pass" for c in alias)
    # Nothing planted: no component is scored, so the symptom probe does not apply there.
    assert not [
        c for c in correct.cells if c.probe == "downstream-symptom" and "normal" in c.family
    ]


@pytest.mark.parametrize("make", [K.Records, K.Incidents], ids=["records", "incidents"])
def test_correct_kinds_pass_the_whole_catalog(make: type[wg.Environment]) -> None:
    report = attack(make())
    assert report.passed, [(c.probe, c.family, c.got) for c in report.failures()]


def test_kinds_without_their_surface_are_not_attackable() -> None:
    class BareState(K.Records):
        id = "test/bare-state"
        attack_collateral = None  # type: ignore[assignment]

    class BareConclusion(K.Incidents):
        id = "test/bare-conclusion"
        planted_causes = None  # type: ignore[assignment]

    state = attack(BareState(), ["collateral-edit"])
    assert state.cells and all(c.got == "not attackable" for c in state.cells)
    conclusion = attack(BareConclusion(), ["wrong-cause-type"])
    assert conclusion.cells and all(c.got == "not attackable" for c in conclusion.cells)
