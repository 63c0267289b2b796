"""One typed registry per kind of plugin: name -> a lazily imported object.

Environments, model providers, scripted test doubles, CLI command groups, trainers and executors
are all found the same way: entry points declared in an installed distribution's metadata
(workgym's own pyproject.toml declares the built-ins, a user's package declares its own), plus
objects registered in this process (`@wg.register`). Nothing is imported until a name is asked
for, so listing the names (`workgym --help`, `workgym envs`) costs one scan of the installed
metadata, shared by every registry and cached for the process.

A name ending in `*` declares a family: its object is a function returning `{name: object}` for
every name it provides (the probes' attackers, one per probe), loaded only when a name with that
prefix is asked for.
"""

from __future__ import annotations

import difflib
import functools
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from importlib.metadata import EntryPoint, EntryPoints, entry_points
from typing import Generic, TypeVar, cast

from workgym.core.errors import ConfigError

T = TypeVar("T")

OWN_DISTRIBUTION = "workgym"


@functools.cache
def _scan() -> EntryPoints:
    """Every entry point of every installed distribution (one metadata scan per process)."""
    # Python 3.11 returns a dict-like SelectableGroups here, 3.12 an EntryPoints; both `select`.
    return cast(EntryPoints, entry_points())


def rescan() -> None:
    """Forget the cached scan (after installing a distribution in this process; tests)."""
    _scan.cache_clear()


@dataclass(frozen=True)
class Entry(Generic[T]):
    """One registered name: where its object comes from and how to import it."""

    name: str
    source: str
    """`module:attribute` for an entry point or an in-process class; `process` otherwise."""
    distribution: str | None
    """The distribution that declared it, or None when registered in this process."""
    loader: Callable[[], T]

    def load(self) -> T:
        return self.loader()


def _entry_point_loader(ep: EntryPoint, kind: str) -> Callable[[], object]:
    def load() -> object:
        try:
            return ep.load()
        except ConfigError:  # a MissingExtra (core/missing_extra.py): it already names the extra
            raise
        except ImportError as exc:
            raise ConfigError(
                f"{kind} {ep.name!r} ({ep.value}) cannot be imported ({exc}); install the extra "
                "or package it needs"
            ) from exc
        except AttributeError as exc:
            raise ConfigError(
                f"{kind} {ep.name!r}: entry point {ep.value} names nothing importable ({exc}); "
                "fix the entry point in its package's pyproject.toml and reinstall it"
            ) from exc

    return load


def _member(members: Mapping[str, T], name: str) -> T:
    return members[name]


class Registry(Generic[T]):
    """Names of one kind (`environment`, `model provider`, ...) fed by one entry-point group."""

    def __init__(self, kind: str, group: str, *, hint: str = "") -> None:
        self.kind = kind
        self.group = group
        self.hint = hint
        self._process: dict[str, Entry[T]] = {}
        self._seen: tuple[EntryPoints, list[Entry[T]]] | None = None  # this group of one scan

    # -- registration ------------------------------------------------------------------------

    def add(self, name: str, obj: T, *, source: str = "process") -> T:
        """Register `obj` under `name` in this process; it wins over an entry point's name."""
        self._process[name] = Entry(name, source, None, lambda: obj)
        return obj

    # -- lookup ------------------------------------------------------------------------------

    def declared(self) -> list[Entry[T]]:
        """The entries installed distributions declare (entry points; not in-process ones)."""
        scan = _scan()
        if self._seen is not None and self._seen[0] is scan:
            return self._seen[1]
        found = []
        for ep in scan.select(group=self.group):
            dist = ep.dist.name if ep.dist is not None else None
            loader = cast(Callable[[], T], _entry_point_loader(ep, self.kind))
            found.append(Entry(ep.name, ep.value, dist, loader))
        self._seen = (scan, found)
        return found

    def entries(self) -> dict[str, Entry[T]]:
        """Every declared name, families unexpanded; in-process ones override entry points."""
        found: dict[str, Entry[T]] = {}
        for entry in self.declared():
            found.setdefault(entry.name, entry)
        found.update(self._process)
        return dict(sorted(found.items()))

    def names(self, *, expand: bool = False) -> list[str]:
        """The registered names; `expand` loads every family to list its members too (a family
        that cannot be imported keeps its `prefix-*` name)."""
        names = list(self.entries())
        if expand:
            for family in self._families():
                try:
                    members = self._members(family)
                except ConfigError:
                    continue
                names.remove(family.name)
                names.extend(members)
        return sorted(set(names))

    def _families(self) -> Iterator[Entry[T]]:
        return (e for n, e in self.entries().items() if n.endswith("*"))

    def _members(self, family: Entry[T]) -> Mapping[str, T]:
        members = cast(Callable[[], Mapping[str, T]], family.load())()
        return members

    def get(self, name: str) -> Entry[T] | None:
        """The entry for `name` (a family member included), or None."""
        entries = self.entries()
        if name in entries and not name.endswith("*"):
            return entries[name]
        for family in self._families():
            if name.startswith(family.name[:-1]):
                members = self._members(family)
                if name in members:
                    loader = functools.partial(_member, members, name)
                    return Entry(name, family.source, family.distribution, loader)
        return None

    def load(self, name: str) -> T:
        """The object registered as `name`; an unknown name says what was meant."""
        entry = self.get(name)
        if entry is None:
            raise ConfigError(self.unknown(name))
        return entry.load()

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None

    def sources(self) -> set[str]:
        """The `module:attribute` of every entry point and in-process class of this kind."""
        return {e.source for e in self.entries().values() if e.source != "process"}

    def unknown(self, name: str) -> str:
        """The one-line error for a name nobody registered: the closest names, and where the
        known ones are listed."""
        known = self.names(expand=True)
        close = difflib.get_close_matches(name, known, n=3, cutoff=0.6)
        message = f"unknown {self.kind} {name!r}"
        if close:
            message += f"; did you mean {' or '.join(repr(c) for c in close)}?"
        elif known and len(known) <= 12:
            message += f"; known: {', '.join(known)}"
        if self.hint:
            message += f" ({self.hint})"
        stale = self.stale_install()
        return f"{message}; {stale}" if stale else message

    def stale_install(self) -> str:
        """What to do when workgym's own metadata declares nothing in this group (an editable
        install older than its pyproject.toml), or '' when it does."""
        if any(e.distribution == OWN_DISTRIBUTION for e in self.declared()):
            return ""
        return (
            f"workgym's install declares no {self.group} entry points (its metadata is older "
            "than its pyproject.toml): re-run `pip install -e .` in the checkout"
        )
