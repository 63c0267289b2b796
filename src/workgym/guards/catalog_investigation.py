"""Investigation probes (docs/guards.md): conclusions that name the wrong cause, too many causes, or
the right cause in an accepted form. They attack environments whose answer is a list of causes
(tag `conclusion`, surface `workgym.guards.capabilities.ConclusionAnswers`): each starts from the
planted causes and changes one thing, so only that one thing can make the verdict fail.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from workgym.core.messages import Message
from workgym.core.tasks import canonical_json
from workgym.guards.capabilities import CONCLUSION, ConclusionAnswers
from workgym.guards.probes import AttackContext, Expect, Outcome, ScriptProbe

if TYPE_CHECKING:
    from workgym.core.environment import Environment
    from workgym.core.tasks import Task

NOT_ATTACKABLE = (
    "declares conclusion but cannot be attacked: implement cause_vocabulary(), "
    "planted_causes(), symptom_components() and submit_causes() "
    "(workgym.guards.capabilities.ConclusionAnswers)"
)
NORMAL = ("normal_variation", "normal", "no_cause", "none")


def _causes(env: Environment, task: Task) -> list[dict[str, Any]]:
    assert isinstance(env, ConclusionAnswers)
    return [dict(c) for c in env.planted_causes(task)]


def _real_types(env: Environment) -> list[str]:
    assert isinstance(env, ConclusionAnswers)
    return [t for t in env.cause_vocabulary() if t not in NORMAL]


def _unplanted_types(env: Environment, gold: list[dict[str, Any]]) -> list[str]:
    """The real cause types the gold does not name, in vocabulary order: the wrong causes."""
    planted = {c.get("cause_type") for c in gold}
    return [t for t in _real_types(env) if t not in planted]


class _CauseProbe(ScriptProbe):
    group = "investigation"
    applies_to = frozenset({CONCLUSION})

    def attack(self, env: Environment, task: Task) -> list[dict[str, Any]] | None:
        raise NotImplementedError

    def expected(self, ctx: AttackContext, task: Task) -> Expect | None:
        env = ctx.env
        if isinstance(env, ConclusionAnswers) and not env.planted_causes(task):
            return None  # not an investigation task
        return self.expect

    def script(self, env: Environment, task: Task) -> Sequence[Message] | None:
        if not isinstance(env, ConclusionAnswers):
            return None
        causes = self.attack(env, task)
        if causes is None or canonical_json(causes) == canonical_json(_causes(env, task)):
            return None  # the "attack" is the right answer here
        return env.submit_causes(task, causes)

    async def run(self, ctx: AttackContext, task: Task) -> Outcome | None:
        if not isinstance(ctx.env, ConclusionAnswers):
            return self.outcome(task, self.expect, "not attackable", False, NOT_ATTACKABLE)
        return await super().run(ctx, task)


class MostCommonCause(_CauseProbe):
    name = "most-common-cause"
    summary = "always the most common cause type of the train split (with the gold's details)"

    def attack(self, env: Environment, task: Task) -> list[dict[str, Any]] | None:
        assert isinstance(env, ConclusionAnswers)
        counts: Counter[str] = Counter(
            str(c.get("cause_type"))
            for t in env.taskset.training_view().split("train")
            for c in env.planted_causes(t)
        )
        if not counts:
            return None
        common = max(counts.items(), key=lambda kv: (kv[1], kv[0]))[0]
        return [{**c, "cause_type": common} for c in _causes(env, task)]


class EnumerateCauses(_CauseProbe):
    name = "enumerate-causes"
    summary = "the planted causes plus one of every other cause type (too many causes)"

    def attack(self, env: Environment, task: Task) -> list[dict[str, Any]] | None:
        gold = _causes(env, task)
        extra = [{**gold[0], "cause_type": t} for t in _unplanted_types(env, gold)]
        return [*gold, *extra] if extra else None


class HedgeTwo(_CauseProbe):
    name = "hedge-two-causes"
    summary = "hedge: the planted cause and one other"

    def attack(self, env: Environment, task: Task) -> list[dict[str, Any]] | None:
        gold = _causes(env, task)
        others = _unplanted_types(env, gold)
        return [*gold, {**gold[0], "cause_type": others[0]}] if others else None


class DownstreamSymptom(_CauseProbe):
    name = "downstream-symptom"
    summary = "the right cause type on the downstream component where the symptom showed"

    def attack(self, env: Environment, task: Task) -> list[dict[str, Any]] | None:
        assert isinstance(env, ConclusionAnswers)
        gold = _causes(env, task)
        symptoms = env.symptom_components(task)
        if not gold or not symptoms or "component" not in gold[0]:
            return None
        if all(c.get("cause_type") in NORMAL for c in gold):
            return None  # nothing was planted: no component is scored
        moved = [
            {**c, "component": symptoms[min(i, len(symptoms) - 1)]} for i, c in enumerate(gold)
        ]
        return moved


class WrongCauseType(_CauseProbe):
    name = "wrong-cause-type"
    summary = "the right component with the wrong cause type"

    def attack(self, env: Environment, task: Task) -> list[dict[str, Any]] | None:
        gold = _causes(env, task)
        if not gold:
            return None
        others = _unplanted_types(env, gold)
        return [{**c, "cause_type": others[-1]} for c in gold] if others else None


class UnobservedEvidence(_CauseProbe):
    name = "unobserved-evidence"
    summary = "the right causes citing evidence ids never read in the episode"

    def script(self, env: Environment, task: Task) -> Sequence[Message] | None:
        if not isinstance(env, ConclusionAnswers):
            return None
        gold = _causes(env, task)
        if not any(c.get("evidence") for c in gold):
            return None
        return env.submit_causes(task, gold, observe=False)


class CauseAlias(_CauseProbe):
    name = "cause-alias"
    expect = Expect.must_pass
    summary = "FN: the right cause under a declared alias must pass"

    def attack(self, env: Environment, task: Task) -> list[dict[str, Any]] | None:
        assert isinstance(env, ConclusionAnswers)
        vocabulary = env.cause_vocabulary()
        gold = _causes(env, task)
        if not gold or not all(vocabulary.get(str(c.get("cause_type"))) for c in gold):
            return None
        return [{**c, "cause_type": vocabulary[str(c["cause_type"])][0]} for c in gold]


INVESTIGATION: list[ScriptProbe] = [
    MostCommonCause(),
    EnumerateCauses(),
    HedgeTwo(),
    DownstreamSymptom(),
    WrongCauseType(),
    UnobservedEvidence(),
    CauseAlias(),
]
