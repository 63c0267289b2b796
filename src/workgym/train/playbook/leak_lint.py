"""The leakage lint: entries must teach a skill, not smuggle answers or game the verifier.

Rules (docs/playbook.md, Guards), each a deterministic check on the entry text:

- `answer`: shares a word n-gram with a train answer, or contains a train answer or task id
  as a whole token (answers shorter than `min_chars` are too common to count as a leak);
- `one_task_constant`: holds a constant (a number, a code with digits, a quoted string) that
  appears in the prompts of exactly one task family: a fact about one task, not a strategy;
- `grader`: names the grader, the verifier, ground truth or test files and paths;
- `claim_success`: tells the agent to claim or report success.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, ConfigDict

from workgym.core.tasks import Task
from workgym.train.playbook.text import ngrams, words

_COMMON = frozenset({"yes", "no", "true", "false", "none", "null", "the", "and", "all", "any"})
_NUMBER = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?(?![\w])")
_CODE = re.compile(r"\b(?=[\w-]*\d)(?=[\w-]*[A-Za-z])[A-Za-z0-9]+(?:[-_][A-Za-z0-9]+)*\b")
_QUOTED = re.compile(r"""["'`“‘]([^"'`”’]{3,})["'`”’]""")
_GRADER = re.compile(
    r"\b(grader|grading|graded|verifier|verify\(\)|reward model|rubric|ground[- ]truth|"
    r"answer key|hidden answer|expected answer|gold (?:answer|label)s?|"
    r"test (?:split|set|suite|case|file)s?|held[- ]out)\b"
    r"|(?:^|[\s(])[\w./-]*\btests?/[\w./-]*"
    r"|\b(?:test_\w+|conftest)\.py\b",
    re.IGNORECASE,
)
_CLAIM = re.compile(
    r"\b(claim|say|state|report|assert|pretend|declare|announce)\w*\b[^.;]{0,40}?"
    r"\b(success\w*|succeed\w*|solved|correct|done|complete[d]?|passed|finished)\b"
    r"|\bmark\b[^.;]{0,20}\b(done|complete[d]?|solved|passed)\b",
    re.IGNORECASE,
)


class LintFinding(BaseModel):
    model_config = ConfigDict(frozen=True)

    rule: str
    detail: str


def _leaves(value: Any) -> list[str]:
    if value is None or isinstance(value, bool):
        return []
    if isinstance(value, dict):
        return [x for v in value.values() for x in _leaves(v)]
    if isinstance(value, list | tuple | set):
        return [x for v in value for x in _leaves(v)]
    return [str(value)]


def answer_leaves(value: Any) -> list[str]:
    """Every scalar inside an answer, as text (the pieces a leak of it would show)."""
    return _leaves(value)


def secret_pieces(text: str, ngram: int = 4, min_chars: int = 3) -> set[tuple[str, ...]]:
    """The pieces of an answer or id whose appearance counts as a leak: the whole of a short
    one (one word of `min_chars`+ characters that is not a common word, or a few words of
    `min_chars`+ characters together), every `ngram`-gram of a long one. The one rule of both
    lints: this one (train answers) and the worked examples' (dev and test answers)."""
    toks = words(text)
    if not toks:
        return set()
    if len(toks) >= ngram:
        return ngrams(toks, ngram)
    if len(toks) == 1:
        return {(toks[0],)} if len(toks[0]) >= min_chars and toks[0] not in _COMMON else set()
    return {tuple(toks)} if len(" ".join(toks)) >= min_chars else set()


def text_findings(text: str) -> list[LintFinding]:
    """The rules on the text alone, whatever the tasks: `grader` and `claim_success`."""
    findings: list[LintFinding] = []
    match = _GRADER.search(text)
    if match:
        findings.append(
            LintFinding(rule="grader", detail=f"names grading internals: {match.group(0)!r}")
        )
    match = _CLAIM.search(text)
    if match:
        findings.append(
            LintFinding(
                rule="claim_success",
                detail=f"tells the agent to claim success: {match.group(0)!r}",
            )
        )
    return findings


def _prompt_text(task: Task) -> str:
    if isinstance(task.prompt, str):
        return task.prompt
    return "\n".join(m.content for m in task.prompt)


def constants(text: str) -> list[str]:
    """Task-specific-looking constants in a text: codes with digits, numbers (2+ digits) that are
    not part of a code, and quoted strings; each once, in order of appearance."""
    codes = list(_CODE.finditer(text))
    spans = [m.span() for m in codes]
    numbers = [
        m
        for m in _NUMBER.finditer(text)
        if sum(c.isdigit() for c in m.group(0)) > 1
        and not any(a <= m.start() < b for a, b in spans)
    ]
    found = sorted(
        [(m.start(), m.group(0)) for m in codes + numbers]
        + [(m.start(1), m.group(1)) for m in _QUOTED.finditer(text)]
    )
    out: list[str] = []
    for _, c in found:
        if c.lower() not in (x.lower() for x in out):
            out.append(c)
    return out


class LeakLint:
    """Built once from the train tasks (their answers, ids and prompts); `check` is pure."""

    def __init__(self, tasks: Iterable[Task], *, ngram: int = 4, min_chars: int = 3) -> None:
        self.ngram = ngram
        self.min_chars = min_chars
        self.secret_tokens: set[str] = set()
        self.secret_grams: dict[int, set[tuple[str, ...]]] = defaultdict(set)
        self._families: dict[str, set[str]] = defaultdict(set)
        self._prompts: list[tuple[str, str]] = []
        for task in tasks:
            self._add_secret(task.id)
            for leaf in _leaves(task.answer):
                self._add_secret(leaf)
            self._prompts.append((task.family, _prompt_text(task).lower()))

    def _add_secret(self, text: str) -> None:
        for piece in secret_pieces(text, self.ngram, self.min_chars):
            if len(piece) == 1:
                self.secret_tokens.add(piece[0])
            else:
                self.secret_grams[len(piece)].add(piece)

    def families_with(self, constant: str) -> set[str]:
        needle = constant.lower()
        return {fam for fam, prompt in self._prompts if needle in prompt}

    def check(self, text: str) -> list[LintFinding]:
        findings: list[LintFinding] = []
        toks = words(text)
        leaked = sorted(set(toks) & self.secret_tokens)
        grams = sorted(g for n, gs in self.secret_grams.items() for g in ngrams(toks, n) & gs)
        if leaked or grams:
            shared = leaked[:3] + [" ".join(g) for g in grams[:3]]
            findings.append(
                LintFinding(
                    rule="answer", detail=f"shares text with train answers or ids: {shared}"
                )
            )
        single = [(c, f) for c in constants(text) if len(f := self.families_with(c)) == 1]
        if single:
            where = ", ".join(f"{c!r} ({next(iter(f))})" for c, f in single[:3])
            findings.append(
                LintFinding(
                    rule="one_task_constant", detail=f"seen in one task family only: {where}"
                )
            )
        return findings + text_findings(text)

    def describe(self) -> dict[str, int]:
        grams = sum(len(g) for g in self.secret_grams.values())
        return {"secret_tokens": len(self.secret_tokens), "secret_ngrams": grams}
