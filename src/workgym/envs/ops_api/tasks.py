"""Tasks for the operations API: nine kinds of request, three phrasings each, seeded worlds.

Each template is a family (the unit of the train/dev/test split), so held-out families are new
phrasings and new lookup paths, not new seeds of a seen template. The kinds cover what makes the
job hard: dependent multi-step calls (find, verify, then change; refund, then a ticket that cites
the refund), requests policy forbids (the right outcome is a refusal and no change), ambiguous
requests (ask, do not guess), and requests that need no action at all. Every task carries its
criteria (checked at build time), the records a correct agent must have looked at, and the
oracle's calls.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable
from typing import Any

from workgym.core.tasks import Task
from workgym.envs.ops_api import kinds_act, kinds_decline
from workgym.envs.ops_api.drafts import Draft
from workgym.envs.ops_api.tools import WRITE_NAMES
from workgym.envs.ops_api.world import generate_world
from workgym.verifiers.calls import criteria_of
from workgym.verifiers.calls_state import State

Builder = Callable[[random.Random, State, int], Draft | None]
KINDS: dict[str, Builder] = {
    "refund_item": kinds_act.refund_item,
    "refund_and_ticket": kinds_act.refund_and_ticket,
    "update_email": kinds_act.update_email,
    "cancel_order": kinds_act.cancel_order,
    "refund_cancelled": kinds_decline.refund_cancelled,
    "cancel_shipped": kinds_decline.cancel_shipped,
    "refund_over_limit": kinds_decline.refund_over_limit,
    "ambiguous": kinds_decline.ambiguous,
    "no_action": kinds_decline.no_action,
}
TEMPLATES_PER_KIND = 3


def _seed(*parts: object) -> int:
    digest = hashlib.sha256("|".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:4], "big")


def build_tasks(per_template: int = 4, seed: int = 0) -> list[Task]:
    tasks = []
    for kind, builder in KINDS.items():
        for t in range(TEMPLATES_PER_KIND):
            for k in range(per_template):
                for attempt in range(50):
                    world_seed = _seed(seed, kind, t, k, attempt)
                    draft = builder(random.Random(world_seed), generate_world(world_seed), t)
                    if draft is not None:
                        break
                else:
                    raise RuntimeError(f"no world fits {kind}/t{t}; widen the world generator")
                tasks.append(_task(kind, t, world_seed, draft))
    return tasks


def _task(kind: str, t: int, world_seed: int, d: Draft) -> Task:
    criteria: dict[str, Any] = {"state": d.state}
    if d.no_call:
        criteria["no_call"] = True
    else:
        criteria["allowed"] = sorted({name for name, _ in d.oracle if name in WRITE_NAMES})
    criteria_of(criteria, f"{kind}/t{t}")  # a task without valid criteria never gets built
    oracle = [{"name": n, "arguments": a} for n, a in d.oracle]
    oracle.append({"name": "finish", "arguments": {"outcome": d.outcome}, "text": d.reply})
    return Task(
        family=f"{kind}/t{t}",
        prompt=d.prompt,
        answer={
            "outcome": d.outcome,
            "criteria": criteria,
            "must_read": sorted(d.must_read),
            "oracle": oracle,
            "request": d.request,
            "depends": [list(p) for p in d.depends],
        },
        meta={
            "world_seed": world_seed,
            "kind": kind,
            "template": t,
            "tags": d.tags,
            # A request the right answer needs nothing to look up for (a question no tool fits)
            # is answered without evidence: the audit must not expect any.
            "evidence_required": bool(d.must_read or d.oracle),
        },
    )
