"""The playbook: an ordered, immutable, content-hashed list of entries with a token budget.

Every change makes a new Playbook whose `parent` is the hash of the one it came from, so the
history is a chain anyone can walk. `render()` is the exact text the agent sees, and the saved
`playbook.md` is exactly that text, so `workgym eval --playbook playbook.md` gives the agent the
same system prompt that training tested. The metadata (provenance, counters, retired entries, the
chain of versions) lives beside it in `playbook.history.jsonl`.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from workgym.core.errors import ConfigError
from workgym.core.model import estimate_tokens
from workgym.core.tasks import canonical_json
from workgym.train.playbook.entries import (
    CITATION,
    DEFAULT_SECTIONS,
    Counters,
    Entry,
    EntryStatus,
    Provenance,
    entry_id,
)
from workgym.train.playbook.text import normalize

CITE_LINE = "Cite an entry's id in brackets, like [pb-001], when you follow it."
DEFAULT_TOKEN_BUDGET = 3000


class Playbook(BaseModel):
    model_config = ConfigDict(frozen=True)

    entries: tuple[Entry, ...] = ()
    sections: tuple[str, ...] = DEFAULT_SECTIONS
    token_budget: int = DEFAULT_TOKEN_BUDGET
    next_id: int = 1
    parent: str | None = None

    # -- identity ------------------------------------------------------------------------------

    @property
    def hash(self) -> str:
        """Content hash of everything but the parent link (counters and retired entries count)."""
        body = canonical_json(self.model_dump(mode="json", exclude={"parent"}))
        return hashlib.sha256(body.encode()).hexdigest()[:16]

    @property
    def render_hash(self) -> str:
        """Hash of what the agent sees; two versions that render alike behave alike."""
        return hashlib.sha256(self.render().encode()).hexdigest()[:16]

    # -- reading -------------------------------------------------------------------------------

    def get(self, entry: str) -> Entry:
        for e in self.entries:
            if e.id == entry:
                return e
        raise KeyError(f"no entry {entry!r} in this playbook")

    def has(self, entry: str) -> bool:
        return any(e.id == entry for e in self.entries)

    @property
    def live(self) -> tuple[Entry, ...]:
        """Entries that are rendered (active and candidate)."""
        return tuple(e for e in self.entries if e.rendered)

    def render(self) -> str:
        """The text rendered into the system prompt: deterministic, "" when nothing is live."""
        live = self.live
        if not live:
            return ""
        order = list(self.sections) + sorted({e.section for e in live} - set(self.sections))
        blocks = [CITE_LINE]
        for section in order:
            lines = [e.line() for e in live if e.section == section]
            if lines:
                blocks.append(f"### {section}\n" + "\n".join(lines))
        return "\n\n".join(blocks) + "\n"

    @property
    def tokens(self) -> int:
        return estimate_tokens(self.render())

    @property
    def over_budget(self) -> bool:
        return self.tokens > self.token_budget

    # -- making new versions -------------------------------------------------------------------

    def evolve(self, entries: Iterable[Entry], *, next_id: int | None = None) -> Playbook:
        """A new version with these entries; unchanged content returns self (no empty versions)."""
        new = Playbook(
            entries=tuple(entries),
            sections=self.sections,
            token_budget=self.token_budget,
            next_id=self.next_id if next_id is None else next_id,
            parent=self.hash,
        )
        return self if new.hash == self.hash else new

    def promote(self, gate: str | None = None) -> Playbook:
        """Candidates become active (they passed their gates); `gate` is added to provenance."""
        note = Provenance(gates=(gate,)) if gate else Provenance()
        return self.evolve(
            e.model_copy(update={"status": EntryStatus.active, "provenance": e.provenance + note})
            if e.status == EntryStatus.candidate
            else e
            for e in self.entries
        )

    def add_counters(self, updates: Mapping[str, Counters]) -> Playbook:
        return self.evolve(
            e.model_copy(update={"counters": e.counters + updates[e.id]}) if e.id in updates else e
            for e in self.entries
        )

    def retire(self, ids: Iterable[str], note: str) -> Playbook:
        wanted = set(ids)
        return self.evolve(
            e.model_copy(
                update={
                    "status": EntryStatus.retired,
                    "provenance": e.provenance + Provenance(notes=(note,)),
                }
            )
            if e.id in wanted and e.rendered
            else e
            for e in self.entries
        )


class PlaybookVersion(BaseModel):
    """One line of playbook.history.jsonl."""

    hash: str
    parent: str | None
    iteration: int
    reason: str
    playbook: Playbook


def parse_markdown(
    text: str, *, sections: Iterable[str] = DEFAULT_SECTIONS, token_budget: int | None = None
) -> Playbook:
    """A playbook from its rendered markdown, or from a hand-written seed file.

    `### section` (or `## section`) starts a section; `- [pb-012] text` keeps its id and `- text`
    gets a new one; an indented or plain line continues the entry above it.
    """
    known = list(sections)
    items: list[tuple[str | None, str, list[str]]] = []  # (id, section, text lines)
    section: str | None = None
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line == CITE_LINE:
            continue
        if line.startswith("#"):
            section = line.lstrip("#").strip().lower()
            if not section:
                raise ConfigError(f"playbook line {lineno}: empty section header")
            if section not in known:
                known.append(section)
            continue
        if line.startswith(("- ", "* ")):
            if section is None:
                raise ConfigError(
                    f"playbook line {lineno}: entry before any section; "
                    "start the file with a '### strategy' header"
                )
            body = line[2:].strip()
            match = CITATION.match(body)
            ident = match.group(1) if match else None
            items.append((ident, section, [body[match.end() :] if match else body]))
        elif items:
            items[-1][2].append(line)
        else:
            raise ConfigError(f"playbook line {lineno}: {line[:40]!r} is not an entry ('- text')")
    taken = [int(i.removeprefix("pb-")) for i, _, _ in items if i]
    if len(taken) != len(set(taken)):
        raise ConfigError("playbook file uses one entry id twice; ids must be unique")
    number = max(taken, default=0) + 1
    entries = []
    for ident, sec, lines in items:
        if ident is None:
            ident, number = entry_id(number), number + 1
        body = normalize(" ".join(lines))
        if not body:
            raise ConfigError(f"playbook entry {ident} is empty")
        entries.append(
            Entry(id=ident, section=sec, text=body, provenance=Provenance(notes=("seed file",)))
        )
    return Playbook(
        entries=tuple(entries),
        sections=tuple(known),
        token_budget=token_budget or DEFAULT_TOKEN_BUDGET,
        next_id=number,
    )


def history_path(md_path: str | Path) -> Path:
    path = Path(md_path)
    return path.with_name(path.stem + ".history.jsonl")


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def save_playbook(
    playbook: Playbook, md_path: str | Path, history: Iterable[PlaybookVersion] = ()
) -> Path:
    """Write the rendered playbook and, beside it, its history (every version, one a line)."""
    path = Path(md_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    versions = list(history)
    if not any(v.hash == playbook.hash for v in versions):
        versions.append(
            PlaybookVersion(
                hash=playbook.hash,
                parent=playbook.parent,
                iteration=-1,
                reason="saved",
                playbook=playbook,
            )
        )
    _atomic_write(history_path(path), "".join(v.model_dump_json() + "\n" for v in versions))
    _atomic_write(path, playbook.render())
    return path


def load_playbook(
    md_path: str | Path,
    *,
    sections: Iterable[str] = DEFAULT_SECTIONS,
    token_budget: int | None = None,
) -> Playbook:
    """The playbook a markdown file shows: its full record from the history beside it when the
    text matches a saved version, otherwise parsed from the text (a hand-written seed)."""
    path = Path(md_path)
    if not path.exists():
        raise ConfigError(f"no playbook file {path}; pass the playbook.md a training run wrote")
    text = path.read_text(encoding="utf-8")
    hist = history_path(path)
    if hist.exists():
        for line in reversed(hist.read_text(encoding="utf-8").splitlines()):
            if not line.strip():
                continue
            try:
                version = PlaybookVersion.model_validate(json.loads(line))
            except ValueError as exc:
                raise ConfigError(f"{hist} is corrupt ({exc}); delete it to load {path}") from exc
            if version.playbook.render() == text:
                return version.playbook
    return parse_markdown(text, sections=sections, token_budget=token_budget)
