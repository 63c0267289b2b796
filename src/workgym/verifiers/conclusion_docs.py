"""Conclusions from documents: the agent names the cause that was really planted.

Semantics (docs/investigate.md, Verification), declared here and attacked by the investigation
probes of docs/guards.md:

- Cause types come from a closed vocabulary. A declared alias ("bad deploy") is the same type as
  its canonical name (`deploy_regression`); matching unifies case and the separators space,
  hyphen and underscore, and nothing else (no punctuation stripping, no substrings). A term
  outside the vocabulary — including a hedge such as "deploy_regression or config_change" — is
  wrong, never half right.
- Exactly as many causes as were planted: listing several candidates (enumerating) fails even
  when the right one is among them. Tasks with no planted cause expect `normal_variation`.
- Each submitted cause must match a planted one one-to-one: same type, same component (under the
  same separator-and-case rule), same direction, and a window (ISO timestamps, parsed) that
  overlaps the planted one and is at most `MAX_WINDOW` long, so "all day" is not a window.
- Evidence: at least one document id per cause; every id must have been observed in the
  transcript (returned by a tool) or the conclusion fails and is flagged `evidence_unobserved`;
  at least one must be a document that really shows the planted cause.
- The prose summary is kept but never scored.
"""

from __future__ import annotations

import datetime as dt
import re
import unicodedata
from collections.abc import Iterable
from itertools import permutations
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

from workgym.core.verdict import Status, Verdict

NORMAL = "normal_variation"
MAX_WINDOW = dt.timedelta(hours=4)
FLAG_UNOBSERVED = "evidence_unobserved"
_SEPARATORS = re.compile(r"[\s_\-]+")


def term_key(text: str) -> str:
    """The comparison key of a vocabulary term or component: case and separators unified."""
    return _SEPARATORS.sub(" ", unicodedata.normalize("NFC", text).strip()).casefold()


class CauseVocabulary(BaseModel):
    """Canonical cause types and their declared aliases."""

    model_config = ConfigDict(frozen=True)

    causes: dict[str, list[str]]
    _keys: dict[str, str] = PrivateAttr(default_factory=dict)

    def model_post_init(self, context: Any) -> None:
        keys: dict[str, str] = {}
        for canonical, aliases in self.causes.items():
            for term in (canonical, *aliases):
                key = term_key(term)
                if key in keys and keys[key] != canonical:
                    raise ValueError(f"alias {term!r} names both {keys[key]!r} and {canonical!r}")
                keys[key] = canonical
        self._keys = keys

    def canonical(self, term: Any) -> str | None:
        """The canonical type `term` names, or None when it is not in the vocabulary."""
        if not isinstance(term, str):
            return None
        return self._keys.get(term_key(term))

    def terms(self) -> list[str]:
        return [t for canonical, aliases in self.causes.items() for t in (canonical, *aliases)]


