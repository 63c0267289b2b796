"""Fixture environments of the two other verifier kinds: records behind state-changing tools
(`state`) and structured conclusions (`conclusion`), each with a weak and a correct verifier."""

from __future__ import annotations

import json
from typing import Any

import workgym as wg
from workgym.core.messages import Message, ToolCall
from workgym.guards.capabilities import submit

# -- state: close a record, touch nothing else, never use the admin tool ----------------------

IDS = ["r1", "r2", "r3", "r4"]


class World:
    def __init__(self) -> None:
        self.records = {i: "open" for i in IDS}
        self.read: set[str] = set()
        self.used: list[str] = []


@wg.tool
def get_record(ctx: wg.Ctx, record_id: str) -> dict[str, str]:
    """Read one record.

    Args:
        record_id: The record id (r1..r4).
    """
    world: World = ctx.state
    if record_id not in world.records:
        raise wg.ToolError(f"no record {record_id!r}")
    world.read.add(record_id)
    world.used.append("get_record")
    return {"id": record_id, "status": world.records[record_id]}


@wg.tool
def close_record(ctx: wg.Ctx, record_id: str) -> str:
    """Close a record (read it first).

    Args:
        record_id: The record id.
    """
    world: World = ctx.state
    if record_id not in world.read:
        raise wg.ToolError("read the record before closing it")
    world.records[record_id] = "closed"
    world.used.append("close_record")
    return "closed"


@wg.tool
def admin_set_status(ctx: wg.Ctx, record_id: str, status: str) -> str:
    """Administrators only: set any status directly. Agents must not use this.

    Args:
        record_id: The record id.
        status: The new status.
    """
    world: World = ctx.state
    world.records[record_id] = status
    world.used.append("admin_set_status")
    return "done"


def _turns(*calls: tuple[str, dict[str, Any]]) -> list[Message]:
    return [
        Message(
            role="assistant", tool_calls=[ToolCall(id=f"c{i}", name=n, arguments=json.dumps(a))]
        )
        for i, (n, a) in enumerate(calls)
    ]


class Records(wg.Environment):
    """Correct: the target closed, nothing else changed, the admin tool never used."""

    id = "test/records"
    tools = [get_record, close_record, admin_set_status]
    limits = wg.Limits(max_turns=6)
    guard_tags = frozenset({"state"})

    def tasks(self) -> wg.TaskSet:
        return wg.TaskSet(
            [
                wg.Task(family=f"close/t{n % 2}", prompt=f"Close record {i}.", answer={"close": i})
                for n, i in enumerate(IDS)
            ],
            wg.SplitSpec(salt="records", overrides={"close/t0": "train"}),
        )

    def state(self, task: wg.Task) -> World:
        return World()

    def oracle(self, task: wg.Task) -> list[Message]:
        rid = task.answer["close"]
        return _turns(("get_record", {"record_id": rid}), ("close_record", {"record_id": rid}))

    def attack_collateral(self, task: wg.Task) -> list[Message] | None:
        other = next(i for i in IDS if i != task.answer["close"])
        extra = _turns(("get_record", {"record_id": other}), ("close_record", {"record_id": other}))
        return [*self.oracle(task), *extra]

    def attack_forbidden(self, task: wg.Task) -> list[Message] | None:
        rid = task.answer["close"]
        return _turns(("admin_set_status", {"record_id": rid, "status": "closed"}))

    def attack_out_of_order(self, task: wg.Task) -> list[Message] | None:
        rid = task.answer["close"]
        return _turns(("close_record", {"record_id": rid}), ("get_record", {"record_id": rid}))

    def verify(self, task: wg.Task, episode: Any) -> wg.Verdict:
        world: World = episode.state
        target = task.answer["close"]
        if "admin_set_status" in world.used:
            return wg.Verdict.wrong(wg.Status.forbidden_action)
        expected = {i: ("closed" if i == target else "open") for i in IDS}
        return wg.Verdict.correct() if world.records == expected else wg.Verdict.wrong()


class RecordsGoalOnly(Records):
    """Weak: checks only that the target is closed."""

    id = "test/records-goal-only"

    def verify(self, task: wg.Task, episode: Any) -> wg.Verdict:
        closed = episode.state.records[task.answer["close"]] == "closed"
        return wg.Verdict.correct() if closed else wg.Verdict.wrong()


# -- conclusions: name the planted cause, on the right component, with observed evidence ------

