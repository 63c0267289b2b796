"""Declared normalisers: how one parameter or field is compared, chosen once and written down.

Every published tool-call scorer we studied compares strings after stripping punctuation, which
makes "1.5" equal "15" and "2024-03-05" equal "20240305". Here each parameter has exactly one
declared normaliser, and none of them removes characters that carry meaning: dates are parsed,
numbers are compared as numbers, identifiers keep their punctuation, and invisible or look-alike
characters are never folded away (a homoglyph is a different entity).
"""

from __future__ import annotations

import datetime as dt
import math
import re
import unicodedata
from typing import Any, Literal

Normaliser = Literal["exact", "casefold", "upper", "date", "number"]
NORMALISERS: tuple[Normaliser, ...] = ("exact", "casefold", "upper", "date", "number")

# Unambiguous spellings of a calendar date. Numeric day/month orders (03/04/2024) are refused:
# they mean different dates in different countries, so accepting one reading would be a guess.
_DATE_FORMATS = ("%Y-%m-%d", "%d %B %Y", "%d %b %Y", "%B %d, %Y", "%b %d, %Y", "%B %d %Y")
_SPACES = re.compile(r"\s+")


def json_kind(value: Any) -> str:
    """The JSON type of a value; bool is never an integer here."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def parse_date(value: Any) -> dt.date | None:
    """A calendar date from an unambiguous spelling, or None."""
    if not isinstance(value, str):
        return None
    text = _SPACES.sub(" ", value.strip())
    text = re.sub(r"(\d)(st|nd|rd|th)\b", r"\1", text)  # "3rd March 2024"
    for fmt in _DATE_FORMATS:
        try:
            return dt.datetime.strptime(text, fmt).date()
        except ValueError:
            continue
    return None


def _text(value: str) -> str:
    return _SPACES.sub(" ", unicodedata.normalize("NFC", value).strip())


def exact_equal(a: Any, b: Any) -> bool:
    """Structural equality that keeps JSON kinds apart (True is not 1, "5" is not 5)."""
    if json_kind(a) != json_kind(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(exact_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(exact_equal(a[k], b[k]) for k in a)
    return bool(a == b)


def matches(kind: Normaliser, expected: Any, got: Any) -> bool:
    """Whether `got` is the same value as `expected` under the declared normaliser."""
    if kind == "exact":
        return exact_equal(expected, got)
    if kind in ("casefold", "upper"):
        if not isinstance(expected, str) or not isinstance(got, str):
            return exact_equal(expected, got)
        if kind == "casefold":
            return _text(expected).casefold() == _text(got).casefold()
        return _text(expected).upper() == _text(got).upper()
    if kind == "date":
        want, have = parse_date(expected), parse_date(got)
        return want is not None and want == have
    if kind == "number":
        numeric = ("integer", "number")
        if json_kind(expected) not in numeric or json_kind(got) not in numeric:
            return exact_equal(expected, got)
        a, b = float(expected), float(got)
        if not (math.isfinite(a) and math.isfinite(b)):
            return a == b
        return abs(a - b) <= max(1e-9, 1e-6 * max(abs(a), abs(b)))
    raise ValueError(f"unknown normaliser {kind!r}; declare one of {', '.join(NORMALISERS)}")
