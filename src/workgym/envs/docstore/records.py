"""The records a case is made of: documents, the plan of a planted cause, and document ids."""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Callable
from dataclasses import dataclass

from pydantic import BaseModel

from workgym.verifiers.conclusion_docs import Cause


class Doc(BaseModel):
    doc_id: str
    kind: str  # incident | log | change | status | inventory | metrics | runbook | postmortem
    title: str
    date: str
    body: str


@dataclass
class Plan:
    """One planted cause: what, where, where it shows, and when."""

    cause: str
    component: str | None
    symptom: str
    onset: dt.datetime
    start: dt.datetime
    end: dt.datetime
    direction: str | None
    metric: str


@dataclass
class Case:
    """One investigation: its documents and the planted causes (the hidden answer)."""

    docs: list[Doc]
    causes: list[Cause]
    incident_id: str
    symptoms: list[str]
    day: str


# add(doc_id, kind, title, body, date="") -> doc_id
AddDoc = Callable[..., str]


def iso(t: dt.datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


class DocIds:
    """Opaque, unique ids (LOG-4821): an id says what kind a document is, never what it shows."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.used: set[str] = set()

    def new(self, prefix: str) -> str:
        while True:
            doc_id = f"{prefix}-{self.rng.randrange(1000, 9999)}"
            if doc_id not in self.used:
                self.used.add(doc_id)
                return doc_id
