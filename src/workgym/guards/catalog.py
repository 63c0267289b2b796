"""The probe catalog: every probe of docs/guards.md, by group, plus the entries that cannot run yet.

`probes()` is what `workgym attack` runs; `todo()` lists probes waiting for an environment kind
that does not exist yet (reported, never faked; empty since every kind of docs/guards.md has an
environment). `attackers()` makes each probe's attacker
the test double `scripted/probe-<name>` (the `probe-*` family of the `workgym.scripted` entry
points), so a probe can be replayed as an ordinary run:
`workgym eval ENV --model scripted/probe-<name> --split dev`.
"""

from __future__ import annotations

from collections.abc import Callable

from workgym.core.task_aware import TaskAwareModel
from workgym.guards.catalog_calls import CALLS
from workgym.guards.catalog_generic import GENERIC
from workgym.guards.catalog_harness import HARNESS
from workgym.guards.catalog_investigation import INVESTIGATION
from workgym.guards.catalog_sql import RESULTS
from workgym.guards.catalog_sqltext import STATEMENTS
from workgym.guards.catalog_state import STATE_PROBES
from workgym.guards.probes import Probe, TodoProbe

TODO: list[TodoProbe] = []


def probes() -> list[Probe]:
    """Every runnable probe, generic first (fresh instances; probes hold no state)."""
    found: list[Probe] = [
        *GENERIC,
        *HARNESS,
        *CALLS,
        *STATE_PROBES,
        *RESULTS,
        *STATEMENTS,
        *INVESTIGATION,
    ]
    from workgym.guards.found import FOUND

    found += FOUND
    names = [p.name for p in found]
    dupes = {n for n in names if names.count(n) > 1}
    if dupes:
        raise RuntimeError(f"probe names must be unique; duplicated: {sorted(dupes)}")
    return found


def todo() -> list[TodoProbe]:
    """Catalog entries waiting for an environment kind that does not exist yet (none today:
    kept so that a future docs/guards.md probe can be listed before it can run)."""
    return list(TODO)


def by_name(names: list[str] | None = None) -> list[Probe]:
    """The named probes (all when `names` is empty); an unknown name is an error."""
    everything = probes()
    if not names:
        return everything
    known = {p.name: p for p in everything}
    missing = [n for n in names if n not in known]
    if missing:
        raise ValueError(
            f"unknown probe(s) {', '.join(missing)}; `workgym attack --list` names them all"
        )
    return [known[n] for n in names]


def attackers() -> dict[str, Callable[[], TaskAwareModel]]:
    """Every probe's attacker as a `scripted/probe-<name>` test double factory."""
    return {f"probe-{p.name}": _factory(p) for p in probes() if p.attacker() is not None}


def _factory(probe: Probe) -> Callable[[], TaskAwareModel]:
    def make() -> TaskAwareModel:
        model = probe.attacker()
        if model is None:
            raise RuntimeError(f"probe {probe.name} has no attacker")
        return model

    return make
