"""What can go wrong in the document store's small system: components, causes and their traces.

The system is eight services and two external vendors with fixed dependencies, so a cause in one
component shows up as a symptom in a component that depends on it — the downstream symptom is
the tempting wrong answer. Each cause type leaves a characteristic trace (a change record, log
lines, a vendor status page, a certificate inventory entry); the generator plants exactly those,
and the verifier accepts the declared aliases of each cause type.
"""

from __future__ import annotations

from workgym.verifiers.conclusion_docs import NORMAL, CauseVocabulary

VOCABULARY = CauseVocabulary(
    causes={
        "deploy_regression": ["bad deploy", "faulty deploy", "code regression", "bad release"],
        "config_change": ["misconfiguration", "bad config", "configuration change"],
        "capacity_exhaustion": ["resource exhaustion", "out of capacity", "resource saturation"],
        "dependency_outage": ["upstream outage", "third-party outage", "vendor outage"],
        "expired_certificate": ["certificate expiry", "cert expiry", "expired cert"],
        "data_migration": ["schema migration", "database migration", "bad migration"],
        NORMAL: ["no incident", "noise", "normal fluctuation"],
    }
)
PLANTABLE = [c for c in VOCABULARY.causes if c != NORMAL]

# component -> the components it calls (its dependencies)
DEPENDS_ON: dict[str, list[str]] = {
    "checkout-api": ["payments-db", "auth-service", "inventory-service", "stripe"],
    "payments-db": [],
    "auth-service": [],
    "inventory-service": ["order-queue"],
    "search-indexer": ["inventory-service"],
    "order-queue": [],
    "notification-worker": ["order-queue", "sendgrid"],
    "cdn-edge": ["search-indexer"],
}
INTERNAL = list(DEPENDS_ON)
VENDORS = {"stripe": "api.stripe.com", "sendgrid": "api.sendgrid.com"}

# cause type -> components it can be planted in
WHERE: dict[str, list[str]] = {
    "deploy_regression": ["auth-service", "inventory-service", "search-indexer", "order-queue"],
    "config_change": ["auth-service", "inventory-service", "order-queue", "payments-db"],
    "capacity_exhaustion": ["payments-db", "order-queue", "search-indexer", "inventory-service"],
    "dependency_outage": ["stripe", "sendgrid"],
    "expired_certificate": ["auth-service", "inventory-service", "payments-db", "order-queue"],
    "data_migration": ["payments-db", "inventory-service"],
}

METRICS = {
    "up": ["error rate", "p99 latency", "5xx responses"],
    "down": ["successful requests", "throughput", "completed orders"],
}


def downstream(component: str) -> list[str]:
    """Components that call `component` (where its failure shows up)."""
    return [c for c, deps in DEPENDS_ON.items() if component in deps]


def host(component: str) -> str:
    return VENDORS.get(component, f"{component}.internal")


CONFIG_KEYS = {
    "auth-service": ("token_cache.ttl_seconds", "3600", "5"),
    "inventory-service": ("db.pool.max_connections", "200", "8"),
    "order-queue": ("consumer.max_in_flight", "500", "1"),
    "payments-db": ("max_connections", "400", "20"),
}
CAPACITY_LINES = {
    "payments-db": (
        "WARN disk usage {p}% on /var/lib/db",
        "ERROR could not extend file: No space left on device",
    ),
    "order-queue": (
        "WARN queue depth {p}00 messages, consumers lagging",
        "ERROR broker memory high watermark reached; publishers blocked",
    ),
    "search-indexer": (
        "WARN heap usage {p}%",
        "ERROR java.lang.OutOfMemoryError: Java heap space; worker restarted (OOMKilled)",
    ),
    "inventory-service": (
        "WARN worker pool {p}% busy",
        "ERROR worker pool exhausted; request rejected (503)",
    ),
}
EXCEPTIONS = ("NullPointerException", "KeyError: 'sku'", "IndexOutOfBoundsException", "TypeError")
RUNBOOKS = {
    "deploy_regression": "Roll back a bad deploy: compare the deploy time in the changelog with "
    "the first errors in the service log; if they line up, roll back to the previous version.",
    "config_change": "Configuration changes: every config push is a changelog entry. Errors that "
    "name a limit or setting right after a push point at the push; revert the key.",
    "capacity_exhaustion": "Capacity: disk, memory, connection and queue limits. Look for usage "
    "warnings climbing to errors (no space left, OOMKilled, pool exhausted) without any change.",
    "dependency_outage": "Third-party outages: check the vendor status pages and our timeouts "
    "calling the vendor. Nothing to roll back; fail over or wait.",
    "expired_certificate": "Certificates: x509 'certificate has expired' errors in callers mean "
    "the callee's certificate lapsed; the certificate inventory lists every notAfter date.",
    "data_migration": "Schema migrations lock tables. Lock wait timeouts after a migration starts "
    "point at the migration; pause it.",
    NORMAL: "Not every alert is an incident. If no change, capacity limit, outage, certificate or "
    "migration lines up with a small blip inside the usual weekly range, it is normal variation.",
}
NOISE = (
    "INFO GET /healthz 200 2ms",
    "INFO processed batch of {n} events",
    "WARN slow request {ms}ms on /internal/sync",
    "WARN retrying request (attempt 2/3)",
    "INFO cache hit ratio {p}%",
    "INFO config checksum unchanged",
    "ERROR client disconnected before response was sent",
)
