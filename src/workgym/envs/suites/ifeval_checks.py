"""Verifiable instructions: what each constraint asks, and the function that checks it.

Modelled on the IFEval catalogue (Zhou et al., 2023), re-implemented so that each checker's
semantics are declared here and tested on crafted replies. Every checker is strict and
deterministic, and an empty reply fails every constraint (otherwise "use no commas" or "at most
50 words" would pay for saying nothing).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

Constraint = dict[str, Any]
Checker = Callable[[str, Constraint], tuple[bool, str]]

_WORD = re.compile(r"\b\w+\b")
_DIVIDER = re.compile(r"\*\s*\*\s*\*")  # a line holding only the markdown divider ***


def words(text: str) -> list[str]:
    return _WORD.findall(text)


def _has(text: str, word: str) -> int:
    return len(re.findall(rf"\b{re.escape(word)}\b", text, re.IGNORECASE))


def _json_body(text: str) -> str:
    body = text.strip()
    body = re.sub(r"^```(?:json|JSON)?\s*", "", body)
    return re.sub(r"\s*```$", "", body)


def bullet_lines(text: str) -> list[str]:
    """Markdown bullets: lines starting with '* ' or '- ' (a *** divider is not a bullet)."""
    return [ln for ln in text.splitlines() if re.match(r"^\s*[*-]\s+\S", ln)]


def _words_at_least(text: str, c: Constraint) -> tuple[bool, str]:
    n = len(words(text))
    return n >= c["n"], f"{n} words (need at least {c['n']})"


def _words_at_most(text: str, c: Constraint) -> tuple[bool, str]:
    n = len(words(text))
    return 0 < n <= c["n"], f"{n} words (need 1 to {c['n']})"


def _include_keywords(text: str, c: Constraint) -> tuple[bool, str]:
    missing = [w for w in c["words"] if not _has(text, w)]
    return not missing, f"missing keywords: {missing}" if missing else "all keywords present"


def _exclude_word(text: str, c: Constraint) -> tuple[bool, str]:
    n = _has(text, c["word"])
    return n == 0, f"forbidden word {c['word']!r} used {n} times"


def _keyword_frequency(text: str, c: Constraint) -> tuple[bool, str]:
    n = _has(text, c["word"])
    return n >= c["n"], f"{c['word']!r} appears {n} times (need at least {c['n']})"


def _json_format(text: str, c: Constraint) -> tuple[bool, str]:
    try:
        value = json.loads(_json_body(text))
    except json.JSONDecodeError as exc:
        return False, f"not valid JSON ({exc.msg})"
    ok = isinstance(value, dict | list)
    return ok, "valid JSON" if ok else "JSON but not an object or array"


def _bullets(text: str, c: Constraint) -> tuple[bool, str]:
    n = len(bullet_lines(text))
    return n == c["n"], f"{n} bullet points (need exactly {c['n']})"


def _letters(text: str) -> bool:
    return any(ch.isalpha() for ch in text)


def _lowercase(text: str, c: Constraint) -> tuple[bool, str]:
    return _letters(text) and text == text.lower(), "capital letters found or no letters"


def _uppercase(text: str, c: Constraint) -> tuple[bool, str]:
    return _letters(text) and text == text.upper(), "lowercase letters found or no letters"


def _no_commas(text: str, c: Constraint) -> tuple[bool, str]:
    return "," not in text, f"{text.count(',')} commas"


def _end_with(text: str, c: Constraint) -> tuple[bool, str]:
    tail = text.strip().strip('"').lower()
    return tail.endswith(c["phrase"].lower()), f"does not end with {c['phrase']!r}"


def _title(text: str, c: Constraint) -> tuple[bool, str]:
    return bool(re.search(r"<<[^\n<>]*\w[^\n<>]*>>", text)), "no <<title>>"


def _paragraphs(text: str, c: Constraint) -> tuple[bool, str]:
    parts: list[list[str]] = [[]]
    for line in text.strip().splitlines():
        if _DIVIDER.fullmatch(line.strip()):
            parts.append([])
        else:
            parts[-1].append(line)
    if any(not "".join(p).strip() for p in parts):
        return False, "an empty paragraph between dividers"
    return len(parts) == c["n"], f"{len(parts)} paragraphs (need exactly {c['n']})"


def _placeholders(text: str, c: Constraint) -> tuple[bool, str]:
    n = len(re.findall(r"\[[^\[\]\n]*\w[^\[\]\n]*\]", text))
    return n >= c["n"], f"{n} [placeholders] (need at least {c['n']})"


def _postscript(text: str, c: Constraint) -> tuple[bool, str]:
    marker = re.escape(c["marker"])
    found = re.search(rf"^\s*{marker}\s*\S", text, re.IGNORECASE | re.MULTILINE)
    return bool(found), f"no postscript starting with {c['marker']}"


def _quotation(text: str, c: Constraint) -> tuple[bool, str]:
    body = text.strip()
    ok = len(body) > 2 and body.startswith('"') and body.endswith('"')
    return ok, "not wrapped in double quotation marks"


CHECKERS: dict[str, Checker] = {
    "words_at_least": _words_at_least,
    "words_at_most": _words_at_most,
    "include_keywords": _include_keywords,
    "exclude_word": _exclude_word,
    "keyword_frequency": _keyword_frequency,
    "json_format": _json_format,
    "bullets": _bullets,
    "lowercase": _lowercase,
    "uppercase": _uppercase,
    "no_commas": _no_commas,
    "end_with": _end_with,
    "title": _title,
    "paragraphs": _paragraphs,
    "placeholders": _placeholders,
    "postscript": _postscript,
    "quotation": _quotation,
}


def instruction(c: Constraint) -> str:
    """The sentence the agent reads for one constraint."""
    k = c["kind"]
    texts: dict[str, Callable[[], str]] = {
        "words_at_least": lambda: f"Answer with at least {c['n']} words.",
        "words_at_most": lambda: f"Answer with at most {c['n']} words.",
        "include_keywords": lambda: (
            "Include the keywords "
            + " and ".join(f'"{w}"' for w in c["words"])
            + " in your response."
        ),
        "exclude_word": lambda: f'Do not use the word "{c["word"]}" anywhere in your response.',
        "keyword_frequency": lambda: (
            f'The word "{c["word"]}" should appear at least {c["n"]} times in your response.'
        ),
        "json_format": lambda: (
            "Wrap your entire response in JSON format; you may use markdown ticks such as ```."
        ),
        "bullets": lambda: (
            f"Your answer must contain exactly {c['n']} bullet points, in "
            "markdown, such as:\n* This is point 1."
        ),
        "lowercase": lambda: (
            "Your entire response must be in English and in lowercase "
            "letters only; no capital letters are allowed."
        ),
        "uppercase": lambda: "Your entire response must be in English and in capital letters only.",
        "no_commas": lambda: "Do not use any commas in your entire response.",
        "end_with": lambda: (
            f"Finish your response with this exact phrase: {c['phrase']}. No "
            "other words should follow it."
        ),
        "title": lambda: (
            "Your answer must contain a title, wrapped in double angular brackets, "
            "such as <<poem of joy>>."
        ),
        "paragraphs": lambda: (
            f"There should be exactly {c['n']} paragraphs, separated from "
            "each other by the markdown divider: ***"
        ),
        "placeholders": lambda: (
            f"The response must contain at least {c['n']} placeholders in "
            "square brackets, such as [address]."
        ),
        "postscript": lambda: (
            f"At the end of your response, add a postscript starting with {c['marker']}"
        ),
        "quotation": lambda: "Wrap your entire response in double quotation marks.",
    }
    if k not in texts:
        raise ValueError(f"unknown constraint kind {k!r}; known: {', '.join(CHECKERS)}")
    return texts[k]()


def check(text: str, c: Constraint) -> tuple[bool, str]:
    """Check one constraint; an empty reply fails."""
    if not text.strip():
        return False, "empty response"
    ok, detail = CHECKERS[c["kind"]](text, c)
    return ok, "ok" if ok else detail
