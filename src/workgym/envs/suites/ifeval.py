"""`suites/ifeval`: instruction following with verifiable constraints.

A writing request plus one or two constraints that a program can check (word counts, keywords,
JSON, bullet counts, case, commas, titles, paragraphs, placeholders, postscripts, quotes). The
family is the combination of constraint kinds, so the cluster is "the same kind of instruction".
Reward is 1 only when every constraint holds; each constraint is a subscore. No extra needed.

Negative constraints ("no commas", "at most 45 words", "avoid 'very'") are met by replies that
attempt nothing, so a reply counts as an attempt only when it has MIN_WORDS words or more, is
about the requested topic (names one of its key words), does not mostly copy the request back,
and is under MAX_CHARS; `workgym attack suites/ifeval` is what found each of these.
"""

from __future__ import annotations

import json
import random
import re

from workgym.core.environment import Environment, Limits
from workgym.core.episode import Episode
from workgym.core.messages import Message
from workgym.core.tasks import Task, TaskSet
from workgym.core.verdict import Status, Verdict
from workgym.envs.suites.common import SUITE_SPLIT
from workgym.envs.suites.ifeval_checks import Constraint, check, instruction

TOPICS = [
    "a note to a neighbour about a lost cat",
    "a product description for a reusable water bottle",
    "advice for someone starting to run",
    "a short story about a lighthouse keeper",
    "an explanation of how rainbows form",
    "a review of a small neighbourhood bakery",
    "instructions for planting tomatoes",
    "a letter inviting friends to a picnic",
    "a summary of why sleep matters",
    "a welcome message for new library members",
    "tips for keeping a tidy desk",
    "a description of a walk in the mountains",
    "an announcement of a community clean-up day",
    "a pitch for a bicycle repair workshop",
    "a thank-you note to a teacher",
    "a guide to brewing green tea",
]
MIN_WORDS = 10
MAX_CHARS = 50_000  # the longest request here is 120 words; ten times a generous essay
COPY_SHARE = 0.5  # a reply whose word trigrams mostly occur in the request copies it
# What a reply about each topic cannot avoid naming (prefixes: "run" matches "running").
TOPIC_KEYS: dict[str, tuple[str, ...]] = {
    TOPICS[0]: ("cat", "neighbo"),
    TOPICS[1]: ("bottle",),
    TOPICS[2]: ("run",),
    TOPICS[3]: ("lighthouse",),
    TOPICS[4]: ("rainbow",),
    TOPICS[5]: ("bakery", "bread", "baker"),
    TOPICS[6]: ("tomato",),
    TOPICS[7]: ("picnic",),
    TOPICS[8]: ("sleep",),
    TOPICS[9]: ("library",),
    TOPICS[10]: ("desk", "tidy"),
    TOPICS[11]: ("mountain",),
    TOPICS[12]: ("clean",),
    TOPICS[13]: ("bicycle", "bike"),
    TOPICS[14]: ("teacher",),
    TOPICS[15]: ("tea",),
}
assert set(TOPIC_KEYS) == set(TOPICS), "every topic needs its key words"
KEYWORDS = ["harbor", "lantern", "meadow", "compass", "orchard", "velvet", "pebble", "summit"]
FORBIDDEN = ["very", "really", "good", "thing", "nice", "great"]
PHRASES = ["Is there anything else I can help with?", "Let me know if you have questions."]
MARKERS = ["P.S.", "P.P.S."]
# Filler for the oracle: none of these is a keyword, a forbidden word or contains a comma.
_FILLER = (
    "the",
    "morning",
    "light",
    "falls",
    "across",
    "quiet",
    "streets",
    "while",
    "people",
    "walk",
    "slowly",
    "toward",
    "their",
    "work",
    "and",
    "small",
    "birds",
    "sing",
    "above",
    "open",
    "windows",
    "as",
    "the",
    "day",
    "begins",
    "with",
    "calm",
    "steady",
    "purpose",
)

FAMILIES: list[tuple[str, ...]] = [
    ("words_at_least",),
    ("words_at_most",),
    ("include_keywords",),
    ("exclude_word",),
    ("keyword_frequency",),
    ("json_format",),
    ("bullets",),
    ("lowercase",),
    ("uppercase",),
    ("no_commas",),
    ("end_with",),
    ("title",),
    ("paragraphs",),
    ("placeholders",),
    ("postscript",),
    ("quotation",),
    ("bullets", "lowercase"),
    ("json_format", "include_keywords"),
    ("title", "words_at_most"),
    ("no_commas", "words_at_least"),
    ("paragraphs", "keyword_frequency"),
    ("uppercase", "exclude_word"),
    ("placeholders", "postscript"),
    ("quotation", "lowercase"),
    ("end_with", "include_keywords"),
    ("title", "bullets"),
]


def _params(kind: str, rng: random.Random) -> Constraint:
    c: Constraint = {"kind": kind}
    if kind == "words_at_least":
        c["n"] = rng.choice([50, 80, 120])
    elif kind == "words_at_most":
        c["n"] = rng.choice([30, 45, 60])
    elif kind == "include_keywords":
        c["words"] = rng.sample(KEYWORDS, 2)
    elif kind == "exclude_word":
        c["word"] = rng.choice(FORBIDDEN)
    elif kind == "keyword_frequency":
        c["word"], c["n"] = rng.choice(KEYWORDS), rng.choice([2, 3, 4])
    elif kind in ("bullets", "paragraphs"):
        c["n"] = rng.choice([2, 3, 4, 5])
    elif kind == "end_with":
        c["phrase"] = rng.choice(PHRASES)
    elif kind == "placeholders":
        c["n"] = rng.choice([1, 2, 3])
    elif kind == "postscript":
        c["marker"] = rng.choice(MARKERS)
    return c


