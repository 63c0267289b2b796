"""`workgym/toy-rules`: a test environment where one playbook rule helps and another hurts.

The job: look a part's code up in a catalogue and submit it. The catalogue's lookup tool returns
codes in lower case, but only the upper-case form is the canonical code, so an agent that
upper-cases codes succeeds and one that submits what the tool printed fails.

Two test doubles, named as such, make it a known-answer test for the playbook loop, not a learning
result:

- `scripted/toy-rules-agent` upper-cases codes 30% of the time on its own, 90% when its system
  prompt holds a rule about upper case (and cites it), and skips the lookup altogether, answering
  from memory (and failing), when the prompt holds the rule about answering from memory. Its
  randomness comes from the episode seed, so paired arms see the same draws.
- `scripted/toy-rules-reflector` proposes the good rule, the harmful rule and a rule that leaks a
  train answer; once the good rule is in the playbook it proposes the harmful rule and a
  near-duplicate of the good one.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
from typing import Any

from workgym.core.environment import Environment, Limits
from workgym.core.episode import Episode
from workgym.core.errors import ToolError
from workgym.core.messages import Message, ToolCall
from workgym.core.model import Completion, Sampling, Usage, message_tokens
from workgym.core.tasks import SplitSpec, Task, TaskSet
from workgym.core.tools import Ctx, ToolSpec, tool
from workgym.core.verdict import Status, Verdict

GOOD_RULE = (
    "Write every part code in upper case before you submit it; the catalogue's canonical "
    "form is upper case."
)
GOOD_RULE_REWORDED = (
    "Write every part code in upper case before you submit it, as the catalogue's canonical "
    "form is upper case."
)
HARMFUL_RULE = "Skip the lookup and submit the code from memory to save tokens."
GOOD_MARK, HARMFUL_MARK = "upper case", "from memory"
BASE_RATE, RULE_RATE = 0.3, 0.9

_ADJ = ["brass", "steel", "oak", "copper", "nylon", "rubber", "glass", "iron", "tin", "zinc"]
_NOUN = ["hinge", "bolt", "gasket", "spring", "washer", "bracket", "pulley", "valve"]
TEMPLATES = [
    "Find the catalogue code of the part '{name}' and submit it.",
    "What is the code of '{name}' in the parts catalogue? Submit it.",
]


def build_catalogue(n: int = 30, seed: int = 5) -> dict[str, str]:
    rng = random.Random(seed)
    names = [f"{a}-{b}" for a in _ADJ for b in _NOUN]
    rng.shuffle(names)
    catalogue = {}
    for name in sorted(names[:n]):
        letters = "".join(rng.choice("abcdefghjkmnpqrstuvwxyz") for _ in range(2))
        catalogue[name] = f"{letters}-{rng.randrange(1000, 10000)}"
    return catalogue


CATALOGUE = build_catalogue()


@tool
def lookup_code(ctx: Ctx, name: str) -> str:
    """Look up the catalogue code of a part.

    Args:
        name: The part's name, e.g. brass-hinge.
    """
    code = ctx.state.get(name)
    if code is None:
        raise ToolError(f"no part {name!r} in the catalogue")
    return str(code)


@tool(final=True)
def submit_code(code: str) -> str:
    """Submit the part's code. This ends the task.

    Args:
        code: The catalogue code.
    """
    return "code recorded"


class ToyRules(Environment):
    """Look up a part code and submit it in its canonical (upper-case) form."""

    id = "workgym/toy-rules"
    version = "1"
    tools = [lookup_code, submit_code]
    limits = Limits(max_turns=6)
    instructions = (
        "You find part codes in a catalogue with lookup_code and submit them with submit_code."
    )

    def tasks(self) -> TaskSet:
        tasks = [
            Task(
                family=f"part/{name}",
                prompt=template.format(name=name),
                answer=code.upper(),
                meta={"part": name, "template": i},
            )
            for name, code in CATALOGUE.items()
            for i, template in enumerate(TEMPLATES)
        ]
        return TaskSet(tasks, SplitSpec(salt="toy-rules/1"))

    def state(self, task: Task) -> Any:
        return dict(CATALOGUE)

    def verify(self, task: Task, episode: Episode) -> Verdict:
        got = episode.answer
        if not isinstance(got, str):
            return Verdict.wrong(Status.parse_error, got=got)
        if got == task.answer:
            return Verdict.correct()
        if got.upper() == task.answer:
            return Verdict.wrong(got=got, note="right code, but not in its canonical upper case")
        return Verdict.wrong(got=got, note="not this part's code")


def _usage(messages: list[Message], reply: Message) -> Usage:
    return Usage(
        prompt_tokens=sum(message_tokens(m) for m in messages),
        completion_tokens=message_tokens(reply),
    )


def rule_id(system: str, mark: str) -> str | None:
    """The id of the playbook entry holding `mark` ("" if the mark has no id), or None."""
    for line in system.splitlines():
        if mark in line.lower():
            found = re.search(r"\[(pb-\d+)\]", line)
            return found.group(1) if found else ""
    return None


def _call(tool_name: str, /, **args: object) -> ToolCall:
    return ToolCall(id=f"call_{tool_name}", name=tool_name, arguments=json.dumps(args))


class ToyRulesAgent:
    """The scripted agent of `workgym/toy-rules` (see the module docstring)."""

    name = "scripted/toy-rules-agent"

    def __init__(self, latency_s: float = 0.0) -> None:
        self.latency_s = latency_s  # to make a run slow enough to kill mid-iteration in tests

    def for_task(self, task: Task, env: Environment) -> ToyRulesAgent:
        return self

    async def complete(
        self, messages: list[Message], tools: list[ToolSpec], sampling: Sampling
    ) -> Completion:
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        system = messages[0].content if messages and messages[0].role == "system" else ""
        good, harmful = rule_id(system, GOOD_MARK), rule_id(system, HARMFUL_MARK)
        task_text = next((m.content for m in messages if m.role == "user"), "")
        found = re.search(r"'([^']+)'", task_text)
        part = found.group(1) if found else ""
        results = [m for m in messages if m.role == "tool"]
        if harmful is not None:
            reply = Message(
                role="assistant",
                content=f"Following [{harmful}]: answering from memory.",
                tool_calls=[_call("submit_code", code="AA-0000")],
            )
        elif not results:
            reply = Message(role="assistant", tool_calls=[_call("lookup_code", name=part)])
        else:
            code = results[-1].content.strip()
            rng = random.Random(f"{sampling.seed}|toy-rules-agent")
            upper = rng.random() < (RULE_RATE if good is not None else BASE_RATE)
            text = f"Following [{good}]: upper case." if good and upper else ""
            reply = Message(
                role="assistant",
                content=text,
                tool_calls=[_call("submit_code", code=code.upper() if upper else code)],
            )
        return Completion(message=reply, usage=_usage(messages, reply), finish_reason="stop")


class ToyRulesReflector:
    """The scripted reflector of `workgym/toy-rules` (see the module docstring)."""

    name = "scripted/toy-rules-reflector"

    def for_task(self, task: Task, env: Environment) -> ToyRulesReflector:
        return self

    async def complete(
        self, messages: list[Message], tools: list[ToolSpec], sampling: Sampling
    ) -> Completion:
        prompt = messages[-1].content
        playbook = prompt.split("# Current playbook", 1)[-1].split("\n# ", 1)[0]
        evidence = re.findall(r"episode id (E\d+)", prompt)[:2]
        seen = re.findall(r"tool lookup_code -> (\S+)", prompt)

        def add(section: str, text: str) -> dict[str, Any]:
            return {
                "op": "ADD",
                "section": section,
                "text": text,
                "evidence": evidence,
                "rationale": "scripted",
            }

        if GOOD_MARK not in playbook.lower():
            lessons = [add("format", GOOD_RULE), add("strategy", HARMFUL_RULE)]
            if seen:
                leak = f"The code of that part is {seen[0].upper()}; submit it directly."
                lessons.append(add("pitfalls", leak))
        else:
            lessons = [add("strategy", HARMFUL_RULE), add("format", GOOD_RULE_REWORDED)]
        body = {"diagnoses": ["scripted reflector: no diagnosis"], "lessons": lessons}
        reply = Message(role="assistant", content="```json\n" + json.dumps(body) + "\n```")
        return Completion(message=reply, usage=_usage(messages, reply), finish_reason="stop")
