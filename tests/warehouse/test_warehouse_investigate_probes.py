"""The guards' investigation probes (workgym.guards.catalog_investigation, the ones `workgym
attack` runs) attack warehouse F9 through WarehouseEnv's ConclusionAnswers surface.

The warehouse once kept a second copy of these probes (`investigate/investigation_probes.py`,
reached only by its own tests); the catalog's are the live ones, so that copy is gone.
"""

from __future__ import annotations

import asyncio

from warehouse_investigate_support import (  # noqa: F401  (fixtures)
    nyc_env_fixture,
    nyc_inv_fixture,
)

from workgym.envs.warehouse.runtime.env import WarehouseEnv
from workgym.guards.probes import AttackContext


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
