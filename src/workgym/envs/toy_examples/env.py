"""`workgym/toy-examples`: a test environment where a worked example of a task's kind is what helps.

The job: apply a named rule (`reverse`, `upper` or `sort`) to a word with the `transform` tool and
submit the result. Tasks come in three kinds, one per rule; a family is one word under one rule,
so every kind has families in train, dev and test. `make demo` certifies a playbook learned here
by a real model (decision 0155): 60 tasks, 24 of them held out, so that a gain of about a third of
the tasks can be certified.

The test double `scripted/toy-examples-agent` makes it a known-answer test for
`workgym.train.playbook.bootstrap`, not a learning result:

- with a worked example of the task's kind in its system prompt (a line holding the call
  `transform(kind="<kind>"`), it copies the example's calls and always succeeds;
- without one, it fails at temperature 0 (it submits the word unchanged), and at a temperature
  of 0.5 or more it finds the right call in half of its episodes (drawn from the episode seed, so
  paired arms see the same draws): the verified successes the learner bootstraps from.
"""

from __future__ import annotations

import json
import random
import re

from workgym.core.environment import Environment, Limits
from workgym.core.episode import Episode
from workgym.core.errors import ToolError
from workgym.core.messages import Message, ToolCall
from workgym.core.model import Completion, Sampling, Usage, message_tokens
from workgym.core.tasks import SplitSpec, Task, TaskSet
from workgym.core.tools import ToolSpec, tool
from workgym.core.verdict import Status, Verdict

KINDS: tuple[str, ...] = ("reverse", "upper", "sort")
WORDS: tuple[str, ...] = (
    "anchor", "basket", "candle", "dragon", "ember", "falcon", "garden", "harbor", "island",
    "jungle", "kettle", "lantern", "meadow", "nectar", "orchid", "pepper", "quarry", "ribbon",
    "saddle", "timber", "velvet", "walnut", "yonder", "zephyr", "bramble", "cobalt", "drizzle",
    "fennel", "gravel", "hollow", "indigo", "juniper", "kindle", "lagoon", "marble", "nutmeg",
    "acorn", "beacon", "cactus", "dolphin", "engine", "forest", "goblet", "hammer", "jacket",
    "kitten", "ladder", "magnet", "napkin", "oyster", "parrot", "quiver", "rocket", "salmon",
    "tunnel", "umpire", "violin", "wizard", "yogurt", "zipper",
)  # fmt: skip
PROMPT = "Apply the {kind} rule to the word '{word}' and submit the result."
_KIND = re.compile(r"Apply the (\w+) rule to the word '([^']+)'")
EXPLORE_TEMPERATURE, EXPLORE_RATE = 0.5, 0.5


def apply_rule(kind: str, word: str) -> str:
    if kind == "reverse":
        return word[::-1]
    if kind == "upper":
        return word.upper()
    if kind == "sort":
        return "".join(sorted(word))
    raise ValueError(f"no rule {kind!r}; rules: {', '.join(KINDS)}")


def rule_tasks(words: tuple[str, ...]) -> list[Task]:
    """One task per word, the rules taken in turn (word i gets rule i mod 3); a family is one
    word under one rule. Variants on other words (bench/toy-examples-c1t) build theirs here."""
    return [
        Task(
            family=f"{kind}/{word}",
            prompt=PROMPT.format(kind=kind, word=word),
            answer=apply_rule(kind, word),
            meta={"kind": kind, "word": word},
        )
        for i, word in enumerate(words)
        for kind in (KINDS[i % len(KINDS)],)
    ]


@tool
def transform(kind: str, word: str) -> str:
    """Apply a named rule to a word.

    Args:
        kind: The rule: reverse, upper or sort.
        word: The word to transform.
    """
    if kind not in KINDS:
        raise ToolError(f"no rule {kind!r}; rules: {', '.join(KINDS)}")
    return apply_rule(kind, word)