def build_tasks(per_family: int = 6, seed: int = 7) -> list[Task]:
    tasks = []
    for kinds in FAMILIES:
        family = "+".join(kinds)
        rng = random.Random(f"{seed}|{family}")
        for i in range(per_family):
            constraints = [_params(k, rng) for k in kinds]
            topic = rng.choice(TOPICS)
            prompt = f"Write {topic}. " + " ".join(instruction(c) for c in constraints)
            tasks.append(
                Task(
                    id=f"ifeval-{family}-{i}",
                    family=family,
                    prompt=prompt,
                    answer={"constraints": constraints},
                    meta={"topic": topic},
                )
            )
    return tasks


def not_an_attempt(text: str, task: Task) -> str | None:
    """Why `text` does not attempt the writing task at all, or None when it does."""
    words = re.findall(r"\w+", text.lower())
    if len(words) < MIN_WORDS:
        return f"fewer than {MIN_WORDS} words"
    if len(text) > MAX_CHARS:
        return f"over {MAX_CHARS:,} characters"
    keys = TOPIC_KEYS[str(task.meta["topic"])]
    if not any(re.search(rf"\b{re.escape(k)}", text, re.IGNORECASE) for k in keys):
        return f"not about the topic (names none of: {', '.join(keys)})"
    request = " ".join(m.content for m in task.messages() if m.role == "user")
    asked = set(_trigrams(re.findall(r"\w+", request.lower())))
    mine = _trigrams(words)
    if mine and sum(t in asked for t in mine) / len(mine) >= COPY_SHARE:
        return "mostly a copy of the request"
    return None


def _trigrams(words: list[str]) -> list[tuple[str, ...]]:
    return [tuple(words[i : i + 3]) for i in range(len(words) - 2)]


def oracle_response(constraints: list[Constraint], topic_key: str) -> str:
    """A reply that satisfies the constraints (for `workgym check`; never shown to agents),
    naming the topic by `topic_key`."""
    by = {c["kind"]: c for c in constraints}
    n = 40
    if "words_at_least" in by:
        n = by["words_at_least"]["n"] + 5
    if "words_at_most" in by:
        n = by["words_at_most"]["n"] - 12
    tokens = [_FILLER[i % len(_FILLER)] for i in range(n)]
    tokens[0] = topic_key  # extras below go to positions 1, 4, 7, ...
    extra = list(by.get("include_keywords", {}).get("words", []))
    if "keyword_frequency" in by:
        extra += [by["keyword_frequency"]["word"]] * by["keyword_frequency"]["n"]
    extra += [f"[name{i}]" for i in range(by.get("placeholders", {}).get("n", 0))]
    for i, word in enumerate(extra):
        tokens[(3 * i + 1) % len(tokens)] = word
    parts = by.get("bullets", by.get("paragraphs", {"n": 1}))["n"]
    size = -(-len(tokens) // parts)
    chunks = [" ".join(tokens[i : i + size]) + "." for i in range(0, len(tokens), size)]
    if "bullets" in by:
        body = "\n".join(f"* {chunk}" for chunk in chunks)
    else:
        body = "\n\n***\n\n".join(chunks)
    if "title" in by:
        body = f"<<a calm morning>>\n\n{body}"
    if "postscript" in by:
        body += f"\n\n{by['postscript']['marker']} thank you for reading."
    if "end_with" in by:
        body += " " + by["end_with"]["phrase"]
    if "json_format" in by:
        body = json.dumps({"response": body})
    if "quotation" in by:
        body = f'"{body}"'
    if "lowercase" in by:
        body = body.lower()
    if "uppercase" in by:
        body = body.upper()
    return body


class IFEvalSuite(Environment):
    """Follow writing instructions whose constraints a program can verify."""

    id = "suites/ifeval"
    version = "2"  # 2: replies that attempt nothing (off topic, copies, huge) fail
    tools = []
    limits = Limits(max_turns=1)
    instructions = "Follow the user's instructions exactly, including every formatting rule."

    def tasks(self) -> TaskSet:
        return TaskSet(build_tasks(), SUITE_SPLIT)

    def verify(self, task: Task, episode: Episode) -> Verdict:
        text = episode.answer if isinstance(episode.answer, str) else ""
        if not text.strip():
            return Verdict.wrong(Status.no_answer)
        why = not_an_attempt(text, task)
        if why is not None:
            return Verdict.wrong(failed={"attempt": why})
        subscores: dict[str, float] = {}
        failed: dict[str, str] = {}
        for c in task.answer["constraints"]:
            ok, detail = check(text, c)
            subscores[c["kind"]] = float(ok)
            if not ok:
                failed[c["kind"]] = detail
        success = not failed
        return Verdict(
            reward=1.0 if success else 0.0,
            success=success,
            subscores=subscores,
            evidence={"failed": failed} if failed else {},
        )

    def oracle(self, task: Task) -> list[Message]:
        key = TOPIC_KEYS[str(task.meta["topic"])][0]
        text = oracle_response(task.answer["constraints"], key)
        return [Message(role="assistant", content=text)]
