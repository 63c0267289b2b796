"""workgym/ops-api as an environment: tasks, oracle, reward semantics, and the tool-call probes."""

from __future__ import annotations

import asyncio
import collections
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import workgym as wg
from workgym.envs.ops_api import OpsApi
from workgym.envs.ops_api.attacks import oracle_calls
from workgym.guards.attack import attack_async
from workgym.guards.catalog_calls import CALLS
from workgym.verifiers.calls import criteria_of


@pytest.fixture(scope="module")
def env() -> Iterator[OpsApi]:
    environment = OpsApi()
    yield environment
    environment.close()


def call(name: str, i: int = 0, **args: Any) -> wg.ToolCall:
    return wg.ToolCall(id=f"c{i}", name=name, arguments=json.dumps(args))


def turn(*calls: wg.ToolCall, text: str = "") -> wg.Message:
    return wg.Message(role="assistant", content=text, tool_calls=list(calls))


def play(env: OpsApi, task: wg.Task, turns: list[wg.Message]) -> wg.Episode:
    model = wg.TaskScript("scripted/test", lambda t, e: turns)
    return asyncio.run(wg.run_episode(env, task, wg.Policy(model)))


def first(env: OpsApi, family: str) -> wg.Task:
    return next(t for t in env.taskset if t.family == family)


def lookups(task: wg.Task) -> list[wg.Message]:
    """The oracle's turns without its last one (the finish call)."""
    calls = [c for c in oracle_calls(task) if c.name != "finish"]
    return [turn(c) for c in calls]


def test_tasks_cover_every_kind_with_held_out_families(env: OpsApi) -> None:
    ts = env.taskset
    assert len(ts) == 108 and len(ts.families()) == 27
    record = ts.split_record()
    kinds = collections.defaultdict(set)
    for family, split in record["families"].items():
        kinds[split].add(family.split("/")[0])
    assert len(kinds["train"]) == 9 and kinds["dev"] and kinds["test"]
    outcomes = {s: {t.answer["outcome"] for t in ts.split(s)} for s in ("train", "dev", "test")}
    assert outcomes["train"] == {"done", "escalated", "refused", "clarify", "no_action"}
    assert len(outcomes["dev"]) >= 4 and len(outcomes["test"]) >= 4
    for task in ts:  # criteria are validated at build time and the prompt never holds them
        criteria_of(task.answer["criteria"])
        assert "criteria" not in task.prompt and "$created" not in task.prompt


def test_the_oracle_solves_one_task_of_every_family(env: OpsApi, tmp_path: Path) -> None:
    picked = {t.family: t for t in env.taskset}
    for task in picked.values():
        ep = play(env, task, env.oracle(task))
        assert ep.success, (task.family, ep.verdict)
        assert ep.verdict is not None and ep.verdict.flags == []
        # The oracle reads what it acts on and answers questions no tool fits without tools:
        # the transcript audit has nothing to flag (the outcome's enum is vocabulary, and a
        # request that needs no lookup does not require evidence).
        assert ep.flags == [], (task.family, ep.flags)


def test_live_replayed_and_repeated_scores_agree(env: OpsApi, tmp_path: Path) -> None:
    run = wg.eval(env, "scripted/oracle", split="dev", out=tmp_path / "o", progress=False)
    for ep in run.episodes():  # read back from disk: no live state, so the calls are replayed
        task = env.taskset[ep.task_id]
        again = [env.score(task, ep) for _ in range(2)]
        assert again[0] == again[1] and again[0].success == ep.success
        assert again[0].evidence["state_from"] == "replay"


def test_policy_forbidden_requests_must_be_refused_without_calls(env: OpsApi) -> None:
    task = first(env, "refund_cancelled/t1")
    request = task.answer["request"]
    obey = play(
        env,
        task,
        [
            *lookups(task),
            turn(call("issue_refund", **request)),
            turn(call("finish", outcome="done")),
        ],
    )
    assert not obey.success and obey.verdict is not None
    assert "refunds" in obey.verdict.evidence["changes"]["created"]
    refuse = play(env, task, [*lookups(task), turn(call("finish", outcome="refused"))])
    assert refuse.success
    blind = play(env, task, [turn(call("finish", outcome="refused"))])  # no look at the order
    assert not blind.success and "without looking up" in str(blind.verdict.evidence)


def test_over_limit_refunds_are_escalated_not_granted(env: OpsApi) -> None:
    task = first(env, "refund_over_limit/t1")
    request = task.answer["request"]
    granted = play(
        env,
        task,
        [
            *lookups(task)[:1],
            turn(call("issue_refund", **request)),
            turn(call("finish", outcome="done")),
        ],
    )
    assert not granted.success
    forbidden = play(env, task, env.attack_forbidden(task) or [])
    assert forbidden.verdict is not None and forbidden.verdict.status == wg.Status.forbidden_action
    assert "forbidden_endpoint" in forbidden.verdict.flags
    assert play(env, task, env.oracle(task)).success


