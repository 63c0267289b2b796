"""Every documentation file a module of workgym names exists in the repository.

Docstrings and comments say where the reasoning lives; a pointer at a file that is not in the
checkout (a design note kept elsewhere) sends a reader nowhere.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "workgym"

DOCS_PATH = re.compile(r"\bdocs/[A-Za-z0-9_./-]*[A-Za-z0-9_]")
# design notes by an upper-case name (GUARDS.md) or under a design folder outside the repository
OUTSIDE = re.compile(r"\b[A-Z][A-Z_]{2,}\.md\b|\bshared/design\b")
ALLOWED_UPPER = {"README.md"}


def _pointers() -> list[tuple[str, str]]:
    found = []
    for module in sorted(SRC.rglob("*.py")):
        text = module.read_text(encoding="utf-8")
        for match in DOCS_PATH.finditer(text):
            found.append((str(module.relative_to(ROOT)), match.group(0).rstrip(".")))
    return found


def _exists(pointer: str) -> bool:
    path = ROOT / pointer
    if path.exists():
        return True
    # `docs/decisions/0070` names a decision by its number
    return path.parent.is_dir() and any(
        p.name.startswith(path.name + "-") for p in path.parent.iterdir()
    )


def test_every_docs_path_named_in_the_source_exists() -> None:
    pointers = _pointers()
    assert len(pointers) > 40  # the scan finds the pointers (docs/guards.md alone is named ~25x)
    missing = [f"{module}: {pointer}" for module, pointer in pointers if not _exists(pointer)]
    assert missing == []


def test_no_pointer_at_a_design_note_outside_the_repository() -> None:
    outside = []
    for module in sorted(SRC.rglob("*.py")):
        for match in OUTSIDE.finditer(module.read_text(encoding="utf-8")):
            if match.group(0) not in ALLOWED_UPPER:
                outside.append(f"{module.relative_to(ROOT)}: {match.group(0)}")
    assert outside == []
