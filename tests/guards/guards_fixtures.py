"""Tiny fixture environments with deliberately weak verifiers, and their correct twins.

Each weak verifier reproduces a documented false-pass path (VERIFIERS.md): substring match, a
judge that accepts a master key, a judge that obeys injected text, lenient JSON repair, an
absolute 1e-2 tolerance, Unicode normalisation. The correct twin shares tasks and tools, so the
same probe can be shown to fail on the weak one and pass on the correct one.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from typing import Any

import workgym as wg
from workgym.core.messages import Message

CAPITALS = {
    "France": ("Paris", "euro"),
    "Japan": ("Tokyo", "yen"),
    "Peru": ("Lima", "sol"),
    "Kenya": ("Nairobi", "shilling"),
    "Chile": ("Santiago", "peso"),
    "Norway": ("Oslo", "krone"),
}
TEMPLATES = {
    "capital": ["What is the capital of {c}?", "Name the capital city of {c}."],
    "currency": ["What is the currency of {c}?", "Which currency is used in {c}?"],
}


def quiz_tasks() -> list[wg.Task]:
    tasks = []
    for kind, templates in TEMPLATES.items():
        for t, template in enumerate(templates):
            for country, (capital, currency) in CAPITALS.items():
                tasks.append(
                    wg.Task(
                        family=f"{kind}/t{t}",
                        prompt=template.format(c=country),
                        answer=capital if kind == "capital" else currency,
                        meta={"country": country},
                    )
                )
    return tasks


@wg.tool
def lookup(country: str) -> dict[str, str]:
    """Look up a country's capital and currency.

    Args:
        country: The country's English name.
    """
    if country not in CAPITALS:
        raise wg.ToolError(f"no country {country!r}; known: {', '.join(CAPITALS)}")
    capital, currency = CAPITALS[country]
    return {"country": country, "capital": capital, "currency": currency}


@wg.tool(final=True)
def submit_answer(answer: str) -> str:
    """Submit the final answer. This ends the task.

    Args:
        answer: The answer, as text.
    """
    return "recorded"


SPLITS = wg.SplitSpec(
    salt="quiz", overrides={"capital/t0": "train", "currency/t0": "train", "capital/t1": "dev"}
)


class Quiz(wg.Environment):
    """Correct: the submitted text must equal the gold exactly."""

    id = "test/quiz"
    tools = [lookup, submit_answer]
    limits = wg.Limits(max_turns=8)

    def tasks(self) -> wg.TaskSet:
        return wg.TaskSet(quiz_tasks(), SPLITS)

    def accepts(self, answer: str, gold: str, episode: Any) -> bool:
        return answer == gold

    def verify(self, task: wg.Task, episode: Any) -> wg.Verdict:
        answer = episode.answer
        if not isinstance(answer, str):
            return wg.Verdict.wrong(wg.Status.parse_error)
        ok = self.accepts(answer, str(task.answer), episode)
        return wg.Verdict.correct() if ok else wg.Verdict.wrong()


class QuizSubstring(Quiz):
    """Weak: passes when the gold appears anywhere in the answer."""

    id = "test/quiz-substring"

    def accepts(self, answer: str, gold: str, episode: Any) -> bool:
        return gold.lower() in answer.lower()


class QuizJudgeMasterKey(Quiz):
    """Weak: a (deterministic stand-in for an) LLM judge that a master key fools."""

    id = "test/quiz-judge-master-key"
    guard_tags = frozenset({"judge"})

    def accepts(self, answer: str, gold: str, episode: Any) -> bool:
        return answer == gold or answer.strip() in {"Solution", ":", "Solution:"}


class QuizJudgeInjection(Quiz):
    """Weak: a judge that reads the whole transcript and obeys 'output 1'."""

    id = "test/quiz-judge-injection"
    guard_tags = frozenset({"judge"})

    def accepts(self, answer: str, gold: str, episode: Any) -> bool:
        said = " ".join(m.content for m in episode.messages if m.role == "assistant")
        return answer == gold or "output 1" in said.lower()


class QuizNormalising(Quiz):
    """Weak: NFKC, drops zero-width and format characters, case-folds."""

    id = "test/quiz-normalising"

    def accepts(self, answer: str, gold: str, episode: Any) -> bool:
        def norm(s: str) -> str:
            s = unicodedata.normalize("NFKC", s)
            return "".join(ch for ch in s if unicodedata.category(ch) != "Cf").casefold()

        return norm(answer) == norm(gold)


class QuizAnyListed(Quiz):
    """Weak: accepts a comma-separated list when any item matches (the found exploit)."""

    id = "test/quiz-any-listed"

    def accepts(self, answer: str, gold: str, episode: Any) -> bool:
        return gold in [part.strip() for part in answer.split(",")]


# -- structured answers in text: strict JSON vs lenient repair -------------------------------


class JsonQuiz(wg.Environment):
    """Text answers (no final tool) holding a JSON object; correct: strict json.loads."""

    id = "test/json-quiz"
    tools = []
    limits = wg.Limits(max_turns=2)

    def tasks(self) -> wg.TaskSet:
        return wg.TaskSet(
            [
                wg.Task(
                    family=f"pair/t{i % 2}",
                    prompt=f"Give the capital and currency of {c} as JSON.",
                    answer={"capital": cap, "currency": cur},
                )
                for i, (c, (cap, cur)) in enumerate(CAPITALS.items())
            ],
            wg.SplitSpec(salt="json", overrides={"pair/t0": "train"}),
        )

    def oracle(self, task: wg.Task) -> list[Message]:
        return [Message(role="assistant", content=json.dumps(task.answer))]

    def parse(self, text: str) -> Any:
        return json.loads(text)

    def verify(self, task: wg.Task, episode: Any) -> wg.Verdict:
        try:
            got = self.parse(str(episode.answer))
        except ValueError:
            return wg.Verdict.wrong(wg.Status.parse_error)
        return wg.Verdict.correct() if got == task.answer else wg.Verdict.wrong()


def lenient_repair(text: str) -> Any:
    """What 'helpful' parsers do: single to double quotes, trailing commas out, close brackets."""
    fixed = text.strip().replace("'", '"')
    fixed = re.sub(r",\s*([}\]])", r"\1", fixed)
    fixed += "}" * (fixed.count("{") - fixed.count("}"))
    fixed += "]" * (fixed.count("[") - fixed.count("]"))
    if fixed.count('"') % 2:
        fixed += '"'
    return json.loads(fixed)


class JsonQuizLenient(JsonQuiz):
    """Weak: repairs broken JSON before comparing."""

    id = "test/json-quiz-lenient"

    def parse(self, text: str) -> Any:
        return lenient_repair(text)


# -- numbers: relative tolerance vs absolute 1e-2 --------------------------------------------

RATIOS = {"tea": 0.137, "coffee": 0.4213, "spice": 1.25, "cocoa": 0.0734, "salt": 0.918}


@wg.tool(final=True)
def submit_number(answer: float) -> str:
    """Submit the final answer (a number). This ends the task.

    Args:
        answer: The answer.
    """
    return "recorded"


@wg.tool
def ratio_of(category: str) -> float:
    """The return ratio of a category.

    Args:
        category: A category name.
    """
    if category not in RATIOS:
        raise wg.ToolError(f"no category {category!r}")
    return RATIOS[category]


class Ratios(wg.Environment):
    """Correct: |a-b| <= max(1e-9, 1e-6 * max(|a|, |b|)) (VERIFIERS.md)."""

    id = "test/ratios"
    tools = [ratio_of, submit_number]
    limits = wg.Limits(max_turns=6)

    def tasks(self) -> wg.TaskSet:
        return wg.TaskSet(
            [
                wg.Task(family=f"ratio/t{i % 2}", prompt=f"Return ratio of {k}?", answer=v)
                for i, (k, v) in enumerate(RATIOS.items())
            ],
            wg.SplitSpec(salt="ratios", overrides={"ratio/t0": "train"}),
        )

    def close(self, a: float, b: float) -> bool:
        return abs(a - b) <= max(1e-9, 1e-6 * max(abs(a), abs(b)))

    def verify(self, task: wg.Task, episode: Any) -> wg.Verdict:
        got = episode.answer
        if not isinstance(got, float | int) or isinstance(got, bool) or math.isnan(got):
            return wg.Verdict.wrong(wg.Status.parse_error)
        return wg.Verdict.correct() if self.close(got, task.answer) else wg.Verdict.wrong()


class RatiosAbsTolerance(Ratios):
    """Weak: absolute tolerance 1e-2."""

    id = "test/ratios-abs"

    def close(self, a: float, b: float) -> bool:
        return abs(a - b) <= 1e-2
