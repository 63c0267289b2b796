"""Rewards that compose like modules: a weighted sum, a gate, all-of, over any scorers.

A scorer is a function of (task, episode) that returns a `Verdict`; composites are scorers too,
and each keeps its parts' rewards as named subscores, so a composite verdict still says which
part earned what.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from workgym.core.episode import Episode
from workgym.core.tasks import Task
from workgym.core.verdict import Status, Verdict

# When components disagree, the composite reports the most serious status.
_SEVERITY = {s: i for i, s in enumerate(Status)}

Scorer = Callable[["Task", "Episode"], Verdict]


def _worst(statuses: Sequence[Status]) -> Status:
    return max(statuses, key=_SEVERITY.__getitem__, default=Status.ok)


def _merge(
    parts: Sequence[tuple[str, Verdict]],
) -> tuple[dict[str, float], dict[str, Any], list[str]]:
    subscores: dict[str, float] = {}
    evidence: dict[str, Any] = {}
    flags: list[str] = []
    for name, v in parts:
        subscores[name] = v.reward
        for key, value in v.subscores.items():
            subscores[f"{name}.{key}"] = value
        if v.evidence:
            evidence[name] = v.evidence
        flags.extend(f for f in v.flags if f not in flags)
    return subscores, evidence, flags


def _name(scorer: Scorer) -> str:
    name = getattr(scorer, "name", None) or getattr(scorer, "__name__", None)
    return str(name or type(scorer).__name__)


class WeightedSum:
    """reward = sum(w_i * r_i) / sum(w_i); success when reward reaches `threshold`."""

    def __init__(self, parts: Sequence[tuple[float, Scorer]], threshold: float = 1.0) -> None:
        if not parts or any(w < 0 for w, _ in parts) or sum(w for w, _ in parts) <= 0:
            raise ValueError("WeightedSum needs at least one part and positive weights")
        self.parts = list(parts)
        self.threshold = threshold
        self.name = "weighted_sum"

    def __call__(self, task: Task, episode: Episode) -> Verdict:
        verdicts = [(_name(s), s(task, episode)) for _, s in self.parts]
        total = sum(w for w, _ in self.parts)
        reward = sum(w * v.reward for (w, _), (_, v) in zip(self.parts, verdicts, strict=True))
        reward /= total
        subscores, evidence, flags = _merge(verdicts)
        return Verdict(
            reward=reward,
            success=reward >= self.threshold - 1e-12,
            status=_worst([v.status for _, v in verdicts]),
            subscores=subscores,
            evidence=evidence,
            flags=flags,
        )


class Gate:
    """Score with `then` only if `gate` succeeds; otherwise the gate's failure, reward 0.

    Use it for preconditions (the answer parses, no forbidden action) so a policy cannot earn
    partial credit while breaking a rule.
    """

    def __init__(self, gate: Scorer, then: Scorer) -> None:
        self.gate = gate
        self.then = then
        self.name = "gate"

    def __call__(self, task: Task, episode: Episode) -> Verdict:
        g = self.gate(task, episode)
        if not g.success:
            subscores, evidence, flags = _merge([(_name(self.gate), g)])
            return Verdict(
                reward=0.0,
                success=False,
                status=g.status,
                subscores=subscores,
                evidence=evidence,
                flags=flags,
            )
        v = self.then(task, episode)
        subscores, evidence, flags = _merge([(_name(self.gate), g), (_name(self.then), v)])
        return Verdict(
            reward=v.reward,
            success=v.success,
            status=v.status,
            subscores=subscores,
            evidence=evidence,
            flags=flags,
        )


class AllOf:
    """Success only when every part succeeds; reward is 1.0 then, else 0 (parts stay subscores)."""

    def __init__(self, parts: Sequence[Scorer]) -> None:
        if not parts:
            raise ValueError("AllOf needs at least one part: a task with no criteria never passes")
        self.parts = list(parts)
        self.name = "all_of"

    def __call__(self, task: Task, episode: Episode) -> Verdict:
        verdicts = [(_name(s), s(task, episode)) for s in self.parts]
        success = all(v.success for _, v in verdicts)
        subscores, evidence, flags = _merge(verdicts)
        return Verdict(
            reward=1.0 if success else 0.0,
            success=success,
            status=_worst([v.status for _, v in verdicts]),
            subscores=subscores,
            evidence=evidence,
            flags=flags,
        )
