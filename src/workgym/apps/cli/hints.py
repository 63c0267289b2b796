"""`next:` hints built from the command that was actually run, so that each one, pasted into a
plain shell, runs: `workgym` as this terminal types it (its path when the venv is not on PATH),
every argument quoted for the shell, and the `--import` modules the command was given (a hint
that dropped them failed on the user's own environment).

A hint names only things that exist: a placeholder such as `openai/<model>` is a redirect to a
shell, so where the user must choose something the hint uses a model that is installed and
says in words what to swap in.
"""

from __future__ import annotations

import shlex
import shutil
import sys
from pathlib import Path


def workgym_command() -> str:
    """How to type `workgym` in this terminal: the bare name when it is on PATH and is this
    installation, else its path (relative to the working directory when it is inside it)."""
    here = Path(sys.executable).parent / "workgym"
    found = shutil.which("workgym")
    if found is not None and Path(found).resolve() == here.resolve():
        return "workgym"
    try:
        return str(here.relative_to(Path.cwd()))
    except ValueError:
        return str(here)


def command(*argv: str | Path, imports: list[str] | None = None) -> str:
    """`workgym ARGV... --import M ...`, each part quoted for a POSIX shell."""
    parts = [str(a) for a in argv]
    for module in imports or []:
        parts += ["--import", module]
    head = workgym_command()
    return " ".join([shlex.quote(head), *(shlex.quote(p) for p in parts)])


def next_line(*argv: str | Path, imports: list[str] | None = None, note: str = "") -> str:
    """`next: <command>` and, after two spaces and a `#`, what to change in it (a comment, so
    the whole line still pastes)."""
    return f"next: {command(*argv, imports=imports)}" + (f"  # {note}" if note else "")