class Cause(BaseModel):
    """One cause, as planted and as submitted (the submission format)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    cause_type: str = Field(max_length=80)
    component: str | None = Field(default=None, max_length=80)
    window_start: str | None = Field(default=None, max_length=40)
    window_end: str | None = Field(default=None, max_length=40)
    direction: str | None = Field(default=None, max_length=10)  # "up" | "down"
    evidence: list[str] = Field(default_factory=list, max_length=20)


def parse_time(value: str | None) -> dt.datetime | None:
    """An ISO 8601 timestamp (a trailing Z is UTC; no zone means UTC); None if unparseable."""
    if not value or not re.match(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}", value.strip()):
        return None
    try:
        found = dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return found if found.tzinfo else found.replace(tzinfo=dt.UTC)


def _window(cause: Cause) -> tuple[dt.datetime, dt.datetime] | None:
    start, end = parse_time(cause.window_start), parse_time(cause.window_end)
    if start is None or end is None or end < start:
        return None
    return start, end


def match_problems(planted: Cause, got: Cause, vocab: CauseVocabulary) -> dict[str, str]:
    """Why `got` is not `planted`, by part (type, component, direction, window); empty if it is."""
    out: dict[str, str] = {}
    want_type = vocab.canonical(planted.cause_type)
    got_type = vocab.canonical(got.cause_type)
    if got_type is None:
        out["type"] = f"{got.cause_type!r} is not in the cause vocabulary"
    elif got_type != want_type:
        out["type"] = f"{got_type} is not the planted cause type"
    if want_type == NORMAL:
        return out  # no component, window or direction to get right
    if planted.component is not None and (
        got.component is None or term_key(got.component) != term_key(planted.component)
    ):
        out["component"] = f"component {got.component!r} is not where the cause was"
    if planted.direction is not None and got.direction != planted.direction:
        out["direction"] = f"direction {got.direction!r} is wrong"
    want, have = _window(planted), _window(got)
    if want is not None:
        if have is None:
            out["window"] = "window is missing or not ISO 8601 timestamps (start <= end)"
        elif have[1] - have[0] > MAX_WINDOW:
            out["window"] = f"window longer than {MAX_WINDOW}: too wide to locate the cause"
        elif have[0] > want[1] or have[1] < want[0]:
            out["window"] = "window does not overlap the incident"
    return out


def verify_conclusion(
    planted: Iterable[Cause | dict[str, Any]],
    submitted: Any,
    vocab: CauseVocabulary,
    observed: set[str],
    supporting: dict[int, set[str]] | None = None,
) -> Verdict:
    """Judge a submitted list of causes against the planted ones.

    `observed` holds the document ids the agent's tools returned; `supporting[i]` the ids that
    show planted cause i (default: that cause's own `evidence`).
    """
    want = [c if isinstance(c, Cause) else Cause.model_validate(c) for c in planted]
    if not want:
        raise ValueError("no planted causes: a normal-variation task plants one normal_variation")
    try:
        if not isinstance(submitted, list):
            raise TypeError("the conclusion must be a list of causes")
        got = [Cause.model_validate(c) for c in submitted]
    except (ValidationError, TypeError) as exc:
        return Verdict(status=Status.parse_error, evidence={"problems": [str(exc)[:300]]})
    support = supporting or {i: set(c.evidence) for i, c in enumerate(want)}
    flags: list[str] = []
    cited = {e for c in got for e in c.evidence}
    unobserved = sorted(cited - observed)
    if unobserved:
        flags.append(FLAG_UNOBSERVED)
    if len(got) != len(want):
        return Verdict(
            evidence={
                "problems": [f"{len(got)} cause(s) submitted, {len(want)} planted"],
                "unobserved_evidence": unobserved,
            },
            subscores={"count": 0.0},
            flags=flags,
        )
    best: tuple[int, list[dict[str, str]]] | None = None
    for order in permutations(range(len(want))):
        found = []
        for i, j in enumerate(order):
            issues = match_problems(want[j], got[i], vocab)
            if not got[i].evidence:
                issues["evidence"] = "no evidence cited"
            elif want[j].evidence and not set(got[i].evidence) & support.get(j, set()):
                issues["evidence"] = "no cited document shows this cause"
            found.append(issues)
        score = sum(not p for p in found)
        if best is None or score > best[0]:
            best = (score, found)
    assert best is not None
    per_cause = best[1]
    parts = ("type", "component", "direction", "window", "evidence")
    subscores = {part: sum(part not in p for p in per_cause) / len(per_cause) for part in parts}
    subscores |= {"count": 1.0, "observed": float(not unobserved)}
    problems = [f"cause {i + 1}: {msg}" for i, p in enumerate(per_cause) for msg in p.values()]
    if unobserved:
        problems.append(f"evidence never observed in the transcript: {unobserved}")
    return Verdict.all_or_nothing(problems, subscores, flags=flags)
