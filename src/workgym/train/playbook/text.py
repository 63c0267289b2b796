"""Deterministic text measures the curator and the lint share: words, n-grams, similarity.

No embeddings: de-duplication must give the same answer on every machine and in every test, and
a bag of word unigrams and bigrams is enough to tell "the same rule, reworded slightly" from "a
different rule" at the 0.9 threshold the design fixes.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from itertools import pairwise

_WORD = re.compile(r"[a-z0-9]+(?:['._-][a-z0-9]+)*")


def normalize(text: str) -> str:
    """Collapse whitespace; the form in which entry text is stored and compared."""
    return " ".join(text.split())


def words(text: str) -> list[str]:
    """Lower-case word tokens; hyphenated codes and dotted numbers stay one token."""
    return _WORD.findall(text.lower())


def word_count(text: str) -> int:
    return len(text.split())


def ngrams(tokens: list[str], n: int) -> set[tuple[str, ...]]:
    return {tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)}


def _bag(text: str) -> Counter[str]:
    tokens = words(text)
    bag = Counter(tokens)
    bag.update(f"{a} {b}" for a, b in pairwise(tokens))
    return bag


def similarity(a: str, b: str) -> float:
    """Cosine similarity of unigram+bigram counts, in [0, 1]; 1.0 for the same words in order."""
    x, y = _bag(a), _bag(b)
    if not x or not y:
        return 0.0
    dot = sum(v * y[k] for k, v in x.items() if k in y)
    return dot / math.sqrt(sum(v * v for v in x.values()) * sum(v * v for v in y.values()))
