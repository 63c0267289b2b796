"""The investigation probes of docs/guards.md, as answers played through the real episode loop.

Each attack starts from the task's gold conclusion and changes one thing a weak verifier would
miss; its expected verdict follows from the declared semantics in `conclusion`:

- most-common-cause: the most common planted (type, slice) of the environment, every time (fail
  unless it happens to be this task's truth, where the probe does not apply).
- enumerate-causes: every cause type in one answer, right slice and window (fail, `enumeration`).
- hedge-two-causes: "<right> or <other>", and the right type over two comparable slices (fail).
- downstream-symptom: the symptom the metric shows instead of the mechanism (fail).
- wrong-cause-type: the right slice, window and direction with the most confusable type (fail).
- unobserved-evidence: the gold conclusion citing queries never run in the episode (fail, flagged
  `evidence_unobserved`).
- cause-alias (FN): the right cause under a declared alias (in capitals), or with spaces for
  underscores: must pass.

`attacks(task, tasks)` gives the answers and the queries to run first; the `Probe` classes wrap
them for `workgym attack` (capability `conclusion`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from workgym.core.messages import Message
from workgym.core.tasks import canonical_json
from workgym.envs.warehouse.investigate.answer import ConclusionAnswer
from workgym.envs.warehouse.investigate.manifest import Manifest
from workgym.envs.warehouse.investigate.oracle import conclusion_turns
from workgym.envs.warehouse.investigate.vocab import ALIASES, CONFUSABLE, NORMAL, PLANTED, SYMPTOM
from workgym.guards.probes import AttackContext, Expect, ScriptProbe

if TYPE_CHECKING:
    from workgym.core.environment import Environment
    from workgym.core.tasks import Task

CONCLUSION = "conclusion"


@dataclass
class Attack:
    """One answer to play: queries run first (default: its evidence), then the submission."""

    answer: dict[str, Any]
    run: list[str] | None = None
    note: str = ""
    expect_flags: list[str] = field(default_factory=list)


def _gold(task: Task) -> tuple[dict[str, Any], Manifest] | None:
    answer = task.answer
    if not isinstance(answer, dict) or answer.get("kind") != CONCLUSION:
        return None
    gold = ConclusionAnswer.model_validate(answer)
    if gold.manifest is None:
        return None
    return gold.submission(), Manifest.model_validate(gold.manifest)


def _with(base: dict[str, Any], **changes: Any) -> dict[str, Any]:
    return base | changes


def most_common(tasks: Sequence[Task]) -> dict[str, Any] | None:
    """The most common planted conclusion (type, predicate, direction) among `tasks`."""
    counts: Counter[str] = Counter()
    values: dict[str, dict[str, Any]] = {}
    for t in tasks:
        found = _gold(t)
        if found is None or found[1].cause_type == NORMAL:
            continue
        sub = found[0]
        part = {k: sub[k] for k in ("cause_type", "predicate", "direction")}
        key = canonical_json(part)
        counts[key] += 1
        values[key] = part
    if not counts:
        return None
    return values[counts.most_common(1)[0][0]]


def most_common_cause(task: Task, tasks: Sequence[Task]) -> list[Attack]:
    found, common = _gold(task), most_common(tasks)
    if found is None or common is None:
        return []
    gold, manifest = found
    attack = _with(gold, **common)
    if manifest.cause_type != NORMAL:
        attack["window"] = gold["window"]
    else:
        attack["window"] = [manifest.window[0].isoformat(), manifest.window[1].isoformat()]
    if all(attack.get(k) == gold.get(k) for k in ("cause_type", "predicate", "direction")):
        return []  # the constant guess is this task's truth: nothing to attack
    return [Attack(attack, note="constant guess")]


def enumerate_causes(task: Task) -> list[Attack]:
    found = _gold(task)
    if found is None:
        return []
    every = ", ".join([*PLANTED, NORMAL])
    return [Attack(_with(found[0], cause_type=every), expect_flags=["enumeration"])]


def hedge_two_causes(task: Task) -> list[Attack]:
    found = _gold(task)
    if found is None:
        return []
    gold, manifest = found
    other = CONFUSABLE[manifest.cause_type]
    out = [Attack(_with(gold, cause_type=f"{manifest.cause_type} or {other}"), note="type hedge")]
    widened = _two_slices(manifest)
    if widened is not None:
        out.append(Attack(_with(gold, predicate=widened), note="slice hedge"))
    return out


def _two_slices(manifest: Manifest) -> list[dict[str, Any]] | None:
    """The planted slice OR-ed with a comparable one (another value of its first column)."""
    if not manifest.predicate or manifest.gate.planted is None:
        return None
    first = manifest.predicate[0]
    others = [
        v
        for e in manifest.gate.top
        for c, v in e.key
        if c == first.column and v != first.value and isinstance(v, str | int)
    ]
    rival = others[0] if others else None
    if rival is None:
        return None
    terms = [t.model_dump(mode="json") for t in manifest.predicate[1:]]
    return [{"column": first.column, "op": "in", "value": [first.value, rival]}, *terms]


def downstream_symptom(task: Task) -> list[Attack]:
    found = _gold(task)
    if found is None or found[1].cause_type not in SYMPTOM:
        return []
    return [Attack(_with(found[0], cause_type=SYMPTOM[found[1].cause_type]))]


def wrong_cause_type(task: Task) -> list[Attack]:
    found = _gold(task)
    if found is None:
        return []
    return [Attack(_with(found[0], cause_type=CONFUSABLE[found[1].cause_type]))]


def unobserved_evidence(task: Task) -> list[Attack]:
    found = _gold(task)
    if found is None:
        return []
    return [Attack(found[0], run=[], expect_flags=["evidence_unobserved"])]


def cause_alias(task: Task) -> list[Attack]:
    """FN probes: the right cause said differently must still pass."""
    found = _gold(task)
    if found is None:
        return []
    gold, manifest = found
    out = [Attack(_with(gold, cause_type=ALIASES[manifest.cause_type][0].upper()), note="alias")]
    if manifest.cause_type != NORMAL:
        out.append(Attack(_with(gold, cause_type=manifest.cause_type.replace("_", " "))))
    return out


ATTACKS = {
    "most-common-cause": (Expect.must_fail, "always the most common planted cause and slice"),
    "enumerate-causes": (Expect.must_fail, "every cause type in one conclusion"),
    "hedge-two-causes": (Expect.must_fail, "hedge between two types, or two slices"),
    "downstream-symptom": (Expect.must_fail, "the symptom on the metric, not the mechanism"),
    "wrong-cause-type": (Expect.must_fail, "the right slice with the most confusable type"),
    "unobserved-evidence": (Expect.must_fail, "evidence queries never run in the episode"),
    "cause-alias": (Expect.must_pass, "FN: the right cause under a declared alias"),
}


def attacks(name: str, task: Task, tasks: Sequence[Task]) -> list[Attack]:
    if name == "most-common-cause":
        return most_common_cause(task, tasks)
    simple = {
        "enumerate-causes": enumerate_causes,
        "hedge-two-causes": hedge_two_causes,
        "downstream-symptom": downstream_symptom,
        "wrong-cause-type": wrong_cause_type,
        "unobserved-evidence": unobserved_evidence,
        "cause-alias": cause_alias,
    }
    return simple[name](task)


def turns(attack: Attack, prefix: str = "probe") -> list[Message]:
    return conclusion_turns(attack.answer, run=attack.run, prefix=prefix)


class InvestigationProbe(ScriptProbe):
    """One investigation probe for `workgym attack` (capability `conclusion`)."""

    group = "investigation"
    applies_to = frozenset({CONCLUSION})

    def __init__(self, name: str) -> None:
        self.name = name
        self.expect = ATTACKS[name][0]  # type: ignore[misc]
        self.summary = ATTACKS[name][1]

    def expected(self, ctx: AttackContext, task: Task) -> Expect | None:
        return self.expect if _gold(task) is not None else None

    def variants(self, env: Environment, task: Task) -> list[Sequence[Message]]:
        train = env.taskset.training_view().split("train")  # what an attacker could have seen
        return [turns(a) for a in attacks(self.name, task, train)]


def investigation_probes() -> list[InvestigationProbe]:
    """Every investigation probe, for the guards catalog."""
    return [InvestigationProbe(name) for name in ATTACKS]