VOCABULARY = {
    "deploy_regression": ["bad deploy"],
    "config_change": ["misconfiguration"],
    "expired_certificate": ["cert expiry"],
    "normal_variation": ["no incident"],
}
DOCS = {
    "DOC-1": "deploy 4.2 of auth",
    "DOC-2": "config push to api",
    "DOC-3": "cert expired on cdn",
}
CASES = [
    ("deploy_regression", "auth", "checkout", "DOC-1"),
    ("config_change", "api", "web", "DOC-2"),
    ("expired_certificate", "cdn", "web", "DOC-3"),
    ("deploy_regression", "api", "web", "DOC-1"),
]


@wg.tool
def read_document(doc_id: str) -> str:
    """Read one document.

    Args:
        doc_id: The document id.
    """
    if doc_id not in DOCS:
        raise wg.ToolError(f"no document {doc_id!r}")
    return f"{doc_id}: {DOCS[doc_id]}"


@wg.tool(final=True)
def submit_conclusion(causes: list[dict[str, Any]]) -> str:
    """Submit the root causes. This ends the task.

    Args:
        causes: Each {cause_type, component, evidence: [doc ids]}.
    """
    return "recorded"


class Incidents(wg.Environment):
    """Correct: exactly the planted causes (aliases accepted), on the right component, citing
    only documents read in the episode."""

    id = "test/incidents"
    tools = [read_document, submit_conclusion]
    limits = wg.Limits(max_turns=8)
    guard_tags = frozenset({"conclusion"})

    def tasks(self) -> wg.TaskSet:
        tasks = [
            wg.Task(
                family=f"{kind}/t0",
                prompt=f"Why did {symptom} degrade (case {n})?",
                answer=[{"cause_type": kind, "component": comp, "evidence": [doc]}],
                meta={"symptoms": [symptom]},
            )
            for n, (kind, comp, symptom, doc) in enumerate(CASES)
        ]
        tasks.append(
            wg.Task(
                family="normal_variation/t0",
                prompt="Why did web wobble?",
                answer=[{"cause_type": "normal_variation", "component": "", "evidence": []}],
                meta={"symptoms": ["web"]},
            )
        )
        return wg.TaskSet(
            tasks, wg.SplitSpec(salt="incidents", overrides={"deploy_regression/t0": "train"})
        )

    def cause_vocabulary(self) -> dict[str, list[str]]:
        return VOCABULARY

    def planted_causes(self, task: wg.Task) -> list[dict[str, Any]]:
        return [dict(c) for c in task.answer]

    def symptom_components(self, task: wg.Task) -> list[str]:
        return list(task.meta["symptoms"])

    def submit_causes(
        self, task: wg.Task, causes: Any, *, observe: bool = True, text: str = ""
    ) -> list[Message]:
        cited = sorted({d for c in causes for d in c.get("evidence", [])}) if observe else []
        reads = _turns(*(("read_document", {"doc_id": d}) for d in cited))
        return [*reads, *submit(self, task, causes, text)]

    def oracle(self, task: wg.Task) -> list[Message]:
        return self.submit_causes(task, task.answer)

    def canonical(self, name: Any) -> str:
        return next((k for k, v in VOCABULARY.items() if name == k or name in v), str(name))

    def verify(self, task: wg.Task, episode: Any) -> wg.Verdict:
        got = episode.answer
        if not isinstance(got, list) or len(got) != len(task.answer):
            return wg.Verdict.wrong()
        seen = " ".join(c.content for c in episode.tool_calls if c.status == "ok")
        for want, have in zip(task.answer, got, strict=True):
            if self.canonical(have.get("cause_type")) != want["cause_type"]:
                return wg.Verdict.wrong()
            if (
                want["cause_type"] != "normal_variation"
                and have.get("component") != want["component"]
            ):
                return wg.Verdict.wrong()
            if any(d not in seen for d in have.get("evidence", [])):
                return wg.Verdict.wrong(why="evidence never observed")
        return wg.Verdict.correct()


class IncidentsAnyMatch(Incidents):
    """Weak: passes when any submitted cause has a planted type (no count, component, or
    evidence check)."""

    id = "test/incidents-any-match"

    def verify(self, task: wg.Task, episode: Any) -> wg.Verdict:
        got = episode.answer if isinstance(episode.answer, list) else []
        planted = {c["cause_type"] for c in task.answer}
        ok = any(self.canonical(c.get("cause_type")) in planted for c in got)
        return wg.Verdict.correct() if ok else wg.Verdict.wrong()
