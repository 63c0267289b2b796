"""Steps 6-7, the two gates every change must pass, and the bisection of a failing batch.

- Gate A: the candidate re-runs the source tasks (those the deltas' evidence came from) with the
  iteration's train seeds and must not do worse.
- Gate B: a paired comparison on one fresh dev-gate subset per iteration (same tasks, same seeds,
  K rollouts each). Accept if reward rises by more than one paired standard error, or holds
  (>= -delta) while tokens per task fall by at least tau. Reward comes before token savings. A
  change that raises the primary reward but not the audit reward (flagged successes do not
  count) is refused.
- A failing batch of several deltas is bisected, so one bad delta cannot sink good ones.

Every attempt is one `gate` event in the log; accepted deltas become active entries whose
provenance names the gate decision, rejected ones are remembered as negative examples.
"""

from __future__ import annotations

import math
import random
from collections.abc import Awaitable, Callable, Sequence
from statistics import fmean
from typing import TYPE_CHECKING, Literal, TypeVar

from pydantic import BaseModel, ConfigDict

from workgym.core.tasks import Task
from workgym.stats.tests import paired_t_test
from workgym.train.playbook.deltas import Delta, apply_deltas
from workgym.train.playbook.groups import Group
from workgym.train.playbook.rollouts import Rollouts
from workgym.train.playbook.scoring import derive_seed

if TYPE_CHECKING:
    from workgym.train.playbook.state import TrainingState


class GateA(BaseModel):
    model_config = ConfigDict(frozen=True)

    passed: bool
    candidate: float
    baseline: float
    diff: float
    n: int
    reason: str


def gate_a(candidate: Sequence[float], baseline: Sequence[float], tolerance: float = 0.0) -> GateA:
    """Per-task mean rewards on the source tasks, paired by position; not worse (>= -tol)."""
    if len(candidate) != len(baseline) or not candidate:
        raise ValueError("gate A needs the same non-empty list of tasks in both arms")
    cand, base = fmean(candidate), fmean(baseline)
    diff = cand - base
    passed = diff >= -tolerance - 1e-12
    reason = f"source tasks: {cand:.3f} vs {base:.3f} ({diff:+.3f})" + (
        "" if passed else f", worse than the tolerance {tolerance:g}"
    )
    return GateA(
        passed=passed, candidate=cand, baseline=base, diff=diff, n=len(candidate), reason=reason
    )


class GateB(BaseModel):
    model_config = ConfigDict(frozen=True)

    passed: bool
    rule: Literal["rise", "hold", "none"]
    diff: float
    se: float
    n: int
    candidate: float
    baseline: float
    tokens_candidate: float
    tokens_baseline: float
    token_change: float  # relative: -0.2 means 20% fewer tokens per task
    audit_diff: float
    audit_flagged: bool
    reason: str


def audit_check(
    rose: bool, audit_candidate: Sequence[float], audit_baseline: Sequence[float]
) -> tuple[float, bool]:
    """Gate B's audit condition, shared with the bootstrap learner's search: a rise in the primary
    reward counts only if the audit reward (flagged episodes earn nothing) rose too, so a change
    whose gain comes only from flagged episodes is refused. Returns the audit reward's difference
    and whether the rise is flagged (never when the reward did not rise)."""
    audit_diff = fmean(audit_candidate) - fmean(audit_baseline)
    return audit_diff, rose and audit_diff <= 0


def gate_b(
    candidate: Sequence[float],
    baseline: Sequence[float],
    *,
    tokens_candidate: float,
    tokens_baseline: float,
    audit_candidate: Sequence[float] | None = None,
    audit_baseline: Sequence[float] | None = None,
    hold_delta: float = 0.02,
    tau: float = 0.10,
) -> GateB:
    """The acceptance rule on per-task mean rewards (paired by position); see the module doc."""
    if len(candidate) != len(baseline) or len(candidate) < 2:
        raise ValueError("gate B needs at least two paired dev tasks")
    test = paired_t_test(candidate, baseline, alternative="two-sided")
    diff, se = test.diff, test.se
    change = (tokens_candidate - tokens_baseline) / tokens_baseline if tokens_baseline else 0.0
    rise = diff > 0 and diff > se
    hold = diff >= -hold_delta and change <= -tau
    rule: Literal["rise", "hold", "none"] = "rise" if rise else ("hold" if hold else "none")
    audit_diff, flagged = audit_check(
        rule == "rise",
        audit_candidate if audit_candidate is not None else candidate,
        audit_baseline if audit_baseline is not None else baseline,
    )
    passed = rule != "none" and not flagged
    if flagged:
        reason = f"reward rose {diff:+.3f} but the audit reward did not ({audit_diff:+.3f})"
    elif rule == "rise":
        reason = f"reward rose {diff:+.3f} > 1 SE ({se:.3f})"
    elif rule == "hold":
        reason = f"reward held ({diff:+.3f} >= -{hold_delta:g}) and tokens fell {-change:.0%}"
    else:
        reason = (
            f"reward {diff:+.3f} (SE {se:.3f}) did not rise by more than 1 SE, and tokens "
            f"changed {change:+.0%} (a hold needs >= -{hold_delta:g} and <= -{tau:.0%})"
        )
    return GateB(
        passed=passed,
        rule=rule,
        diff=diff,
        se=se if math.isfinite(se) else 0.0,
        n=len(candidate),
        candidate=fmean(candidate),
        baseline=fmean(baseline),
        tokens_candidate=tokens_candidate,
        tokens_baseline=tokens_baseline,
        token_change=change,
        audit_diff=audit_diff,
        audit_flagged=flagged,
        reason=reason,
    )


