"""The closed cause vocabulary of warehouse investigations, with declared aliases.

Eight planted types cover the seven mechanisms of docs/investigate.md (volume is either a drop or a
duplication, and an investigator must say which), plus `normal_variation` for tasks where nothing
was planted. Aliases are the words an analyst would use for the same mechanism; they are declared
here, matched only up to case and separators (`verifiers.conclusion_docs.CauseVocabulary`), so
"Duplicate rows" is `duplication` but "duplicates?" is not a cause.

`SYMPTOM` names the downstream effect each mechanism shows on the metric: what an agent that
reads only the metric would say. The investigation probes play it and it must fail.
"""

from __future__ import annotations

from typing import Literal, get_args

from workgym.verifiers.conclusion_docs import CauseVocabulary

NORMAL = "normal_variation"
CauseType = Literal[
    "segment_shock",
    "volume_drop",
    "duplication",
    "data_bug",
    "mix_shift",
    "join_break",
    "freshness_gap",
    "clock_shift",
]
PLANTED: tuple[CauseType, ...] = get_args(CauseType)  # in the order declared above
# The seven mechanisms of docs/investigate.md; volume_drop and duplication are one mechanism
# ("volume").
MECHANISM: dict[str, str] = {t: t for t in PLANTED} | {
    "volume_drop": "volume",
    "duplication": "volume",
}

ALIASES: dict[str, list[str]] = {
    "segment_shock": ["segment shift", "segment spike", "localized shock", "slice shock"],
    "volume_drop": ["missing rows", "dropped rows", "row loss", "data loss", "volume loss"],
    "duplication": ["duplicate rows", "duplicates", "double counting", "duplicate ingestion"],
    "data_bug": [
        "bad data",
        "corrupted values",
        "unit change",
        "sign flip",
        "zeroed values",
        "null values",
    ],
    "mix_shift": ["mix change", "composition shift", "simpson's paradox", "segment mix shift"],
    "join_break": ["orphan keys", "orphaned foreign keys", "broken join", "key mismatch"],
    "freshness_gap": ["stale data", "late data", "missing recent data", "ingestion lag"],
    "clock_shift": ["timezone bug", "time zone shift", "timestamp shift", "clock skew"],
    NORMAL: ["no cause", "nothing unusual", "expected variation", "noise"],
}
VOCABULARY = CauseVocabulary(causes=ALIASES)

# What the metric alone shows for each planted mechanism (the downstream symptom).
SYMPTOM: dict[str, str] = {
    "join_break": "volume_drop",
    "freshness_gap": "volume_drop",
    "duplication": "segment_shock",
    "data_bug": "segment_shock",
    "clock_shift": "segment_shock",
    "mix_shift": "segment_shock",
    "volume_drop": "segment_shock",
}
# The type most easily confused with each (the probe "right component, wrong cause type").
CONFUSABLE: dict[str, str] = {
    "segment_shock": "data_bug",
    "data_bug": "segment_shock",
    "volume_drop": "freshness_gap",
    "freshness_gap": "volume_drop",
    "duplication": "mix_shift",
    "mix_shift": "duplication",
    "join_break": "volume_drop",
    "clock_shift": "mix_shift",
    NORMAL: "segment_shock",
}


def canonical(term: object) -> str | None:
    """The canonical cause type a submitted term names, or None outside the vocabulary."""
    return VOCABULARY.canonical(term)


def vocabulary_text() -> str:
    """The vocabulary as the prompt states it: each type with its declared aliases."""
    return "; ".join(f"{name} (also: {', '.join(aliases)})" for name, aliases in ALIASES.items())