@tool(final=True)
def submit(answer: str) -> str:
    """Submit the result. This ends the task.

    Args:
        answer: The transformed word.
    """
    return "answer recorded"


class ToyExamples(Environment):
    """Apply a named rule to a word with the transform tool and submit the result."""

    id = "workgym/toy-examples"
    version = "2"
    tools = [transform, submit]
    limits = Limits(max_turns=4)  # a success takes two turns; four leave room for one mistake
    instructions = "You transform words with the transform tool and submit results with submit."

    def tasks(self) -> TaskSet:
        tasks = rule_tasks(WORDS)
        # Version 2 (decision 0155): 60 words, 24 train / 12 dev / 24 test, 8 test tasks per kind
        # (the salt was picked for that balance before any model played the environment).
        split = SplitSpec(salt="toy-examples/66", train=0.4, dev=0.2, test=0.4)
        return TaskSet(tasks, split)

    def next_action(self, task: Task, messages: list[Message]) -> Message:
        """The canonical right next call from any state (`core.next_action`)."""
        return self.next_actions(task, messages)[0]

    def next_actions(self, task: Task, messages: list[Message]) -> list[Message]:
        """Every right next call from any state (`core.next_action.SeveralNextActions`).

        Until a tool reply holds the answer, two calls are right: `transform` with the task's
        rule and word (the tool path, first), or submitting the answer worked out without the
        tool, which the verifier accepts just the same. A wrong transform teaches nothing, so
        after one both are still right. Once a reply holds the answer, only submitting it is.
        """
        answer = str(task.answer)
        submit_it = Message(role="assistant", tool_calls=[_call("submit", answer=answer)])
        if any(m.role == "tool" and (m.content or "").strip() == answer for m in messages):
            return [submit_it]
        kind, word = str(task.meta["kind"]), str(task.meta["word"])
        use_tool = Message(role="assistant", tool_calls=[_call("transform", kind=kind, word=word)])
        return [use_tool, submit_it]

    def verify(self, task: Task, episode: Episode) -> Verdict:
        got = episode.answer
        if not isinstance(got, str):
            return Verdict.wrong(Status.parse_error, got=got)
        return Verdict.correct() if got == task.answer else Verdict.wrong(got=got)


def example_mark(kind: str) -> str:
    """What a worked example of `kind` holds: the rendered first call of a success."""
    return f'transform(kind="{kind}"'


def _call(name: str, /, **args: object) -> ToolCall:
    return ToolCall(id=f"call_{name}", name=name, arguments=json.dumps(args))


class ToyExamplesAgent:
    """The scripted agent of `workgym/toy-examples` (see the module docstring)."""

    name = "scripted/toy-examples-agent"

    def for_task(self, task: Task, env: Environment) -> ToyExamplesAgent:
        return self

    async def complete(
        self, messages: list[Message], tools: list[ToolSpec], sampling: Sampling
    ) -> Completion:
        system = messages[0].content if messages and messages[0].role == "system" else ""
        task_text = next((m.content for m in messages if m.role == "user"), "")
        found = _KIND.search(task_text)
        kind, word = (found.group(1), found.group(2)) if found else ("", "")
        results = [m for m in messages if m.role == "tool"]
        if results:
            reply = Message(
                role="assistant", tool_calls=[_call("submit", answer=results[-1].content.strip())]
            )
        else:
            rng = random.Random(f"{sampling.seed}|toy-examples-agent")
            explores = sampling.temperature >= EXPLORE_TEMPERATURE and rng.random() < EXPLORE_RATE
            if example_mark(kind) in system or explores:
                reply = Message(
                    role="assistant", tool_calls=[_call("transform", kind=kind, word=word)]
                )
            else:
                reply = Message(role="assistant", tool_calls=[_call("submit", answer=word)])
        usage = Usage(
            prompt_tokens=sum(message_tokens(m) for m in messages),
            completion_tokens=message_tokens(reply),
        )
        return Completion(message=reply, usage=usage, finish_reason="stop")
