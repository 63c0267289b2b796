"""Task kinds whose right outcome is an action: refunds, a refund with a ticket that cites it,
an email change behind identity verification, and a cancellation found by date."""

from __future__ import annotations

import random

from workgym.envs.ops_api.drafts import (
    Draft,
    find_then_list,
    long_date_of,
    money,
    orders_of,
    pick_item,
    pick_order,
    unique_name,
    us_date_of,
)
from workgym.envs.ops_api.world import next_id
from workgym.verifiers.calls_state import State


def refund_item(rng: random.Random, w: State, t: int) -> Draft | None:
    picked = pick_item(rng, w, over_limit=False)
    if picked is None:
        return None
    o, item, c = picked
    name, oid, price = item["name"], o["id"], item["price_cents"]
    prompt = (
        f"Hi, this is {c['name']} ({c['email']}). My order {oid} arrived and the {name} was "
        f"broken. Please refund me for the {name}.",
        f"Customer {c['email']} reports that the {name} in the order they placed on "
        f"{long_date_of(o)} arrived damaged. Refund the item's price.",
        f"Order {oid}: the customer says the {name} is missing from the parcel. Refund just that "
        "item.",
    )[t]
    lookup = [*find_then_list(c), ("get_order", {"order_id": oid})] if t == 1 else []
    return Draft(
        prompt=prompt,
        outcome="done",
        state={"create": {"refunds": [{"order_id": oid, "amount_cents": price}]}},
        must_read=[f"orders/{oid}"],
        oracle=[
            *(lookup or [("get_order", {"order_id": oid})]),
            ("issue_refund", {"order_id": oid, "amount_cents": price}),
        ],
        reply=f"I have refunded {money(price)} for the {name} on order {oid}.",
        tags=["multi_step", "date"] if t == 1 else ["single_change"],
        request={"order_id": oid, "amount_cents": price},
    )


def refund_and_ticket(rng: random.Random, w: State, t: int) -> Draft | None:
    base = refund_item(rng, w, 0)
    if base is None:
        return None
    refund = base.state["create"]["refunds"][0]
    oid, price = refund["order_id"], refund["amount_cents"]
    o = w["orders"][oid]
    c = w["customers"][o["customer_id"]]
    item = next(i["name"] for i in o["items"] if i["price_cents"] == price)
    prompt = (
        f"{c['name']} ({c['email']}) says the {item} in order {oid} arrived damaged. Refund the "
        "item and file a ticket (category refund, priority normal) for the order that "
        "references the refund id.",
        f"Please refund the {item} from order {oid} (it was faulty), then open a refund ticket "
        f"for customer {c['id']} on that order, normal priority, with the refund's id on it so "
        "finance can reconcile.",
        f"The {item} in order {oid} stopped working on day one. Issue a refund for it and log it "
        "with a 'refund' category ticket (normal priority) that links the refund.",
    )[t]
    ticket = {"customer_id": c["id"], "order_id": oid, "category": "refund", "priority": "normal"}
    form = ticket | {
        "subject": f"Refund for damaged {item}",
        "description": f"Refunded {money(price)} for the {item}.",
        "refund_id": next_id(w["refunds"], "R"),  # the oracle knows the id the service assigns
    }
    return Draft(
        prompt=prompt,
        outcome="done",
        state={
            "create": {
                "refunds": [refund],
                "tickets": [ticket | {"refund_id": {"$created": ["refunds", 0, "id"]}}],
            }
        },
        must_read=[f"orders/{oid}"],
        oracle=[*base.oracle, ("submit_ticket_form", {"form": form})],
        reply=f"I have refunded {money(price)} and opened a refund ticket that cites the refund.",
        tags=["multi_step", "dependent", "form"],
        request=base.request,
        depends=[(len(base.oracle) - 1, len(base.oracle))],
    )


def update_email(rng: random.Random, w: State, t: int) -> Draft | None:
    pool = [c for c in w["customers"].values() if unique_name(w, c)]
    c = rng.choice(pool)
    first, last = c["name"].split()
    host = rng.choice(("mailbox.example", "post.example", "inbox.example"))
    new = f"{first}.{last}@{host}"
    prompt = (
        f"Hello, I'm {c['name']}. My postcode is {c['postcode']} and my current email is "
        f"{c['email']}. Please change my email to {new.lower()}.",
        f"Customer with email {c['email']} (postcode on file: {c['postcode']}) asks to update "
        f"their contact email to {new}.",
        f"Please switch the account email for {c['email']} to {new.lower()}. The caller "
        f"confirmed the postcode {c['postcode']}.",
    )[t]
    return Draft(
        prompt=prompt,
        outcome="done",
        state={"update": {"customers": {c["id"]: {"email": new.lower()}}}},
        must_read=[f"customers/{c['id']}"],
        oracle=[
            ("find_customer", {"email": c["email"]}),
            (
                "verify_identity",
                {"customer_id": c["id"], "email": c["email"], "postcode": c["postcode"]},
            ),
            ("update_customer", {"customer_id": c["id"], "email": new}),
        ],
        reply=f"I have updated your email to {new}.",
        tags=["multi_step", "dependent", "identity"] + (["case_variant"] if t == 1 else []),
        depends=[(1, 2)],
    )


def cancel_order(rng: random.Random, w: State, t: int) -> Draft | None:
    picked = pick_order(rng, w, orders_of(w, "placed"))
    if picked is None:
        return None
    o, c = picked
    oid = o["id"]
    prompt = (
        f"I'm {c['name']} ({c['email']}). Please cancel the order I placed on {long_date_of(o)}.",
        f"Cancel order {oid} for {c['email']}; the customer changed their mind.",
        f"{c['email']} wants to cancel the order they placed on {us_date_of(o)}.",
    )[t]
    lookup = [("get_order", {"order_id": oid})] if t == 1 else find_then_list(c)
    return Draft(
        prompt=prompt,
        outcome="done",
        state={"update": {"orders": {oid: {"status": "cancelled"}}}},
        must_read=[f"orders/{oid}"],
        oracle=[*lookup, ("cancel_order", {"order_id": oid})],
        reply=f"I have cancelled order {oid}.",
        tags=["single_change"] if t == 1 else ["multi_step", "date"],
    )
