"""The seeded world behind the operations API: customers, orders, refunds and tickets.

One function of one integer: the service builds each episode's private copy from the task's
seed, and the verifier rebuilds the same world to diff the final state against. Nothing here reads
a clock or global state, so a world is the same on every machine and every run. Dates are fixed
in 2024 for the same reason.
"""

from __future__ import annotations

import datetime as dt
import random
from typing import Any

from workgym.verifiers.calls_state import State

WORLD_VERSION = "ops-world/1"
AGENT_REFUND_LIMIT_CENTS = 20_000  # policy: larger refunds need a supervisor (escalate)
BASE_DATE = dt.date(2024, 1, 8)

# (sku, name, price in cents). Four items cost more than the agent's refund limit.
CATALOG: tuple[tuple[str, str, int], ...] = (
    ("SKU-KETTLE", "electric kettle", 3499),
    ("SKU-MUGS", "ceramic mug set", 2199),
    ("SKU-GRINDER", "burr grinder", 12900),
    ("SKU-SCALE", "kitchen scale", 2599),
    ("SKU-TEA", "loose-leaf tea sampler", 1850),
    ("SKU-PAN", "cast-iron pan", 5400),
    ("SKU-KNIFE", "chef's knife", 8900),
    ("SKU-TOASTER", "four-slice toaster", 6900),
    ("SKU-BOARD", "walnut cutting board", 4500),
    ("SKU-ESPRESSO", "espresso machine", 48900),
    ("SKU-BLENDER", "pro blender", 27900),
    ("SKU-MIXER", "stand mixer", 39900),
    ("SKU-OVEN", "countertop oven", 23900),
)
FIRST = ("Ada", "Bruno", "Chloe", "Dmitri", "Elena", "Farid", "Grace", "Hiro", "Ines", "Jonas")
LAST = ("Moreau", "Okafor", "Lindqvist", "Tanaka", "Alvarez", "Novak", "Brennan", "Haddad")
STATUS_WEIGHTS: tuple[tuple[str, float], ...] = (
    ("placed", 3),
    ("shipped", 2),
    ("delivered", 4),
    ("cancelled", 1.5),
)
N_CUSTOMERS = 14


def long_date(day: dt.date) -> str:
    """'3 March 2024': how people write dates in requests."""
    return f"{day.day} {day:%B %Y}"


def us_date(day: dt.date) -> str:
    """'March 3, 2024'."""
    return f"{day:%B} {day.day}, {day.year}"


def _customers(rng: random.Random) -> dict[str, dict[str, Any]]:
    names = [(f, s) for f in FIRST for s in LAST]
    rng.shuffle(names)
    chosen = names[: N_CUSTOMERS - 1]
    chosen.append(chosen[rng.randrange(len(chosen))])  # two customers share a full name
    out = {}
    for i, (first, last) in enumerate(chosen, 1):
        cid = f"C{i:03d}"
        out[cid] = {
            "id": cid,
            "name": f"{first} {last}",
            "email": f"{first}.{last}{rng.randrange(10, 99)}@example.com".lower(),
            "phone": f"+44 7700 9{rng.randrange(10000, 99999)}",
            "postcode": f"{rng.choice('BCDEGHKLMNS')}{rng.randrange(1, 30)} {rng.randrange(1, 9)}"
            f"{rng.choice('ABDEFGHJLNPQRSTUWXYZ')}{rng.choice('ABDEFGHJLNPQRSTUWXYZ')}",
        }
    return out


def _orders(rng: random.Random, customers: dict[str, Any]) -> dict[str, dict[str, Any]]:
    statuses = [s for s, _ in STATUS_WEIGHTS]
    weights = [w for _, w in STATUS_WEIGHTS]
    orders = {}
    number = 1001
    for cid in customers:
        days = rng.sample(range(0, 150), rng.randint(2, 4))  # distinct dates per customer
        for offset in sorted(days):
            picks = rng.sample(CATALOG, rng.randint(1, 3))
            items: list[dict[str, Any]] = [
                {"sku": s, "name": n, "price_cents": p} for s, n, p in picks
            ]
            oid = f"O{number}"
            number += 1
            orders[oid] = {
                "id": oid,
                "customer_id": cid,
                "status": rng.choices(statuses, weights)[0],
                "placed_on": (BASE_DATE + dt.timedelta(days=offset)).isoformat(),
                "items": items,
                "total_cents": sum(i["price_cents"] for i in items),
                "cancel_reason": None,
            }
    return orders


def generate_world(seed: int) -> State:
    """A fresh world: every call returns new objects, so callers may mutate their copy."""
    rng = random.Random(f"{WORLD_VERSION}|{seed}")
    customers = _customers(rng)
    orders = _orders(rng, customers)
    refunds: dict[str, dict[str, Any]] = {}
    delivered = [o for o in orders.values() if o["status"] == "delivered"]
    for order in rng.sample(delivered, min(3, len(delivered))):
        item = rng.choice(order["items"])
        if item["price_cents"] > AGENT_REFUND_LIMIT_CENTS:
            continue
        rid = next_id(refunds, "R")
        refunds[rid] = {
            "id": rid,
            "order_id": order["id"],
            "amount_cents": item["price_cents"],
            "reason": f"{item['name']} arrived damaged",
        }
    tickets: dict[str, dict[str, Any]] = {}
    for order in rng.sample(list(orders.values()), 2):
        tid = next_id(tickets, "T")
        tickets[tid] = {
            "id": tid,
            "customer_id": order["customer_id"],
            "order_id": order["id"],
            "category": "delivery",
            "priority": "normal",
            "subject": "Where is my parcel?",
            "description": "Customer asked for a delivery update.",
            "refund_id": None,
            "status": "open",
        }
    return {"customers": customers, "orders": orders, "refunds": refunds, "tickets": tickets}


def next_id(table: dict[str, Any], prefix: str) -> str:
    """The id the service gives the next record of a table (R1, R2, ...; T1, T2, ...)."""
    numbers = [int(k[len(prefix) :]) for k in table if k[len(prefix) :].isdigit()]
    return f"{prefix}{max(numbers, default=0) + 1}"


def refunded_cents(world: State, order_id: str) -> int:
    return sum(r["amount_cents"] for r in world["refunds"].values() if r["order_id"] == order_id)


def public_customer(record: dict[str, Any]) -> dict[str, Any]:
    """What the API shows of a customer: the postcode is the identity check, never shown."""
    return {k: v for k, v in record.items() if k != "postcode"}
