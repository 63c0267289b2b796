"""Steps 6-7 for one iteration: gate A, gate B and bisection of a failing batch.

Gate A re-runs the source tasks (those the deltas' evidence came from) with the iteration's train
seeds; gate B draws one fresh dev-gate subset per iteration and runs both arms on it with the
same seeds. Every attempt is one `gate` event in the log; accepted deltas become active entries
whose provenance names the gate decision, rejected ones are remembered as negative examples.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

from workgym.core.tasks import Task
from workgym.train.playbook.deltas import Delta, apply_deltas
from workgym.train.playbook.gates import GateA, GateB, Group, bisect, gate_a, gate_b
from workgym.train.playbook.rollouts import Rollouts
from workgym.train.playbook.scoring import derive_seed

if TYPE_CHECKING:
    from workgym.train.playbook.loop import Trainer


class Gatekeeper:
    def __init__(self, trainer: Trainer) -> None:
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
