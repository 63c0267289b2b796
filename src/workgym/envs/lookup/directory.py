"""The staff directory behind `workgym/lookup`: people, teams and buildings, built from a seed.

Names are drawn without replacement so that every person and team is unique and a lookup by
name is unambiguous. The directory is frozen (read-only mappings): the tools only read it, and a
tool that tried to write would fail loudly instead of leaking state into the next episode.
"""

from __future__ import annotations

import random
from types import MappingProxyType
from typing import Any

FIRST = [
    "Maria", "Tomas", "Aiko", "Ravi", "Lena", "Omar", "Greta", "Jonas", "Priya", "Felix",
    "Nadia", "Hugo", "Ingrid", "Kofi", "Elena", "Marco", "Sofia", "Yusuf", "Clara", "Dmitri",
    "Amara", "Bruno", "Chen", "Daria", "Emil", "Farah", "Gustav", "Hana", "Ivan", "Julia",
]  # fmt: skip
LAST = [
    "Lopez", "Novak", "Tanaka", "Iyer", "Berg", "Haddad", "Fischer", "Lund", "Shah", "Moreau",
    "Petrov", "Dubois", "Larsen", "Mensah", "Rossi", "Conti", "Weber", "Kaya", "Silva", "Orlov",
    "Okafor", "Costa", "Wang", "Kowalski", "Sorensen", "Nasser", "Holm", "Sato", "Popov", "Meyer",
]  # fmt: skip
TEAMS = [
    "payments", "search", "billing", "identity", "storage", "mobile", "analytics", "security",
    "support", "logistics", "pricing", "onboarding", "research", "legal", "design", "sales",
]  # fmt: skip
CITIES = [
    "Lisbon", "Oslo", "Nairobi", "Osaka", "Toronto", "Krakow", "Lyon", "Porto", "Austin",
    "Dublin", "Seoul", "Quito", "Tallinn", "Perth", "Bergen", "Accra", "Denver", "Hanoi",
    "Malmo", "Cusco", "Leeds", "Split", "Kyoto", "Tromso",
]  # fmt: skip
BUILDINGS = [
    "North Hall", "Harbor House", "Cedar Court", "Granite Tower", "Willow Lodge", "Mill Yard",
    "Beacon House", "Elm Street", "Quarry Works", "Lantern Hall", "Ferry Point", "Orchard Row",
    "Anchor Yard", "Signal House", "Copper Court", "Maple Works",
]  # fmt: skip
PEOPLE = 64


def build_directory(seed: int = 11) -> tuple[dict[str, Any], dict[str, Any]]:
    """People keyed by full name, teams keyed by team name."""
    rng = random.Random(seed)
    pairs = [(f, last) for f in FIRST for last in LAST]
    names = [f"{f} {last}" for f, last in rng.sample(pairs, PEOPLE)]
    teams: dict[str, dict[str, Any]] = {}
    people: dict[str, dict[str, Any]] = {}
    # One building per team and four people per team: no answer is much commoner than the
    # others, so guessing the most common train answer of a kind stays near 1 in 12.
    buildings = rng.sample(BUILDINGS, len(TEAMS))
    for index, team in enumerate(TEAMS):
        teams[team] = {"team": team, "lead": names[index], "building": buildings[index]}
    for index, name in enumerate(names):
        team = TEAMS[index % len(TEAMS)]
        people[name] = {
            "name": name,
            "team": team,
            "city": rng.choice(CITIES),
            "manager": None if index < len(TEAMS) else teams[team]["lead"],
        }
    return people, teams


_people, _teams = build_directory()
PEOPLE_BY_NAME = MappingProxyType({k: MappingProxyType(v) for k, v in _people.items()})
TEAMS_BY_NAME = MappingProxyType({k: MappingProxyType(v) for k, v in _teams.items()})


def staff() -> list[str]:
    """People who have a manager (the team leads report to no one in this directory)."""
    return sorted(n for n, p in PEOPLE_BY_NAME.items() if p["manager"] is not None)