def test_ambiguous_requests_change_nothing(env: OpsApi) -> None:
    task = first(env, "ambiguous/t0")
    orders = [r.split("/")[1] for r in task.answer["must_read"]]
    guess = play(
        env,
        task,
        [
            *lookups(task),
            turn(call("cancel_order", order_id=orders[0])),
            turn(call("finish", outcome="done")),
        ],
    )
    assert not guess.success
    ask = play(
        env, task, [*lookups(task), turn(call("finish", outcome="clarify"), text="Which order?")]
    )
    assert ask.success


def test_irrelevance_items_pass_with_no_call_and_fail_with_one(env: OpsApi) -> None:
    task = first(env, "no_action/t2")
    assert play(env, task, [turn(call("finish", outcome="no_action"))]).success
    wrong = play(env, task, [turn(call("finish", outcome="done"))])
    assert not wrong.success
    meddle = play(
        env,
        task,
        [turn(call("cancel_order", order_id="O1001")), turn(call("finish", outcome="no_action"))],
    )
    assert not meddle.success and "no call" in str(meddle.verdict.evidence)


def test_claims_the_state_does_not_back_are_flagged(env: OpsApi) -> None:
    task = first(env, "refund_cancelled/t0")
    lie = play(
        env,
        task,
        [
            *lookups(task),
            turn(call("finish", outcome="refused"), text="I have refunded your order."),
        ],
    )
    assert lie.verdict is not None and "claim_state_mismatch:refund" in lie.verdict.flags
    assert "claim_state_mismatch:refund" in lie.flags  # the audit carries it too
    honest = play(
        env,
        task,
        [
            *lookups(task),
            turn(call("finish", outcome="refused"), text="I cannot refund a cancelled order."),
        ],
    )
    assert honest.success and honest.verdict is not None and honest.verdict.flags == []


def test_guessed_ids_fail_on_provenance(env: OpsApi) -> None:
    task = first(env, "refund_item/t1")  # the prompt gives an email and a date, not the order id
    request = task.answer["request"]
    guessed = play(
        env,
        task,
        [
            turn(call("get_order", order_id=request["order_id"])),
            turn(call("issue_refund", **request)),
            turn(call("finish", outcome="done")),
        ],
    )
    assert not guessed.success and guessed.verdict is not None
    assert "provenance" in guessed.verdict.flags
    assert play(env, task, env.oracle(task)).success


def test_dependent_calls_collateral_and_normalisers(env: OpsApi) -> None:
    task = first(env, "update_email/t1")  # the new address is given in mixed case
    assert play(env, task, env.oracle(task)).success  # casefold normaliser on the email
    assert not play(env, task, env.attack_out_of_order(task) or []).success  # update before verify
    collateral = play(env, task, env.attack_collateral(task) or [])
    assert not collateral.success and "changed unasked" in str(collateral.verdict.evidence)
    turns = env.oracle(task)
    update = next(i for i, m in enumerate(turns) if m.tool_calls[0].name == "update_customer")
    args = json.loads(turns[update].tool_calls[0].arguments)
    local, domain = args["email"].split("@")
    args["email"] = local.replace(".", "") + "@" + domain  # "15" for "1.5", for emails
    turns[update] = turn(call("update_customer", **args))
    assert not play(env, task, turns).success


@pytest.mark.parametrize("hook", ["attack_collateral", "attack_forbidden", "attack_out_of_order"])
def test_environment_attacks_fail_on_every_task_they_apply_to(env: OpsApi, hook: str) -> None:
    by_family = {t.family: t for t in env.taskset}
    played = 0
    for task in by_family.values():
        turns = getattr(env, hook)(task)
        if turns is None:
            continue
        played += 1
        ep = play(env, task, turns)
        assert ep.verdict is not None and not ep.success, (hook, task.family)
    assert played >= 2


def test_tool_call_probes_of_guards_pass(env: OpsApi) -> None:
    report = asyncio.run(attack_async(env, per_family=1, probes=list(CALLS)))
    assert {"tool_calls", "state"} <= set(report.tags)
    assert report.passed, [(c.probe, c.family, c.got) for c in report.failures()]
    ran = {c.probe for c in report.cells}
    assert {"near-duplicate-name", "string-for-integer", "call-every-tool"} <= ran


def test_gym_facade_and_saved_directory_work(env: OpsApi, tmp_path: Path) -> None:
    task = first(env, "refund_and_ticket/t0")
    gym = wg.GymEnv(env)
    try:
        obs, _ = gym.reset(task)
        seen = json.dumps(obs)
        assert obs["messages"][-1]["content"] == task.prompt
        assert "must_read" not in seen and "$created" not in seen  # no ground truth in sight
        reward, done, truncated = 0.0, False, False
        for message in env.oracle(task):
            obs, reward, done, truncated, _ = gym.step(message)
        assert done and reward == 1.0 and not truncated
    finally:
        gym.close()
    saved = wg.load(env.save(tmp_path / "ops"))
    assert isinstance(saved, OpsApi) and saved.content_hash() == env.content_hash()
