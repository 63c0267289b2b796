"""One-line errors for a mistyped choice (a split, a suite, a probe), with a suggestion.

A newcomer who types `--split tst` should read "did you mean 'test'?", not a traceback or a list
of seventy names. Every command that takes a name from a fixed set checks it here, so the
wording is the same everywhere.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from workgym.core.errors import ConfigError

SHOWN = 8  # list the choices in the message when there are at most this many


class UnknownChoiceError(ConfigError, ValueError):
    """A name outside its fixed set; a ValueError too, for callers that caught that before."""


def suggestion(value: str, options: Iterable[str]) -> str | None:
    """The closest option to `value`, when one is close enough to be a likely typo."""
    found = difflib.get_close_matches(value, list(options), n=1, cutoff=0.6)
    return found[0] if found else None


def unknown(kind: str, value: str, options: Iterable[str], listing: str = "") -> str:
    """The message for an unknown `kind` (e.g. "split"): a suggestion, then the choices or where
    to list them (`listing`, e.g. "`workgym envs`") when there are too many to print."""
    names = list(options)
    close = suggestion(value, names)
    head = f"unknown {kind} {value!r}" + (f": did you mean {close!r}?" if close else "")
    if len(names) <= SHOWN or not listing:
        return f"{head} (choose one of {', '.join(names)})"
    return f"{head} ({listing} lists all {len(names)})"


def choose(kind: str, value: str, options: Iterable[str], listing: str = "") -> str:
    """`value` when it is one of `options`, else an UnknownChoiceError saying what to type."""
    names = list(options)
    if value in names:
        return value
    raise UnknownChoiceError(unknown(kind, value, names, listing))
