"""One playbook for a whole team, a section per role: what each role's agent gets to read.

A team's policy holds one playbook (rendered markdown, as the playbook trainer writes it). A
section whose name is one of the team's roles ("### planner") is that role's alone; every other
section ("### strategy", "### tools", ...) and any text before the first section is shared. So a
playbook trained for one agent works unchanged for a team, and training a team with the role names
among its sections (`TrainConfig(sections=Roles(...).sections())`) lets lessons reach one role.
"""

from __future__ import annotations

from collections.abc import Sequence

from workgym.run.policy import PLAYBOOK_HEADER

CITE_PREFIX = "Cite an entry's id"  # the playbook's own first line (train.playbook.playbook)


def _header(line: str) -> str | None:
    stripped = line.strip()
    if stripped.startswith("#") and not stripped.startswith(PLAYBOOK_HEADER):
        name = stripped.lstrip("#").strip().lower()
        return name or None
    return None


def split_sections(playbook: str) -> tuple[list[str], list[tuple[str, list[str]]]]:
    """The lines before the first section header, and each (section name, lines incl. header)."""
    preamble: list[str] = []
    sections: list[tuple[str, list[str]]] = []
    for line in playbook.splitlines():
        name = _header(line)
        if name is not None:
            sections.append((name, [line]))
        elif sections:
            sections[-1][1].append(line)
        else:
            preamble.append(line)
    return preamble, sections


def role_view(playbook: str | None, role: str, roles: Sequence[str]) -> str | None:
    """The part of `playbook` that `role` reads: shared sections and its own, in their order.

    None when nothing but the citation line would be left, so the agent gets no empty playbook.
    """
    if not playbook:
        return playbook
    others = {r.lower() for r in roles} - {role.lower()}
    preamble, sections = split_sections(playbook)
    kept = [lines for name, lines in sections if name not in others]
    if len(kept) == len(sections):
        return playbook  # nothing is another role's: the text as written, byte for byte
    body = [line for lines in kept for line in lines]
    has_entries = any(line.strip() for line in body) or any(
        line.strip() and not line.strip().startswith(CITE_PREFIX) for line in preamble
    )
    if not has_entries:
        return None
    text = "\n".join([*preamble, *body]).strip("\n")
    return text + "\n"
