"""`workgym/lookup`: a staff directory a 135M-parameter model can answer some of the time.

Built for the region where reinforcement has something to reinforce: SmolLM2-135M scores 0 on
the toy shop (every episode hits the turn limit) and on warehouses, and a trivial environment
would score near 1. Here every question needs one or two lookups and a short text answer (a
city, a team, a person, a building). Each lookup tool returns one bare value (decision 0047):
one-lookup families are within the small model's reach (0.14 of train tasks, greedy);
two-lookup families (a person's team lead, the building their team sits in) mostly are not.

The verifier compares normalised text exactly (case, surrounding spaces and a trailing full stop
do not matter; anything else does), so a submission that lists several candidates is wrong.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from typing import Any

from workgym.core.environment import Environment, Limits
from workgym.core.errors import ToolError
from workgym.core.messages import Message, ToolCall
from workgym.core.tasks import SplitSpec, Task, TaskSet
from workgym.core.tools import Ctx, tool
from workgym.core.verdict import Status, Verdict
from workgym.envs.lookup.directory import PEOPLE_BY_NAME, TEAMS, TEAMS_BY_NAME, staff

# Each kind has two phrasings that name the tool to use (t0, t1) and two that do not (t2, t3):
# SmolLM2-135M calls a named tool far more often than it picks one itself, so the phrasings grade
# the difficulty within every kind. Splits are by family, so every split holds both.
TEMPLATES: dict[str, list[str]] = {
    "city": [
        "Use city_of for {x}, then submit the city.",
        "Call city_of with {x} and submit what it returns.",
        "In which city does {x} work?",
        "Which city is {x} based in?",
    ],
    "team": [
        "Use team_of for {x}, then submit the team.",
        "Call team_of with {x} and submit what it returns.",
        "Which team is {x} on?",
        "What team does {x} belong to?",
    ],
    "manager": [
        "Use manager_of for {x}, then submit the manager.",
        "Call manager_of with {x} and submit what it returns.",
        "Who is the manager of {x}?",
        "Who does {x} report to?",
    ],
    "team_lead": [
        "Use lead_of for the {x} team, then submit the lead.",
        "Call lead_of with {x} and submit what it returns.",
        "Who leads the {x} team?",
        "Who is the lead of the {x} team?",
    ],
    "team_building": [
        "Use building_of for the {x} team, then submit the building.",
        "Call building_of with {x} and submit what it returns.",
        "In which building does the {x} team sit?",
        "Which building houses the {x} team?",
    ],
    "lead_of_person": [
        "Use team_of for {x}, then lead_of for that team, and submit the lead.",
        "Call team_of with {x}, then lead_of with the team, and submit what it returns.",
        "Who leads the team that {x} is on?",
        "Name the lead of {x}'s team.",
    ],
    "building_of_person": [
        "Use team_of for {x}, then building_of for that team, and submit the building.",
        "Call team_of with {x}, then building_of with the team, and submit what it returns.",
        "In which building does {x}'s team sit?",
        "Which building houses the team of {x}?",
    ],
}
PER_TEMPLATE = 8
MAX_SAME_ANSWER = 2


def answer_of(kind: str, x: str) -> str:
    if kind in ("city", "team", "manager"):
        return str(PEOPLE_BY_NAME[x][kind])
    if kind == "team_lead":
        return str(TEAMS_BY_NAME[x]["lead"])
    if kind == "team_building":
        return str(TEAMS_BY_NAME[x]["building"])
    team = TEAMS_BY_NAME[PEOPLE_BY_NAME[x]["team"]]
    return str(team["lead"] if kind == "lead_of_person" else team["building"])


def subjects(kind: str, n: int, rng: random.Random) -> list[str]:
    """`n` subjects of a kind, no answer more than twice: guessing the commonest answer of a kind
    (the constant baseline) is then right on at most 2 in `n` of its tasks."""
    pool = sorted(TEAMS) if kind.startswith("team_") else staff()
    rng.shuffle(pool)
    seen: Counter[str] = Counter()
    chosen = []
    for x in pool:
        if seen[answer_of(kind, x)] < MAX_SAME_ANSWER:
            seen[answer_of(kind, x)] += 1
            chosen.append(x)
    return (chosen * 2)[:n] if len(chosen) < n else chosen[:n]


def build_tasks(per_template: int = PER_TEMPLATE, seed: int = 5) -> list[Task]:
    rng = random.Random(seed)
    tasks = []
    for kind, templates in TEMPLATES.items():
        picked = subjects(kind, per_template * len(templates), rng)
        for t_index, template in enumerate(templates):
            for x in picked[t_index * per_template : (t_index + 1) * per_template]:
                tasks.append(
                    Task(
                        family=f"{kind}/t{t_index}",
                        prompt=template.format(x=x),
                        answer=answer_of(kind, x),
                        meta={"kind": kind, "subject": x, "template": t_index},
                    )
                )
    # Interleaved (first task of every family, then the second, ...) so that the first N tasks
    # of a split, which `--limit N` plays, span its families instead of exhausting the first.
    rank = {id(t): i % per_template for i, t in enumerate(tasks)}
    return sorted(tasks, key=lambda t: rank[id(t)])


# The lookups that answer a kind, in order: a tool per step, its argument the previous result.
LOOKUPS: dict[str, tuple[str, ...]] = {
    "city": ("city_of",),
    "team": ("team_of",),
    "manager": ("manager_of",),
    "team_lead": ("lead_of",),
    "team_building": ("building_of",),
    "lead_of_person": ("team_of", "lead_of"),
    "building_of_person": ("team_of", "building_of"),
}


def lookup_value(tool_name: str, name: str) -> str:
    """What a lookup tool returns for `name` (the tools below read the same records)."""
    if tool_name in ("lead_of", "building_of"):
        return str(TEAMS_BY_NAME[name][tool_name.removesuffix("_of")])
    return str(PEOPLE_BY_NAME[name][tool_name.removesuffix("_of")])


def answered(messages: list[Message]) -> set[tuple[str, str]]:
    """(tool, normalised reply) of every call a tool replied to. Replies are paired with the
    calls of the assistant turn just before them (a model may reuse call ids across turns)."""
    known: set[tuple[str, str]] = set()
    pending: dict[str, str] = {}
    for message in messages:
        if message.role == "assistant":
            pending = {c.id: c.name for c in message.tool_calls}
        elif message.role == "tool" and message.tool_call_id in pending:
            known.add((pending[message.tool_call_id], normalise(message.content)))
    return known


def normalise(text: str) -> str:
    """Case, surrounding space, repeated spaces and one trailing full stop do not count."""
    return re.sub(r"\s+", " ", text).strip().removesuffix(".").strip().casefold()


def _key(text: str) -> str:
    return normalise(text)


def _person(ctx: Ctx, person: str) -> Any:
    found = {_key(n): p for n, p in ctx.state["people"].items()}.get(_key(person))
    if found is None:
        raise ToolError(f"no person {person!r}; give the full name as the question spells it")
    return found


def _team(ctx: Ctx, team: str) -> Any:
    found = {_key(n): t for n, t in ctx.state["teams"].items()}.get(
        _key(team).removesuffix(" team")
    )
    if found is None:
        raise ToolError(f"no team {team!r}; teams: {', '.join(TEAMS)}")
    return found


# One tool per fact, each returning the bare value: SmolLM2-135M copies a one-word result into
# its answer, but picking the right field out of a JSON record defeated it (0/16, decision 0047).
# Every lookup takes `name`: with `person` and `team`, it passed `person` to the team tools.
@tool
def city_of(ctx: Ctx, name: str) -> str:
    """The city a person works in.

    Args:
        name: The person's full name.
    """
    return str(_person(ctx, name)["city"])


@tool
def team_of(ctx: Ctx, name: str) -> str:
    """The team a person is on.

    Args:
        name: The person's full name.
    """
    return str(_person(ctx, name)["team"])


@tool
def manager_of(ctx: Ctx, name: str) -> str:
    """The manager a person reports to.

    Args:
        name: The person's full name.
    """
    return str(_person(ctx, name)["manager"])


@tool
def lead_of(ctx: Ctx, name: str) -> str:
    """The person who leads a team.

    Args:
        name: The team's name.
    """
    return str(_team(ctx, name)["lead"])


@tool
def building_of(ctx: Ctx, name: str) -> str:
    """The building a team sits in.

    Args:
        name: The team's name.
    """
    return str(_team(ctx, name)["building"])


@tool(final=True)
def submit_answer(answer: str) -> str:
    """Submit the final answer: a short text such as a name, a city or a team. This ends the task.

    Args:
        answer: The answer only.
    """
    return "answer recorded"


class Lookup(Environment):
    """Answer questions about a staff directory through two lookup tools."""

    id = "workgym/lookup"
    version = "2"
    tools = [city_of, team_of, manager_of, lead_of, building_of, submit_answer]
    # Two turns answer a one-lookup question and three a two-lookup one. More turns only let a
    # looping model burn tokens (on 2 shared cores every wasted turn costs a minute).
    limits = Limits(max_turns=3, max_total_tokens=8_000)
    # The worked example is written in the tool-call format of the built-in model's template
    # (Hermes/Qwen `<tool_call>` blocks): measured on SmolLM2-135M, the same example in prose
    # gave 0/28 train tasks and this one 4/28 before the tools returned bare values (decision
    # 0047). A model with another format reads it as an example in a foreign notation.
    instructions = (
        "You answer questions about a company's staff directory. Call the tool that answers the "
        "question, then call submit_answer with what it returned.\n\n"
        "Example.\nQuestion: Which team is Maria Lopez on?\n"
        '<tool_call>\n{"name": "team_of", "arguments": {"name": "Maria Lopez"}}\n</tool_call>\n'
        "<tool_response>\ncargo\n</tool_response>\n"
        '<tool_call>\n{"name": "submit_answer", "arguments": {"answer": "cargo"}}\n</tool_call>'
    )

    def tasks(self) -> TaskSet:
        return TaskSet(build_tasks(), SplitSpec(salt="lookup/1"))

    def state(self, task: Task) -> Any:
        return {"people": PEOPLE_BY_NAME, "teams": TEAMS_BY_NAME}

    def oracle(self, task: Task) -> list[Message]:
        """The lookups an agent has to make, one turn each, then the submission.

        Not the default (submit the answer at once): teacher forcing scores a model on the gold
        trajectory's next action, and an answer nobody could know without looking it up would
        test nothing (issue 20, claim 1).
        """
        turns, value = [], str(task.meta["subject"])
        for step, tool_name in enumerate(LOOKUPS[str(task.meta["kind"])]):
            call = ToolCall(id=f"oracle_{step}", name=tool_name,
                            arguments=json.dumps({"name": value}))  # fmt: skip
            turns.append(Message(role="assistant", tool_calls=[call]))
            value = lookup_value(tool_name, value)
        submit = ToolCall(id="oracle_submit", name="submit_answer",
                          arguments=json.dumps({"answer": value}))  # fmt: skip
        return [*turns, Message(role="assistant", tool_calls=[submit])]

    def next_action(self, task: Task, messages: list[Message]) -> Message:
        """The right next call from any state of an episode (`core.next_action`).

        The directory is read-only, so a state is what the conversation already knows: the
        first lookup of the task's chain whose value no earlier call returned is the right next
        call (its argument the value the chain has reached), and when every value is known, the
        submission of the last one. A call counts as known when a tool reply to it holds the
        value the lookup returns; a failed or misdirected call teaches nothing, so after a wrong
        step the right one is still the lookup that was missed. From the start this is exactly
        `oracle`'s first turn, and along the gold trajectory it replays `oracle`.
        """
        known = answered(messages)
        value = str(task.meta["subject"])
        for step, tool_name in enumerate(LOOKUPS[str(task.meta["kind"])]):
            result = lookup_value(tool_name, value)
            if (tool_name, normalise(result)) not in known:
                call = ToolCall(id=f"oracle_{step}", name=tool_name,
                                arguments=json.dumps({"name": value}))  # fmt: skip
                return Message(role="assistant", tool_calls=[call])
            value = result
        submit = ToolCall(id="oracle_submit", name="submit_answer",
                          arguments=json.dumps({"answer": value}))  # fmt: skip
        return Message(role="assistant", tool_calls=[submit])

    def verify(self, task: Task, episode: Any) -> Verdict:
        answer = episode.answer
        if not isinstance(answer, str):
            return Verdict.wrong(Status.parse_error, got=answer)
        if normalise(answer) == normalise(str(task.answer)):
            return Verdict.correct()
        return Verdict.wrong(got=answer)
