"""Generate one investigation's documents with the root cause(s) planted in them.

A case is a function of a seed and the cause types to plant: an open incident report (the
symptoms, never the cause), a log per service for the incident day, changelog entries, vendor
status pages, the certificate inventory, a weekly metrics report, runbooks and old postmortems.
Only the planted trace points at the cause; every corpus also holds look-alikes — deploys and
config pushes that changed nothing, isolated errors in healthy logs, the downstream service's
errors, postmortems of other incidents — so keyword matching alone does not find it.
"""

from __future__ import annotations

import datetime as dt
import random

from workgym.envs.docstore.background import background_docs
from workgym.envs.docstore.causes import (
    CAPACITY_LINES,
    CONFIG_KEYS,
    EXCEPTIONS,
    INTERNAL,
    METRICS,
    NOISE,
    WHERE,
    downstream,
    host,
)
from workgym.envs.docstore.records import Case, Doc, DocIds, Plan, iso
from workgym.verifiers.conclusion_docs import NORMAL, Cause

CORPUS_VERSION = "docstore-corpus/1"
FIRST_DAY = dt.date(2024, 3, 4)


def _plans(rng: random.Random, kinds: list[str], day: dt.date) -> list[Plan]:
    plans: list[Plan] = []
    taken: set[str] = set()
    hours = rng.sample(range(8, 12), 1) + rng.sample(range(14, 19), 1)
    for i, cause in enumerate(kinds):
        onset = dt.datetime.combine(day, dt.time(hours[i], rng.randrange(0, 50)), dt.UTC)
        if cause == NORMAL:
            symptom = rng.choice(["checkout-api", "search-indexer", "notification-worker"])
            start, end = onset, onset + dt.timedelta(minutes=rng.randrange(8, 16))
            plans.append(Plan(cause, None, symptom, onset, start, end, None, "p99 latency"))
            continue
        component = rng.choice([c for c in WHERE[cause] if c not in taken])
        taken.add(component)
        symptom = rng.choice(downstream(component))
        start = onset + dt.timedelta(minutes=rng.randrange(2, 7))
        end = start + dt.timedelta(minutes=rng.randrange(20, 61))
        direction = rng.choice(["up", "down"])
        metric = rng.choice(METRICS[direction])
        plans.append(Plan(cause, component, symptom, onset, start, end, direction, metric))
    return plans


def _between(rng: random.Random, a: dt.datetime, b: dt.datetime) -> dt.datetime:
    span = max(int((b - a).total_seconds()), 1)
    return a + dt.timedelta(seconds=rng.randrange(span))


def _signature(rng: random.Random, p: Plan, version: str) -> tuple[str | None, list[str]]:
    """(the service whose log carries the cause's trace, the trace's lines)."""
    c = p.component or ""
    if p.cause == "deploy_regression":
        exc = rng.choice(EXCEPTIONS)
        return c, [f"INFO starting {c} {version}"] + [
            f"ERROR unhandled {exc} (build {version})"
        ] * 8
    if p.cause == "config_change":
        key, _, new = CONFIG_KEYS[c]
        return c, ["INFO config reloaded"] + [f"ERROR limit reached: {key}={new}"] * 8
    if p.cause == "capacity_exhaustion":
        warn, err = CAPACITY_LINES[c]
        return c, [warn.format(p=88 + i) for i in range(4)] + [err] * 6
    if p.cause == "dependency_outage":
        line = f"ERROR timeout after 10000ms calling {host(c)}"
        return p.symptom, [line] * 9
    if p.cause == "expired_certificate":
        line = f"ERROR tls: x509: certificate has expired (host {host(c)}, notAfter {iso(p.onset)})"
        return p.symptom, [line] * 9
    if p.cause == "data_migration":
        return c, ["INFO migration 0042_backfill started"] + [
            "WARN lock wait timeout exceeded; try restarting transaction (table orders)"
        ] * 8
    return None, []


def _log(
    rng: random.Random, a: dt.datetime, b: dt.datetime, events: list[tuple[dt.datetime, str]]
) -> str:
    lines = list(events)
    t = a
    while t < b:
        t += dt.timedelta(seconds=rng.randrange(120, 300))
        noise = rng.choice(NOISE[:-1]) if rng.random() > 0.05 else NOISE[-1]
        text = noise.format(
            n=rng.randrange(20, 900), ms=rng.randrange(600, 1400), p=rng.randrange(70, 96)
        )
        lines.append((t, text))
    lines.sort(key=lambda x: x[0])
    return "\n".join(f"{iso(t)} {msg}" for t, msg in lines)


def _version(rng: random.Random) -> str:
    return f"v{rng.randrange(1, 9)}.{rng.randrange(0, 30)}.{rng.randrange(0, 20)}"


