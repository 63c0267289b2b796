"""Investigation evidence a conclusion cites (issue 39, item 3): SQL 300 parentheses deep and
huge values are the agent's failure, never `verifier_error`; 20 heavy queries share one
evidence budget instead of 10 s each (the audit's 201 s)."""

from __future__ import annotations

import time

from warehouse_investigate_support import (  # noqa: F401  (fixtures)
    nyc_env_fixture,
    nyc_inv_fixture,
    submit,
)

from workgym.envs.warehouse.investigate.evidence import (
    BUDGET_S,
    check_evidence,
    normalise_sql,
    reproduces,
)
from workgym.envs.warehouse.investigate.oracle import oracle_answer
from workgym.envs.warehouse.runtime.conclusion_answer import EvidenceQuery
from workgym.envs.warehouse.runtime.env import WarehouseEnv

DEEP = "SELECT" + "(" * 300 + "1" + ")" * 300  # 607 characters, as in the audit
HEAVY = "SELECT count(*) FROM flights a, flights b"


def _planted(env: WarehouseEnv) -> object:
    return next(t for t in env.taskset if t.meta["cause_type"] == "volume_drop")


def test_deep_evidence_is_the_agents_failure(nyc_env: WarehouseEnv) -> None:
    assert len(DEEP) == 607 and normalise_sql(DEEP)  # no RecursionError
    task = _planted(nyc_env)
    gold = oracle_answer(task)  # type: ignore[arg-type]
    ep = submit(nyc_env, task, gold | {"evidence": [{"sql": DEEP, "value": 1.0}]})  # type: ignore[arg-type]
    assert ep.verdict is not None and ep.verdict.status != "verifier_error", ep.verdict
    assert ep.verdict.trainable and not ep.verdict.success
    huge = gold | {"evidence": [{"sql": gold["evidence"][0]["sql"], "value": 1e300}]}
    ep = submit(nyc_env, task, huge)  # type: ignore[arg-type]
    assert ep.verdict is not None and ep.verdict.status != "verifier_error", ep.verdict
    assert not ep.verdict.success


def test_numbers_too_large_to_round_do_not_raise() -> None:
    assert not reproduces(0.5, [(1e300,), (10**400,)])
    assert reproduces(1e300, [(1e300,)])


def test_twenty_heavy_queries_share_one_budget(nyc_env: WarehouseEnv) -> None:
    database = nyc_env.dir / "snapshot.duckdb"
    queries = [EvidenceQuery(sql=HEAVY) for _ in range(20)]
    start = time.perf_counter()
    checks = check_evidence(queries, database, set(), budget_s=3.0)
    elapsed = time.perf_counter() - start
    assert elapsed < 3.0 + 5.0, elapsed  # the budget plus one query's overrun, not 20 x 10 s
    assert len(checks) == 20 and checks[-1].status == "timeout"
    assert "evidence budget" in (checks[-1].error or "")
    assert BUDGET_S <= 30