T = TypeVar("T")


async def bisect(items: Sequence[T], attempt: Callable[[list[T]], Awaitable[bool]]) -> None:
    """Try the whole batch; if it fails and holds more than one item, try each half in turn.

    `attempt` gates a batch against the current playbook and, on acceptance, makes it the
    current one, so the second half is judged on top of an accepted first half.
    """
    batch = list(items)
    if not batch or await attempt(batch) or len(batch) == 1:
        return
    mid = (len(batch) + 1) // 2
    await bisect(batch[:mid], attempt)
    await bisect(batch[mid:], attempt)


class Gatekeeper:
    def __init__(self, trainer: TrainingState) -> None:
        self.t = trainer

    async def gate(
        self, i: int, deltas: list[Delta], roll: Rollouts, chosen: list[Group]
    ) -> tuple[list[str], list[str]]:
        """Gate the iteration's deltas; return the ids accepted and the ids rejected."""
        if not deltas:
            return [], []
        t, cfg = self.t, self.t.cfg
        gate_seed = derive_seed(cfg.seed, "gate-b", i)
        pool = list(t.dev_gate)
        subset = (
            sorted(random.Random(gate_seed).sample(pool, cfg.gate_tasks), key=pool.index)
            if len(pool) > cfg.gate_tasks
            else pool
        )
        train_seed = derive_seed(cfg.seed, "train", i)
        batch_ids = list(dict.fromkeys(r.task_id for r in roll.results))
        fallback = [g.task_id for g in chosen] or batch_ids
        accepted: list[str] = []
        rejected: list[str] = []

        async def attempt(batch: list[Delta]) -> bool:
            batch = [d for d in batch if d.id not in rejected]  # refused at a higher level
            result = apply_deltas(t.pb, batch, max_words=cfg.max_words)
            for r in result.rejected:  # e.g. its target was merged away by an accepted half
                rejected.append(r.delta.id)
                self._record(i, [r.delta], None, None, False, f"no longer applies: {r.reason}")
            batch = list(result.applied)
            if not batch:
                return True
            if not t.ledger.allows():
                for d in batch:
                    rejected.append(d.id)
                self._record(i, batch, None, None, False, "token budget exhausted before gating")
                return True
            candidate = result.playbook
            ga: GateA | None = None
            if cfg.gate_a:
                wanted = {task for d in batch for task in d.tasks if task in batch_ids}
                source = [tid for tid in batch_ids if tid in wanted] or fallback
                tasks = [t.tasks[tid] for tid in source]
                cand = await t.roller.run(
                    candidate.render(),
                    tasks,
                    epochs=cfg.group_size,
                    seed=train_seed,
                    role="agent-train",
                    iteration=i,
                )
                base = roll
                if t.pb.render() != roll.playbook_text:  # an earlier half was accepted
                    base = await t.roller.run(
                        t.pb.render(),
                        tasks,
                        epochs=cfg.group_size,
                        seed=train_seed,
                        role="agent-train",
                        iteration=i,
                    )
                ga = gate_a(cand.task_means(source), base.task_means(source), cfg.gate_a_tolerance)
            gb: GateB | None = None
            if ga is None or ga.passed:
                gb = await self._gate_b(i, candidate.render(), subset, gate_seed)
            passed = gb is not None and gb.passed
            reason = gb.reason if gb is not None else f"gate A: {ga.reason}" if ga else ""
            self._record(i, batch, ga, gb, passed, reason)
            if passed:
                ids = ", ".join(d.id for d in batch)
                t.version(candidate.promote(gate=f"it{i} {ids}: {reason}"), i, f"accepted {ids}")
                accepted.extend(d.id for d in batch)
            elif len(batch) == 1:
                rejected.append(batch[0].id)
                t.gate_rejected.append(batch[0])
            return passed

        await bisect(deltas, attempt)
        return accepted, [d for d in dict.fromkeys(rejected) if d not in accepted]

    async def _gate_b(self, i: int, candidate_text: str, subset: list[Task], seed: int) -> GateB:
        t, cfg = self.t, self.t.cfg
        ids = [task.id for task in subset]
        base = await t.roller.run(
            t.pb.render(), subset, epochs=cfg.dev_k, seed=seed, role="agent-dev", iteration=i
        )
        cand = await t.roller.run(
            candidate_text, subset, epochs=cfg.dev_k, seed=seed, role="agent-dev", iteration=i
        )
        return gate_b(
            cand.task_means(ids),
            base.task_means(ids),
            tokens_candidate=cand.tokens_per_task,
            tokens_baseline=base.tokens_per_task,
            audit_candidate=cand.task_means(ids, audit=True),
            audit_baseline=base.task_means(ids, audit=True),
            hold_delta=cfg.hold_delta,
            tau=cfg.token_tau,
        )

    def _record(
        self,
        i: int,
        batch: list[Delta],
        ga: GateA | None,
        gb: GateB | None,
        passed: bool,
        reason: str,
    ) -> None:
        t = self.t
        t.emit(
            {
                "kind": "gate",
                "iteration": i,
                "deltas": [d.id for d in batch],
                "accepted": passed,
                "reason": reason,
                "gate_a": ga.model_dump() if ga else None,
                "gate_b": gb.model_dump() if gb else None,
            }
        )
        verdict = "accepted" if passed else "rejected"
        for d in batch:
            t.recent.append(f"{d.describe()} -> {verdict} with {len(batch)} delta(s): {reason}")
