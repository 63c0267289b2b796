"""Investigation tasks: one per generated case, eight kinds, three phrasings each.

Kinds are the six plantable cause types, `normal_variation` (nothing planted: the right answer is
to say so) and `two_causes` (two unrelated incidents in one report: exactly two causes must be
named). Each phrasing is a family, the unit of the train/dev/test split. The hidden answer is the
list of planted causes in the submission format; `meta` holds what the corpus is rebuilt from.
"""

from __future__ import annotations

import hashlib
import random

from workgym.core.tasks import Task
from workgym.envs.docstore.causes import PLANTABLE
from workgym.envs.docstore.corpus import build_case
from workgym.verifiers.conclusion_docs import NORMAL

TEMPLATES = (
    "Incident {inc} is open. Find its root cause in the document store and submit your "
    "conclusion with the ids of the documents that show it.",
    "On-call handover: {symptoms} misbehaved on {day} (incident {inc}). What caused it? Submit a "
    "structured conclusion citing the evidence documents.",
    "Postmortem prep for incident {inc}: work out what caused each alert — or conclude it was "
    "normal variation — and cite the documents that show it.",
)
KINDS = [*PLANTABLE, NORMAL, "two_causes"]


def _seed(*parts: object) -> int:
    digest = hashlib.sha256("|".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:4], "big")


def plant_for(kind: str, seed: int) -> list[str]:
    """The cause types a task of `kind` plants (two distinct ones for two_causes)."""
    if kind != "two_causes":
        return [kind]
    return random.Random(seed).sample(PLANTABLE, 2)


def build_tasks(per_template: int = 3, seed: int = 0) -> list[Task]:
    tasks = []
    for kind in KINDS:
        for t, template in enumerate(TEMPLATES):
            for k in range(per_template):
                case_seed = _seed(seed, kind, t, k)
                plant = plant_for(kind, case_seed)
                case = build_case(case_seed, plant)
                prompt = template.format(
                    inc=case.incident_id,
                    symptoms=" and ".join(dict.fromkeys(case.symptoms)),
                    day=case.day,
                )
                tasks.append(
                    Task(
                        family=f"{kind}/t{t}",
                        prompt=prompt,
                        answer=[c.model_dump() for c in case.causes],
                        meta={
                            "case_seed": case_seed,
                            "plant": plant,
                            "kind": kind,
                            "template": t,
                            "incident": case.incident_id,
                            "symptoms": case.symptoms,
                        },
                    )
                )
    return tasks
