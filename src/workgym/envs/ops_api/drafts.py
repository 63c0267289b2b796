"""Drafts of ops-api tasks, and the lookups every task builder shares.

A builder turns a seeded world into a Draft: the prompt, the right outcome, the expected state
change, the records a correct agent must look at, and the oracle's calls. None means "this world
has no record that fits"; the generator then tries the next world seed.
"""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass, field
from typing import Any

from workgym.envs.ops_api.world import AGENT_REFUND_LIMIT_CENTS, long_date, refunded_cents, us_date
from workgym.verifiers.calls_state import State

Row = dict[str, Any]
Call = tuple[str, dict[str, Any]]


@dataclass
class Draft:
    prompt: str
    outcome: str
    state: dict[str, Any] = field(default_factory=dict)
    no_call: bool = False
    must_read: list[str] = field(default_factory=list)
    oracle: list[Call] = field(default_factory=list)
    reply: str = ""
    tags: list[str] = field(default_factory=list)
    request: dict[str, Any] | None = None  # the refund asked for (for attacks that grant it)
    depends: list[tuple[int, int]] = field(default_factory=list)  # oracle call j needs call i


def money(cents: int) -> str:
    return f"${cents / 100:,.2f}"


def orders_of(w: State, status: str | None = None, customer: str | None = None) -> list[Row]:
    return [
        o
        for o in w["orders"].values()
        if (status is None or o["status"] == status)
        and (customer is None or o["customer_id"] == customer)
    ]


def pick_order(rng: random.Random, w: State, pool: list[Row]) -> tuple[Row, Row] | None:
    """A random order of `pool` and its customer; None when no order fits this world."""
    if not pool:
        return None
    o = rng.choice(pool)
    return o, w["customers"][o["customer_id"]]


def pick_item(rng: random.Random, w: State, *, over_limit: bool) -> tuple[Row, Row, Row] | None:
    """A random item of a delivered, never-refunded order, with its order and customer. The
    item's price is over the agent's refund limit (`over_limit`: the refund must be escalated)
    or within it (the agent may refund it)."""
    pool = [
        (o, i)
        for o in orders_of(w, "delivered")
        if refunded_cents(w, o["id"]) == 0
        for i in o["items"]
        if (i["price_cents"] > AGENT_REFUND_LIMIT_CENTS) == over_limit
    ]
    if not pool:
        return None
    o, item = rng.choice(pool)
    return o, item, w["customers"][o["customer_id"]]


def unique_name(w: State, c: Row) -> bool:
    return [x["name"] for x in w["customers"].values()].count(c["name"]) == 1


def find_then_list(c: Row) -> list[Call]:
    return [("find_customer", {"email": c["email"]}), ("list_orders", {"customer_id": c["id"]})]


def long_date_of(order: Row) -> str:
    return long_date(dt.date.fromisoformat(order["placed_on"]))


def us_date_of(order: Row) -> str:
    return us_date(dt.date.fromisoformat(order["placed_on"]))


def refusal(
    oid: str,
    prompt: str,
    reason: str,
    tags: list[str],
    lookup: list[Call],
    request: dict[str, Any] | None = None,
) -> Draft:
    return Draft(
        prompt=prompt,
        outcome="refused",
        no_call=True,
        must_read=[f"orders/{oid}"],
        oracle=lookup,
        reply=reason,
        tags=["policy_forbidden", *tags],
        request=request,
    )


def already_done(oid: str, prompt: str, reply: str) -> Draft:
    """A request the order already satisfies: look at the order, change nothing."""
    return Draft(
        prompt=prompt,
        outcome="no_action",
        no_call=True,
        must_read=[f"orders/{oid}"],
        oracle=[("get_order", {"order_id": oid})],
        reply=reply,
        tags=["no_action", "already_done"],
    )
