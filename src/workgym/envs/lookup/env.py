"""`workgym/lookup`: a staff directory a 135M-parameter model can answer some of the time.

Built for the region where reinforcement has something to reinforce: SmolLM2-135M scores 0 on
the toy shop (every episode hits the turn limit) and on warehouses, and a trivial environment
would score near 1. Here every question needs one or two lookups and a short text answer (a
city, a team, a person, a building). One-lookup families are within the small model's reach;
two-lookup families (a person's team lead, the building their team sits in) mostly are not.

The verifier compares normalised text exactly (case, surrounding spaces and a trailing full stop
do not matter; anything else does), so a submission that lists several candidates is wrong.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from typing import Any

from workgym.core.environment import Environment, Limits
from workgym.core.errors import ToolError
from workgym.core.loading import register
from workgym.core.tasks import SplitSpec, Task, TaskSet
from workgym.core.tools import Ctx, tool
from workgym.core.verdict import Status, Verdict
from workgym.envs.lookup.directory import PEOPLE_BY_NAME, TEAMS, TEAMS_BY_NAME, staff

# Each kind has two phrasings that name the tool to use (t0, t1) and two that do not (t2, t3):
# SmolLM2-135M calls the named tool reliably and otherwise mostly invents a tool named after the
# person, so the phrasings grade the difficulty within every kind. Splits are by family, so
# every split holds both.
TEMPLATES: dict[str, list[str]] = {
    "city": [
        "Use find_person to look up {x}. In which city does {x} work?",
        "Call find_person for {x} and submit the city {x} is based in.",
        "In which city does {x} work?",
        "Which city is {x} based in?",
    ],
    "team": [
        "Use find_person to look up {x}. Which team is {x} on?",
        "Call find_person for {x} and submit the team {x} belongs to.",
        "Which team is {x} on?",
        "What team does {x} belong to?",
    ],
    "manager": [
        "Use find_person to look up {x}. Who is the manager of {x}?",
        "Call find_person for {x} and submit the name of {x}'s manager.",
        "Who is the manager of {x}?",
        "Who does {x} report to?",
    ],
    "team_lead": [
        "Use find_team to look up the {x} team. Who leads it?",
        "Call find_team for {x} and submit the name of its lead.",
        "Who leads the {x} team?",
        "Who is the lead of the {x} team?",
    ],
    "team_building": [
        "Use find_team to look up the {x} team. In which building does it sit?",
        "Call find_team for {x} and submit the building it sits in.",
        "In which building does the {x} team sit?",
        "Which building houses the {x} team?",
    ],
    "lead_of_person": [
        "Use find_person to look up {x}, then find_team for their team. Who leads that team?",
        "Call find_person for {x}, then find_team for their team, and submit its lead.",
        "Who leads the team that {x} is on?",
        "Name the lead of {x}'s team.",
    ],
    "building_of_person": [
        "Use find_person to look up {x}, then find_team for their team. Where does it sit?",
        "Call find_person for {x}, then find_team for their team, and submit its building.",
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


def normalise(text: str) -> str:
    """Case, surrounding space, repeated spaces and one trailing full stop do not count."""
    return re.sub(r"\s+", " ", text).strip().removesuffix(".").strip().casefold()


def _key(text: str) -> str:
    return normalise(text)


@tool
def find_person(ctx: Ctx, person: str) -> dict[str, Any]:
    """Look up a person: their team, city and manager.

    Args:
        person: The person's full name, e.g. "Maria Lopez".
    """
    people = {_key(n): p for n, p in ctx.state["people"].items()}
    found = people.get(_key(person))
    if found is None:
        raise ToolError(f"no person {person!r}; give a full name as the question spells it")
    return dict(found)


@tool
def find_team(ctx: Ctx, team: str) -> dict[str, Any]:
    """Look up a team: its lead and the building it sits in.

    Args:
        team: The team name, e.g. "payments".
    """
    teams = {_key(n): t for n, t in ctx.state["teams"].items()}
    found = teams.get(_key(team).removesuffix(" team"))
    if found is None:
        raise ToolError(f"no team {team!r}; teams: {', '.join(TEAMS)}")
    return dict(found)


@tool(final=True)
def submit_answer(answer: str) -> str:
    """Submit the final answer: a short text such as a name, a city or a team. This ends the task.

    Args:
        answer: The answer only, e.g. "Lisbon".
    """
    return "answer recorded"


@register
class Lookup(Environment):
    """Answer questions about a staff directory through two lookup tools."""

    id = "workgym/lookup"
    version = "1"
    tools = [find_person, find_team, submit_answer]
    # Two turns answer a one-lookup question and three a two-lookup one. More turns only let a
    # looping model burn tokens (on 2 shared cores every wasted turn costs a minute).
    limits = Limits(max_turns=3, max_total_tokens=8_000)
    instructions = (
        "You answer questions about a company's staff directory. Look the answer up with "
        "find_person or find_team, then call submit_answer with the answer only. Example: for "
        '"Which city is Maria Lopez based in?" call find_person with {"person": "Maria Lopez"}, '
        'read the city in the result, then call submit_answer with {"answer": "<the city>"}.'
    )

    def tasks(self) -> TaskSet:
        return TaskSet(build_tasks(), SplitSpec(salt="lookup/1"))

    def state(self, task: Task) -> Any:
        return {"people": PEOPLE_BY_NAME, "teams": TEAMS_BY_NAME}

    def verify(self, task: Task, episode: Any) -> Verdict:
        answer = episode.answer
        if not isinstance(answer, str):
            return Verdict.wrong(Status.parse_error, got=answer)
        if normalise(answer) == normalise(str(task.answer)):
            return Verdict.correct()
        return Verdict.wrong(got=answer)
