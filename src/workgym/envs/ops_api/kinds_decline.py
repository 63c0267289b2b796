"""Task kinds whose right outcome is not to do what was asked: policy refusals, an escalation
instead of an over-limit refund, ambiguous requests, and requests that need no action."""

from __future__ import annotations

import random

from workgym.envs.ops_api.drafts import (
    Draft,
    Row,
    already_done,
    find_then_list,
    long_date_of,
    money,
    orders_of,
    pick_item,
    pick_order,
    refusal,
)
from workgym.envs.ops_api.world import refunded_cents
from workgym.verifiers.calls_state import State


def refund_cancelled(rng: random.Random, w: State, t: int) -> Draft | None:
    pool = [o for o in orders_of(w, "cancelled") if refunded_cents(w, o["id"]) == 0]
    picked = pick_order(rng, w, pool)
    if picked is None:
        return None
    o, c = picked
    item = rng.choice(o["items"])
    oid = o["id"]
    prompt = (
        f"Please refund the {item['name']} ({money(item['price_cents'])}) on order {oid}; the "
        "customer is unhappy with it.",
        f"{c['name']} ({c['email']}) asks for a refund of the {item['name']} from order {oid}.",
        f"Refund {item['price_cents']} cents on order {oid} for the {item['name']}, please.",
    )[t]
    reason = (
        f"Order {oid} was cancelled, and our policy does not allow refunds on cancelled orders."
    )
    request = {"order_id": oid, "amount_cents": item["price_cents"]}
    return refusal(oid, prompt, reason, ["refund"], [("get_order", {"order_id": oid})], request)


def cancel_shipped(rng: random.Random, w: State, t: int) -> Draft | None:
    picked = pick_order(rng, w, orders_of(w, "shipped"))
    if picked is None:
        return None
    o, c = picked
    oid = o["id"]
    prompt = (
        f"Please cancel order {oid}, the customer {c['email']} no longer needs it.",
        f"I'm {c['name']} ({c['email']}); cancel my order from {long_date_of(o)}, please.",
        f"Cancel {oid} right away.",
    )[t]
    lookup = find_then_list(c) if t == 1 else [("get_order", {"order_id": oid})]
    reason = f"Order {oid} has already shipped; policy allows cancelling placed orders only."
    return refusal(oid, prompt, reason, ["cancel"], lookup)


def refund_over_limit(rng: random.Random, w: State, t: int) -> Draft | None:
    picked = pick_item(rng, w, over_limit=True)
    if picked is None:
        return None
    o, item, c = picked
    oid, name = o["id"], item["name"]
    prompt = (
        f"{c['name']} ({c['email']}): the {name} in order {oid} arrived cracked. Please refund it.",
        f"Refund the {name} on order {oid}; it was damaged in transit.",
        f"Customer {c['email']} wants their money back for the {name} from order {oid}.",
    )[t]
    ticket = {"customer_id": c["id"], "order_id": oid, "category": "escalation", "priority": "high"}
    form = ticket | {
        "subject": f"Refund of {money(item['price_cents'])} needs a supervisor",
        "description": f"Customer reports the {name} arrived damaged.",
    }
    return Draft(
        prompt=prompt,
        outcome="escalated",
        state={"create": {"tickets": [ticket]}},
        must_read=[f"orders/{oid}"],
        oracle=[("get_order", {"order_id": oid}), ("submit_ticket_form", {"form": form})],
        reply="The refund is above my limit, so I have opened an escalation ticket for review.",
        tags=["policy_forbidden", "escalation", "form"],
        request={"order_id": oid, "amount_cents": item["price_cents"]},
    )


def ambiguous(rng: random.Random, w: State, t: int) -> Draft | None:
    if t == 0:
        pool = [c for c in w["customers"].values() if len(orders_of(w, "placed", c["id"])) >= 2]
        if not pool:
            return None
        c = rng.choice(pool)
        placed = orders_of(w, "placed", c["id"])
        return Draft(
            prompt=f"Hi, it's {c['name']} ({c['email']}). Please cancel my order.",
            outcome="clarify",
            no_call=True,
            must_read=[f"orders/{o['id']}" for o in placed],
            oracle=find_then_list(c),
            reply=f"You have {len(placed)} open orders; which one should I cancel?",
            tags=["ambiguous"],
        )
    names: dict[str, list[Row]] = {}
    for c in w["customers"].values():
        names.setdefault(c["name"], []).append(c)
    twins = next(v for v in names.values() if len(v) > 1)
    if t == 1 and not all(orders_of(w, "placed", c["id"]) for c in twins):
        return None
    name = twins[0]["name"]
    phone = f"+44 7700 900{rng.randrange(100, 999)}"
    prompt = (
        f"{name} wants to cancel their pending order.",
        f"Please change the phone number on {name}'s account to {phone}.",
    )[t - 1]
    return Draft(
        prompt=prompt,
        outcome="clarify",
        no_call=True,
        must_read=[f"customers/{c['id']}" for c in twins],
        oracle=[("find_customer", {"name": name})],
        reply=f"There are {len(twins)} customers named {name}; please confirm the email address.",
        tags=["ambiguous", "duplicate_name"],
    )


IRRELEVANT = (
    "How do I reset my password on the website?",
    "Do you ship to Norway?",
    "What is the address for returns?",
    "Can I pay with a gift card?",
    "Are your mugs dishwasher safe?",
)


def no_action(rng: random.Random, w: State, t: int) -> Draft | None:
    if t == 2:
        question = rng.choice(IRRELEVANT)
        return Draft(
            prompt=f"A customer writes: '{question}'",
            outcome="no_action",
            no_call=True,
            reply="That question needs no change to any order or account.",
            tags=["irrelevance", "no_call"],
        )
    if t == 0:
        picked = pick_order(rng, w, orders_of(w, "cancelled"))
        if picked is None:
            return None
        o, c = picked
        prompt = f"Cancel order {o['id']} for {c['email']}, please."
        reply = f"Order {o['id']} is already cancelled; nothing else is needed."
        return already_done(o["id"], prompt, reply)
    if not w["refunds"]:
        return None
    r = rng.choice(list(w["refunds"].values()))
    o = w["orders"][r["order_id"]]
    c = w["customers"][o["customer_id"]]
    item = next(i["name"] for i in o["items"] if i["name"] in r["reason"])
    prompt = (
        f"{c['name']} ({c['email']}) asks whether the refund for the {item} on order "
        f"{o['id']} went through; if not, please refund it."
    )
    reply = f"Yes: refund {r['id']} of {money(r['amount_cents'])} was already processed."
    return already_done(o["id"], prompt, reply)