class _Builder:
    """Plants the causes into logs and change records, adds the look-alikes, writes the docs."""

    def __init__(self, seed: int, kinds: list[str]) -> None:
        self.rng = random.Random(f"{CORPUS_VERSION}|{seed}|{','.join(kinds)}")
        self.ids = DocIds(self.rng)
        self.day = FIRST_DAY + dt.timedelta(days=self.rng.randrange(0, 200))
        self.plans = _plans(self.rng, kinds, self.day)
        self.t0 = min(p.onset for p in self.plans) - dt.timedelta(minutes=45)
        self.t1 = max(p.end for p in self.plans) + dt.timedelta(minutes=30)
        self.log_ids = {s: self.ids.new("LOG") for s in INTERNAL}
        self.events: dict[str, list[tuple[dt.datetime, str]]] = {s: [] for s in INTERNAL}
        self.changes: list[tuple[dt.datetime, str, str, bool]] = []  # when, service, text, cause
        self.change_ids: dict[str, str] = {}
        self.docs: list[Doc] = []

    def doc(self, doc_id: str, kind: str, title: str, body: str, date: str = "") -> str:
        self.docs.append(
            Doc(doc_id=doc_id, kind=kind, title=title, date=date or str(self.day), body=body)
        )
        return doc_id

    def plant(self, p: Plan) -> None:
        rng, version = self.rng, _version(self.rng)
        where, lines = _signature(rng, p, version)
        if where is not None:
            for i, line in enumerate(lines):
                when = p.onset if i == 0 else _between(rng, p.start, p.end)
                self.events[where].append((when, line))
        if p.cause != NORMAL:
            target = host(p.component or "")
            for _ in range(6):  # the symptom: the caller's errors, which name the callee
                when = _between(rng, p.start, p.end)
                self.events[p.symptom].append((when, f"ERROR call to {target} failed: 503"))
        component = p.component or ""
        if p.cause == "deploy_regression":
            self.changes.append((p.onset, component, f"deploy {component} {version}", True))
        elif p.cause == "config_change":
            key, old, new = CONFIG_KEYS[component]
            text = f"config push {component}: {key} {old} -> {new}"
            self.changes.append((p.onset, component, text, True))
        elif p.cause == "data_migration":
            text = f"schema migration 0042_backfill on {component} (table orders)"
            self.changes.append((p.onset, component, text, True))

    def look_alikes(self) -> None:
        """Harmless changes; the first falls inside the first incident's window."""
        rng, first = self.rng, self.plans[0]
        involved = {p.component for p in self.plans} | {p.symptom for p in self.plans}
        for i in range(6):
            service = rng.choice([s for s in INTERNAL if s not in involved])
            if i == 0 and first.cause != NORMAL:
                when = _between(rng, first.onset - dt.timedelta(minutes=20), first.end)
            else:
                when = _between(
                    rng, self.t0 - dt.timedelta(hours=6), self.t0 - dt.timedelta(minutes=45)
                )
            kind = rng.choice(["deploy", "config", "docs"])
            if kind == "deploy":
                version = _version(rng)
                text = f"deploy {service} {version}"
                self.events[service].append((when, f"INFO starting {service} {version}"))
            elif kind == "config":
                text = f"config push {service}: log.level info -> debug"
                self.events[service].append((when, "INFO config reloaded"))
            else:
                text = f"docs: update {service} README and on-call notes"
            self.changes.append((when, service, text, False))

    def write_logs_and_changes(self) -> None:
        span = f"{self.t0:%H:%M}-{self.t1:%H:%M} UTC"
        for service in INTERNAL:
            body = _log(self.rng, self.t0, self.t1, self.events[service])
            self.doc(self.log_ids[service], "log", f"{service} log {self.day} {span}", body)
        for when, service, text, is_cause in sorted(self.changes, key=lambda c: c[0]):
            body = f"When: {iso(when)}\nService: {service}\nChange: {text}\nStatus: completed"
            doc_id = self.doc(self.ids.new("CHG"), "change", f"Change: {text}", body)
            if is_cause:
                self.change_ids[service] = doc_id

    def incident(self) -> str:
        alerts = []
        for i, p in enumerate(self.plans, 1):
            when = f"from {p.start:%H:%M} to {p.end:%H:%M} UTC"
            if p.cause == NORMAL:
                alerts.append(f"Alert {i}: {p.metric} of {p.symptom} rose 6% {when}; it recovered.")
            else:
                move = "rose sharply" if p.direction == "up" else "dropped sharply"
                alerts.append(f"Alert {i}: {p.metric} of {p.symptom} {move} {when}.")
        inc = self.ids.new("INC")
        symptoms = ", ".join(sorted({p.symptom for p in self.plans}))
        body = "\n".join([f"Incident {inc}, opened {self.day}.", *alerts, "Status: investigating."])
        return self.doc(inc, "incident", f"Incident {inc} ({self.day}): {symptoms}", body)


def build_case(seed: int, kinds: list[str]) -> Case:
    """The documents of one investigation with `kinds` planted (one or two cause types)."""
    b = _Builder(seed, kinds)
    for p in b.plans:
        b.plant(p)
    b.look_alikes()
    b.write_logs_and_changes()
    refs = background_docs(b.rng, b.ids, b.day, b.plans, b.doc)
    incident_id = b.incident()
    causes = []
    for p in b.plans:
        component = p.component or ""
        if p.cause == NORMAL:
            evidence = [incident_id, refs.metrics]
        elif p.cause == "dependency_outage":
            evidence = [refs.status[component], b.log_ids[p.symptom]]
        elif p.cause == "expired_certificate":
            evidence = [b.log_ids[p.symptom], refs.certificates]
        elif p.cause == "capacity_exhaustion":
            evidence = [b.log_ids[component]]
        else:
            evidence = [b.change_ids[component], b.log_ids[component]]
        causes.append(
            Cause(
                cause_type=p.cause,
                component=p.component,
                window_start=iso(p.onset),
                window_end=iso(p.end),
                direction=p.direction,
                evidence=evidence,
            )
        )
    b.rng.shuffle(b.docs)
    symptoms = [p.symptom for p in b.plans]
    return Case(b.docs, causes, incident_id, symptoms, str(b.day))
