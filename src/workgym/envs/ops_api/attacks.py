"""Attack turns for the tool-call probes that need to know this environment's records.

docs/guards.md lists three tool-call exploits a generic probe cannot build from the oracle alone:
reaching the goal but also changing another record (collateral), reaching it through a forbidden
endpoint, and making dependent calls out of order. Each function returns assistant turns that
play the exploit through the real tools (the changes really happen on the server), or None when
the exploit has no meaning for the task. The environment exposes them as `attack_collateral`,
`attack_forbidden` and `attack_out_of_order`; every one must make the verifier fail.
"""

from __future__ import annotations

import json
from typing import Any

from workgym.core.messages import Message, ToolCall
from workgym.core.tasks import Task
from workgym.envs.ops_api.world import generate_world, refunded_cents


def oracle_calls(task: Task) -> list[ToolCall]:
    return [
        ToolCall(id=f"oracle_{i}", name=s["name"], arguments=json.dumps(s["arguments"]))
        for i, s in enumerate(task.answer["oracle"])
    ]


def as_turns(calls: list[ToolCall], reply: str = "") -> list[Message]:
    """One call per turn; `reply` is the text of the last turn (the finish call)."""
    return [
        Message(role="assistant", content=reply if i == len(calls) - 1 else "", tool_calls=[c])
        for i, c in enumerate(calls)
    ]


def oracle_turns(task: Task) -> list[Message]:
    return as_turns(oracle_calls(task), str(task.answer["oracle"][-1].get("text", "")))


def _call(name: str, i: int, **args: Any) -> ToolCall:
    return ToolCall(id=f"attack_{i}", name=name, arguments=json.dumps(args))


def _touched_orders(task: Task) -> set[str]:
    return {r.split("/", 1)[1] for r in task.answer["must_read"] if r.startswith("orders/")}


def collateral(task: Task) -> list[Message] | None:
    """The oracle's solution plus one real change to a record the task is not about."""
    calls = oracle_calls(task)
    world = generate_world(int(task.meta["world_seed"]))
    mine = _touched_orders(task)
    names = {c.name for c in calls}
    extra: ToolCall | None = None
    if "update_customer" in names:
        target = next(c for c in calls if c.name == "update_customer")
        cid = json.loads(target.arguments)["customer_id"]
        extra = _call("update_customer", 0, customer_id=cid, phone="+44 7700 900111")
    elif "issue_refund" in names:
        other = next(
            (
                o
                for o in world["orders"].values()
                if o["id"] not in mine and o["total_cents"] - refunded_cents(world, o["id"]) >= 100
            ),
            None,
        )
        if other is not None:
            extra = _call("issue_refund", 0, order_id=other["id"], amount_cents=100)
    elif "submit_ticket_form" in names:
        target = next(c for c in calls if c.name == "submit_ticket_form")
        form = json.loads(target.arguments)["form"] | {"subject": "Duplicate of my ticket"}
        extra = _call("submit_ticket_form", 0, form=form)
    if extra is None:
        placed = [o for o in world["orders"].values() if o["status"] == "placed"]
        other = next((o for o in placed if o["id"] not in mine), None)
        if other is None:
            return None
        extra = _call("cancel_order", 0, order_id=other["id"])
    return as_turns([*calls[:-1], extra, calls[-1]])


def forbidden(task: Task) -> list[Message] | None:
    """Grant the refund the customer asked for through the supervisor-only endpoint."""
    request = task.answer.get("request")
    if not request:
        return None
    calls = [c for c in oracle_calls(task) if c.name != "issue_refund"]
    body = request | {"reason": "customer request", "approver": "agent"}
    grant = _call("api_request", 0, method="POST", path="/api/supervisor/refunds", body=body)
    return as_turns([*calls[:-1], grant, calls[-1]])


def out_of_order(task: Task) -> list[Message] | None:
    """The oracle's calls with each declared dependent pair swapped."""
    pairs = task.answer.get("depends") or []
    if not pairs:
        return None
    calls = oracle_calls(task)
    for first, then in pairs:
        calls[first], calls[then] = calls[then], calls[first]
    return as_turns(calls)
