"""The conclusion verifier's declared semantics, played through the real tools and loop."""

from __future__ import annotations

import json
from typing import Any

import pytest
from warehouse_investigate_support import (  # noqa: F401  (fixtures)
    nyc_env_fixture,
    nyc_inv_fixture,
    play,
    submit,
)

from workgym.core.episode import Episode
from workgym.core.tasks import Task
from workgym.envs.warehouse.investigate.conclusion import gold_of, verify_conclusion
from workgym.envs.warehouse.investigate.oracle import oracle_answer
from workgym.envs.warehouse.investigate.vocab import NORMAL
from workgym.envs.warehouse.runtime.env import WarehouseEnv
from workgym.verifiers.sql_exec import execute_sql


def _task(env: WarehouseEnv, cause: str) -> Task:
    return next(t for t in env.taskset if t.meta["cause_type"] == cause)


def _planted(env: WarehouseEnv) -> list[Task]:
    return [t for t in env.taskset if t.meta["cause_type"] != NORMAL]


def _fails(ep: Episode, *flags: str) -> None:
    assert ep.verdict is not None and not ep.verdict.success and ep.reward == 0.0
    for flag in flags:
        assert flag in ep.verdict.flags


def test_a_slice_named_through_a_dimension_table_is_the_same_slice(nyc_env: WarehouseEnv) -> None:
    """carrier = 'UA' and airlines.name = 'United Air Lines Inc.' select the same rows (FN)."""
    renamed = 0
    for task in _planted(nyc_env):
        gold = oracle_answer(task)
        terms = gold["predicate"]
        for i, term in enumerate(terms):
            if term["column"] != "carrier":
                continue
            found = execute_sql(
                f"SELECT name FROM airlines WHERE carrier = '{term['value']}'",
                nyc_env.database(task),
            )
            name = found.rows[0][0]
            named = {"column": "airlines.name", "op": "=", "value": name}
            alias = [*terms[:i], named, *terms[i + 1 :]]
            ep = submit(nyc_env, task, gold | {"predicate": alias})
            assert ep.success, ep.verdict
            assert ep.verdict is not None and ep.verdict.subscores["iou"] == 1.0
            renamed += 1
    if renamed == 0:
        pytest.skip("no planted slice on carrier in this build")


def test_slice_iou_decides_not_the_text(nyc_env: WarehouseEnv) -> None:
    for task in _planted(nyc_env):
        gold = oracle_answer(task)
        everything = submit(nyc_env, task, gold | {"predicate": []})
        _fails(everything)
        assert everything.verdict is not None and everything.verdict.subscores["iou"] < 0.8
        reordered = submit(nyc_env, task, gold | {"predicate": list(reversed(gold["predicate"]))})
        assert reordered.success
        unknown = submit(
            nyc_env, task, gold | {"predicate": [{"column": "nope", "op": "=", "value": 1}]}
        )
        _fails(unknown)
        assert "predicate" in json.dumps(unknown.verdict.evidence)  # type: ignore[union-attr]


def test_direction_window_and_type_are_each_required(nyc_env: WarehouseEnv) -> None:
    task = _task(nyc_env, "duplication")
    gold = oracle_answer(task)
    _, m = gold_of(task)
    flipped = {"up": "down", "down": "up"}[gold["direction"]]
    _fails(submit(nyc_env, task, gold | {"direction": flipped}))
    _fails(submit(nyc_env, task, gold | {"window": ["2012-01-01", "2012-01-08"]}))  # no overlap
    _fails(submit(nyc_env, task, gold | {"window": ["2013-01-01", "2014-01-01"]}))  # too wide
    _fails(submit(nyc_env, task, gold | {"window": [gold["window"][1], gold["window"][0]]}))
    _fails(submit(nyc_env, task, gold | {"cause_type": NORMAL}))
    # A window given as timestamps with a zone, overlapping the planted one, is fine.
    start = m.window[0].strftime("%Y-%m-%dT%H:%M:%SZ")
    end = m.window[1].strftime("%Y-%m-%dT%H:%M:%SZ")
    assert submit(nyc_env, task, gold | {"window": [start, end]}).success


def test_no_plant_means_normal_variation_and_nothing_else(nyc_env: WarehouseEnv) -> None:
    task = _task(nyc_env, NORMAL)
    gold = oracle_answer(task)
    assert submit(nyc_env, task, gold | {"cause_type": "Nothing unusual"}).success  # alias
    planted = _task(nyc_env, "segment_shock")
    guess = oracle_answer(planted) | {"evidence": gold["evidence"]}
    _fails(submit(nyc_env, task, guess))


def test_evidence_must_rerun_reproduce_and_have_been_run(nyc_env: WarehouseEnv) -> None:
    task = _task(nyc_env, "volume_drop")
    gold = oracle_answer(task)
    sql, value = gold["evidence"][0]["sql"], gold["evidence"][0]["value"]
    _fails(submit(nyc_env, task, gold, run=[]), "evidence_unobserved")
    _fails(submit(nyc_env, task, gold | {"evidence": []}))
    wrong = gold | {"evidence": [{"sql": sql, "value": value + 1.5}]}
    _fails(submit(nyc_env, task, wrong), "evidence_mismatch")
    write = "DELETE FROM flights WHERE TRUE RETURNING *"
    ep = submit(nyc_env, task, gold | {"evidence": [sql, write]}, run=[sql, write])
    _fails(ep, "evidence_failed")
    # The same query laid out differently counts as observed; a plain string claims no number.
    relaid = "  " + sql.replace(" FROM ", "\n  from ") + " ;"
    assert submit(nyc_env, task, gold | {"evidence": [relaid]}, run=[sql]).success


def test_a_rejected_submission_is_no_answer_and_junk_is_a_parse_error(
    nyc_env: WarehouseEnv,
) -> None:
    task = _task(nyc_env, "join_break")
    ep = submit(nyc_env, task, {"kind": "conclusion", "cause_type": "join_break", "bogus": 1})
    assert ep.tool_calls[-1].status == "invalid_arguments"  # the tool refuses it
    assert ep.verdict is not None and ep.verdict.status == "no_answer"

    class Junk:
        answer: Any = {"kind": "conclusion"}
        tool_calls: list[Any] = []

    verdict = verify_conclusion(task, Junk(), env_dir=nyc_env.dir)
    assert verdict.status == "parse_error" and not verdict.success


def test_honest_investigations_raise_no_provenance_flag(nyc_env: WarehouseEnv) -> None:
    """The audit traces the scored fields only, and counts queries the agent ran as observed:
    an investigator that describes the table, runs breakdowns and cites them is not flagged,
    whether its conclusion is right or wrong."""
    import asyncio

    import workgym as wg
    from workgym.envs.warehouse.investigate.investigator import Investigator

    tasks = [t for t in nyc_env.taskset if t.family.startswith("F9")]
    assert tasks
    for task in tasks:
        ep = asyncio.run(wg.run_episode(nyc_env, task, wg.Policy(Investigator())))
        assert ep.submitted
        assert not [f for f in ep.flags if f.startswith("provenance")], (task.id, ep.flags)
