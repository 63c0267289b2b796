"""A mistake in a user's own environment module, named where it is, in one line.

Importing an own environment runs its code; a syntax error, or a tool whose parameter has no
type hint, raised there used to print 90 lines of traceback through importlib and workgym with
the one useful line last. This finds the line in the user's file (the innermost frame outside
Python's import machinery and workgym itself) and says `file:line: Kind: message`.
"""

from __future__ import annotations

import traceback
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parents[1]  # src/workgym


def _theirs(filename: str) -> bool:
    if filename.startswith("<"):
        return False
    path = Path(filename).resolve()
    return not path.is_relative_to(_PACKAGE) and "importlib" not in path.parts


def where(exc: BaseException) -> str:
    """`file:line` of the user's code the exception came from ('' when there is none)."""
    if isinstance(exc, SyntaxError) and exc.filename:
        return f"{exc.filename}:{exc.lineno}"
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if _theirs(f.filename)]
    return f"{frames[-1].filename}:{frames[-1].lineno}" if frames else ""


def describe(exc: BaseException) -> str:
    """`five.py:6: SyntaxError: invalid syntax (return "ok" +)`: where, what, and the line."""
    if isinstance(exc, SyntaxError):
        text = f"SyntaxError: {exc.msg}"
        if exc.text and exc.text.strip():
            text += f" ({exc.text.strip()})"
    else:
        text = f"{type(exc).__name__}: {exc}"
    place = where(exc)
    return f"{place}: {text}" if place else text
