"""The documents every case has besides the planted trace: vendor status pages, the certificate
inventory, the weekly metrics report, runbooks and postmortems of older incidents.

They are where an investigator checks a hypothesis (is the vendor down? did a certificate
lapse? is this blip within the usual range?), and they are also distractors: runbooks name every
cause type and old postmortems name real causes of other incidents.
"""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass

from workgym.envs.docstore.causes import (
    INTERNAL,
    PLANTABLE,
    RUNBOOKS,
    VENDORS,
    WHERE,
    downstream,
    host,
)
from workgym.envs.docstore.records import AddDoc, DocIds, Plan, iso

METRICS_REPORT = (
    "p99 latency and error rates per service vary by up to 10% day to day; checkout-api p99 "
    "180-260 ms, search-indexer p99 40-70 ms, notification-worker p99 900-1400 ms. Blips under "
    "15 minutes and within this range are normal."
)


@dataclass
class Refs:
    status: dict[str, str]  # vendor -> status page id
    certificates: str
    metrics: str


def background_docs(
    rng: random.Random, ids: DocIds, day: dt.date, plans: list[Plan], add: AddDoc
) -> Refs:
    outages = {p.component: p for p in plans if p.cause == "dependency_outage"}
    lapsed = {host(p.component or ""): p.onset for p in plans if p.cause == "expired_certificate"}
    status = {}
    for vendor, vendor_host in VENDORS.items():
        o = outages.get(vendor)
        body = (
            f"{vendor} status for {day}: Degraded. Elevated API error rates and timeouts on "
            f"{vendor_host} from {iso(o.onset)} to {iso(o.end)}. Resolved."
            if o
            else f"{vendor} status for {day}: All systems operational. No incidents reported."
        )
        status[vendor] = add(ids.new("STAT"), "status", f"{vendor} status page {day}", body)
    rows = []
    for service in INTERNAL:
        h = host(service)
        expiry = lapsed.get(h, dt.datetime(2025, rng.randrange(1, 13), 15, tzinfo=dt.UTC))
        rows.append(f"{h}  notAfter={iso(expiry)}  issuer=internal-ca")
    certificates = add(ids.new("CERT"), "inventory", "TLS certificate inventory", "\n".join(rows))
    metrics = add(
        ids.new("MET"), "metrics", f"Weekly service health, week of {day}", METRICS_REPORT
    )
    for cause, text in RUNBOOKS.items():
        add(ids.new("RB"), "runbook", f"Runbook: {cause.replace('_', ' ')}", text, "2024-01-02")
    for _ in range(3):
        old = rng.choice(PLANTABLE)
        where = rng.choice(WHERE[old])
        past = day - dt.timedelta(days=rng.randrange(20, 300))
        symptom = rng.choice(downstream(where))
        body = (
            f"Postmortem for an incident on {past}: {symptom} errors. Root cause: "
            f"{old.replace('_', ' ')} in {where}. Resolved the same day."
        )
        add(ids.new("PM"), "postmortem", f"Postmortem {past}", body, str(past))
    return Refs(status=status, certificates=certificates, metrics=metrics)
