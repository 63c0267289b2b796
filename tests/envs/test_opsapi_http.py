"""workgym/ops-api over real HTTP on 127.0.0.1: isolation under concurrency 32, and bad input that
comes back to the agent as errors while the service keeps serving and keeps worlds apart."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

import workgym as wg
from workgym.core.model import Completion, Sampling, Usage
from workgym.core.tools import ToolSpec
from workgym.envs.ops_api import OpsApi
from workgym.envs.ops_api.session import OpsSession
from workgym.envs.ops_api.world import generate_world


@pytest.fixture(scope="module")
def env() -> Iterator[OpsApi]:
    environment = OpsApi()
    yield environment
    environment.close()


def call(name: str, i: int = 0, raw: str | None = None, **args: Any) -> wg.ToolCall:
    return wg.ToolCall(
        id=f"c{i}", name=name, arguments=raw if raw is not None else json.dumps(args)
    )


def turn(*calls: wg.ToolCall, text: str = "") -> wg.Message:
    return wg.Message(role="assistant", content=text, tool_calls=list(calls))


def play(env: OpsApi, task: wg.Task, *turns: wg.Message) -> wg.Episode:
    model = wg.TaskScript("scripted/test", lambda t, e: list(turns))
    return asyncio.run(wg.run_episode(env, task, wg.Policy(model)))


def health(env: OpsApi) -> int:
    reply = httpx2.get(
        f"{env.service.base_url}/admin/health",
        headers={"X-Admin-Token": env.service.admin_token},
        verify=False,
    )
    return int(reply.json()["sessions"])


def test_the_service_is_real_http_on_localhost(env: OpsApi) -> None:
    url = env.service.start()
    assert url.startswith("http://127.0.0.1:") and not url.endswith(":0")
    reply = httpx2.get(f"{url}/api/orders/O1001", headers={"X-Session": "nope"}, verify=False)
    assert reply.status_code == 401 and "unknown or expired session" in reply.text


class Mutator:
    """scripted/mutator: in every episode, read order O1001, refund a unique amount on it, read it
    again, and finish. Records what each episode saw, so leakage between episodes shows."""

    name = "scripted/mutator"

    def __init__(self, amounts: dict[str, int]) -> None:
        self.amounts = amounts
        self.seen: dict[str, list[Any]] = {}

    def for_task(self, task: wg.Task, env: wg.Environment) -> Any:
        return _MutatorEpisode(self, task)


class _MutatorEpisode:
    name = "scripted/mutator"

    def __init__(self, parent: Mutator, task: wg.Task) -> None:
        self.parent, self.task, self.step = parent, task, 0

    async def complete(
        self, messages: list[wg.Message], tools: list[ToolSpec], sampling: Sampling
    ) -> Completion:
        await asyncio.sleep(0.005)  # let 32 episodes interleave on the server
        amount = self.parent.amounts[self.task.id]
        if self.step in (1, 3):
            self.parent.seen.setdefault(self.task.id, []).append(json.loads(messages[-1].content))
        script = [
            turn(call("get_order", order_id="O1001")),
            turn(call("issue_refund", order_id="O1001", amount_cents=amount)),
            turn(call("get_order", order_id="O1001")),
            turn(call("finish", outcome="done")),
        ]
        reply = script[min(self.step, 3)]
        self.step += 1
        return Completion(message=reply, usage=Usage(prompt_tokens=1, completion_tokens=1))


def test_episodes_are_isolated_under_concurrency_32(env: OpsApi, tmp_path: Path) -> None:
    tasks = list(env.taskset)
    amounts = {t.id: 101 + i for i, t in enumerate(tasks)}  # every episode refunds its own amount
    model = Mutator(amounts)
    run = asyncio.run(
        wg.eval_async(
            env,
            model,
            split="all",
            out=tmp_path / "run",
            options=wg.EvalOptions(concurrency=32, progress=False),
        )
    )
    episodes = list(run.episodes())
    assert len(episodes) == len(tasks) and all(e.outcome == "terminated" for e in episodes)
    for task in tasks:
        initial = generate_world(int(task.meta["world_seed"]))
        before = [r for r in initial["refunds"].values() if r["order_id"] == "O1001"]
        first, second = model.seen[task.id][0], model.seen[task.id][1]
        assert first["refunds"] == before  # a fresh world: nobody else's refund is visible
        mine = [r for r in second["refunds"] if r not in before]
        assert [r["amount_cents"] for r in mine] == [amounts[task.id]]  # exactly our own change
    for ep in episodes:
        changes = ep.verdict.evidence["changes"] if ep.verdict else {}
        assert list(changes["created"]) == ["refunds"] and len(changes["created"]["refunds"]) == 1
        assert changes["updated"] == {} and changes["deleted"] == {}
    assert health(env) == 0  # every session was freed when its episode was scored


def test_malformed_tool_arguments_come_back_as_errors(env: OpsApi) -> None:
    task = next(t for t in env.taskset if t.family == "refund_item/t0")
    oid = task.answer["request"]["order_id"]
    ep = play(
        env,
        task,
        turn(call("get_order", raw="{not json")),
        turn(call("issue_refund", order_id=oid, amount_cents="5")),
        turn(call("issue_refund", order_id=oid, amount_cents=True)),
        turn(call("issue_refund", order_id=oid, amount_cents=5, bogus=1)),
        turn(call("get_orders", order_id=oid)),
        turn(call("get_order", order_id="../admin/health")),
        turn(call("finish", outcome="done")),
    )
    statuses = [r.status for r in ep.tool_calls]
    assert statuses[:6] == [
        "invalid_arguments",
        "invalid_arguments",
        "invalid_arguments",
        "invalid_arguments",
        "unknown_tool",
        "error",
    ]
    assert "not a valid id" in ep.tool_calls[5].content
    assert ep.verdict is not None and not ep.success  # nothing was refunded


def test_unknown_endpoints_and_escapes_get_errors_not_access(env: OpsApi) -> None:
    task = next(t for t in env.taskset if t.family == "no_action/t2")
    ep = play(
        env,
        task,
        turn(call("api_request", method="GET", path="/api/nope")),
        turn(call("api_request", method="DELETE", path="/api/orders/O1001")),
        turn(call("api_request", method="GET", path="/admin/health")),
        turn(call("api_request", method="GET", path="/api/../admin/health")),
        turn(call("api_request", method="GET", path="http://127.0.0.1:1/api/orders/O1001")),
        turn(call("api_request", method="GET", path="/api/%2e%2e/admin/health")),
        turn(call("api_request", method="GET", path="/api/orders/O1001")),
        turn(call("finish", outcome="no_action")),
    )
    texts = [r.content for r in ep.tool_calls]
    assert "unknown endpoint GET /api/nope" in texts[0]
    assert "DELETE is not allowed" in texts[1]
    assert all("outside /api/" in t or "plain path" in t for t in texts[2:6])
    assert '"id": "O1001"' in texts[6] or '"id":"O1001"' in texts[6]  # the service still serves
    assert not any(env.service.admin_token in t for t in texts)


def test_form_validation_errors_go_back_to_the_agent(env: OpsApi) -> None:
    task = next(t for t in env.taskset if t.family == "refund_over_limit/t0")
    form = task.answer["oracle"][-2]["arguments"]["form"]
    ep = play(
        env,
        task,
        turn(call("ticket_form")),
        turn(call("submit_ticket_form", form=form | {"subject": "x" * 500})),
        turn(call("submit_ticket_form", form=form | {"priority": "urgent", "extra": 1})),
        turn(call("submit_ticket_form", form=form | {"customer_id": "C999"})),
        turn(call("submit_ticket_form", form=form | {"order_id": 5})),
        turn(call("submit_ticket_form", form=form | {"description": "y" * 70_000})),
        turn(call("get_order", order_id=form["order_id"])),
    )
    texts = [r.content for r in ep.tool_calls]
    assert '"subject"' in texts[0] and "escalation" in texts[0]  # the form's schema
    assert "subject: String should have at most 120 characters" in texts[1]
    assert "priority" in texts[2] and "extra: Extra inputs are not permitted" in texts[2]
    assert "customer_id: no customer C999" in texts[3]
    assert "order_id" in texts[4] and "valid string" in texts[4]
    assert "413" in texts[5] and "send less" in texts[5]
    assert all(r.status == "error" for r in ep.tool_calls[1:6])
    assert ep.tool_calls[6].status == "ok"  # the service keeps serving after every rejection
    final = ep.state.final["world"]
    assert final == generate_world(int(task.meta["world_seed"]))  # and nothing was created
    again = play(env, task, *env.oracle(task))
    assert again.success


def test_raw_http_abuse_never_crashes_the_service(env: OpsApi) -> None:
    url = env.service.start()
    admin = {"X-Admin-Token": env.service.admin_token}
    with httpx2.Client(base_url=url, verify=False) as client:
        sid = client.post("/admin/sessions", json={"world_seed": 7}, headers=admin).json()
        headers = {"X-Session": sid["session_id"], "content-type": "application/json"}
        bad = [
            client.post("/api/refunds", content=b"{not json", headers=headers),
            client.post("/api/refunds", content=b"[]", headers=headers),
            client.post("/api/refunds", content=b"x" * 200_000, headers=headers),
            client.post("/api/refunds", json={"order_id": "O1001"}, headers={}),
            client.post("/admin/sessions", json={"world_seed": 1}),
            client.post("/admin/sessions", json={"world_seed": 1}, headers={"X-Admin-Token": "x"}),
            client.get("/api/customers", headers=headers),
            client.get("/api/customers", params={"name": "a" * 500}, headers=headers),
            client.post(
                "/api/refunds", json={"order_id": "O1001", "amount_cents": 10**9}, headers=headers
            ),
        ]
        assert [r.status_code for r in bad] == [422, 422, 413, 422, 422, 403, 400, 422, 422]
        assert all("error" in r.json() for r in bad)

        def chunks() -> Iterator[bytes]:
            yield b'{"order_id": "O1001",'
            yield b' "amount_cents": 1}'

        chunked = client.post("/api/refunds", content=chunks(), headers=headers)
        assert chunked.status_code == 411
        world = client.get(f"/admin/sessions/{sid['session_id']}", headers=admin).json()["world"]
        assert world == generate_world(7)  # no rejected request changed anything
        client.delete(f"/admin/sessions/{sid['session_id']}", headers=admin)


def test_a_session_never_sees_another_sessions_changes(env: OpsApi) -> None:
    async def both() -> tuple[Any, Any]:
        a, b = OpsSession(env.service, 12), OpsSession(env.service, 12)
        try:
            await a.request("POST", "/api/orders/O1001/cancel", body={})
            seen_a = await a.request("GET", "/api/orders/O1001")
            seen_b = await b.request("GET", "/api/orders/O1001")
            return seen_a, seen_b
        finally:
            await a.close()
            await b.close()

    initial = generate_world(12)["orders"]["O1001"]
    assert initial["status"] == "placed"  # seed 12 is chosen for a cancellable O1001
    seen_a, seen_b = asyncio.run(both())
    assert seen_a["status"] == "cancelled" and seen_b["status"] == initial["status"]
