"""The probe catalog: every probe of docs/guards.md, by group, plus any installed package's own.

The catalog is the `workgym.probes` entry-point group: workgym declares its groups of probes
(generic, harness, calls, state, results, statements, investigation, found) in its
pyproject.toml, and a package that ships an environment ships the probes of its kind the same
way, without workgym knowing it exists. Each entry point names a `Probe`, a `Probe` class, a
list of probes, or a function returning them.

`probes()` is what `workgym attack` runs; `todo()` lists probes waiting for an environment kind
that does not exist yet (reported, never faked; empty since every kind of docs/guards.md has an
environment). `attackers()` makes each probe's attacker the test double
`scripted/probe-<name>` (the `probe-*` family of the `workgym.scripted` entry points), so a
probe can be replayed as an ordinary run:
`workgym eval ENV --model scripted/probe-<name> --split dev`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from workgym.core.errors import ConfigError
from workgym.core.registry import OWN_DISTRIBUTION, Entry, Registry
from workgym.core.task_aware import TaskAwareModel
from workgym.guards.probes import Probe, TodoProbe

PROBES: Registry[object] = Registry(
    "probe set",
    "workgym.probes",
    hint="declare your probes in the `workgym.probes` entry-point group of your package",
)

# workgym's own entries run first, generic first, in this order; other packages' after them,
# by name.
BUILTIN_ORDER = (
    "generic",
    "harness",
    "calls",
    "state",
    "results",
    "statements",
    "investigation",
    "found",
)

TODO: list[TodoProbe] = []


def _rank(entry: Entry[object]) -> tuple[int, int, str]:
    if entry.distribution == OWN_DISTRIBUTION and entry.name in BUILTIN_ORDER:
        return (0, BUILTIN_ORDER.index(entry.name), entry.name)
    return (1, 0, entry.name)


def _as_probes(entry: Entry[object]) -> list[Probe]:
    """What one entry point names, as probe instances; anything else is a one-line error."""
    obj = entry.load()
    if callable(obj) and not isinstance(obj, Probe):  # a Probe class, or a function
        obj = obj()
    items = [obj] if isinstance(obj, Probe) else obj
    if isinstance(items, Iterable) and not isinstance(items, str | bytes):
        found = list(items)
        if all(isinstance(p, Probe) for p in found):
            return found
    raise ConfigError(
        f"probe entry point {entry.name!r} ({entry.source}) names no probes; point it at a "
        "Probe, a Probe class, a list of probes, or a function returning them"
    )


def probes() -> list[Probe]:
    """Every runnable probe, workgym's generic ones first (probes hold no state)."""
    stale = PROBES.stale_install()
    if stale:
        raise ConfigError(f"no probe catalog: {stale}")
    found: list[Probe] = []
    for entry in sorted(PROBES.entries().values(), key=_rank):
        found += _as_probes(entry)
    names = [p.name for p in found]
    dupes = {n for n in names if names.count(n) > 1}
    if dupes:
        raise ConfigError(
            f"probe names must be unique; duplicated: {sorted(dupes)} (rename the probe in the "
            "package that added it)"
        )
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
