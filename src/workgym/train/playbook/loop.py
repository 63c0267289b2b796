"""The training loop (docs/playbook.md, steps 0-9): frozen weights, a learned playbook.

0. Score every untrained baseline and the seed playbook on dev-select (K rollouts, tokens).
1-3. Sample a batch (part failure replay), roll out G seeded episodes per task, take group
   advantages and credit the entries the episodes cited.
4. One reflection call on the M most contrastive groups.
5. The curator turns lessons into at most a few checked deltas.
6-7. Gate A and gate B, bisecting a failing batch (see `gate`).
8. Prune harmful entries; keep within the playbook's token budget.
9. Checkpoint on dev-select; stop on the budget, a cap, repeated rejections or a plateau.

Step 10, the test split, is not here: training code never holds it (see `rollouts.sealed_view`).
"""

from __future__ import annotations

from statistics import fmean

from workgym.core.errors import ConfigError
from workgym.train.playbook.deltas import apply_deltas
from workgym.train.playbook.entries import EntryStatus
from workgym.train.playbook.gate import Gatekeeper
from workgym.train.playbook.groups import select_contrastive
from workgym.train.playbook.ledger import BudgetExceeded
from workgym.train.playbook.pruning import compact, credit, prune
from workgym.train.playbook.reflect import reflect_step
from workgym.train.playbook.result import TrainResult, finish_run
from workgym.train.playbook.runlog import LogDiverged
from workgym.train.playbook.sampling import TaskSampler
from workgym.train.playbook.scoring import (
    derive_seed,
    dev_scores,
    groups_of,
    rank,
)
from workgym.train.playbook.state import TrainingState
from workgym.train.playbook.stopping import LoopCounters, StopRules, should_stop


class Trainer(TrainingState):
    """Steps 0-9 over the shared state; `run()` trains, resuming from the log."""

    # -- the run -------------------------------------------------------------------------------

    async def run(self) -> TrainResult:
        self.open()
        self.gatekeeper = Gatekeeper(self)
        try:
            try:
                await self.start()
            except BudgetExceeded as exc:
                raise ConfigError(
                    f"the token budget does not cover scoring the baselines on dev ({exc}); "
                    "raise --budget-tokens"
                ) from exc
            rules = StopRules(
                self.cfg.max_epochs, self.cfg.max_iterations, self.cfg.patience, self.cfg.plateau
            )
            iteration = 1
            while True:
                reason = should_stop(rules, self._counters(iteration))
                if reason is not None:
                    self.emit({"kind": "stop", "iteration": iteration - 1, "reason": reason})
                    break
                try:
                    await self.iteration(iteration)
                except BudgetExceeded as exc:  # the next step would not fit: end here
                    self.emit(
                        {
                            "kind": "stop",
                            "iteration": iteration,
                            "reason": "budget",
                            "detail": str(exc),
                        }
                    )
                    break
                iteration += 1
            if self.log.replaying:
                raise LogDiverged(f"{self.log.path} goes on past where this run stopped")
            return finish_run(self)
        finally:
            self.log.close()

    def _counters(self, iteration: int) -> LoopCounters:
        done = iteration - 1
        spent = [self.ledger.iteration_tokens(i) for i in range(1, iteration)]
        projected = int(fmean(spent)) if spent else 0
        return LoopCounters(
            iterations_done=done,
            epoch=self.sampler.epoch_progress,
            rejections_in_a_row=self.rejections_in_a_row,
            checkpoints_since_best=self.checkpoints_since_best,
            budget_allows_next=self.ledger.allows(projected),
        )

    async def start(self) -> None:
        cfg = self.cfg
        self.sampler = TaskSampler(
            self.train,
            seed=cfg.seed,
            replay_fraction=cfg.replay_fraction,
            max_replays=cfg.max_replays,
        )
        self.emit(
            {
                "kind": "start",
                "train": len(self.train),
                "dev_gate": len(self.dev_gate),
                "dev_select": len(self.dev_select),
                "lint": self.lint.describe(),
                "model": self.model.name,
                "reflector": self.reflector.name,
            }
        )
        self.history.clear()
        self.version(self.pb, 0, "seed")
        select = [t.id for t in self.dev_select]
        for b in self.baselines:
            from workgym.run.policy import make_policy

            policy = make_policy(
                b.model, system_prompt=b.system_prompt, sampling=b.sampling(self.sampling)
            )
            roll = await self.roller.run(
                "",
                self.dev_select,
                epochs=cfg.dev_k,
                seed=derive_seed(cfg.seed, "select"),
                role="agent-dev",
                iteration=0,
                policy=policy,
            )
            self.emit(
                {
                    "kind": "baseline",
                    "name": b.name,
                    "model": b.model.name,
                    **dev_scores(roll, select),
                }
            )
        await self.checkpoint(0)

    async def checkpoint(self, iteration: int) -> None:
        text = self.pb.render()
        if self.checkpoints and self.checkpoints[-1]["render_hash"] == self.pb.render_hash:
            return
        roll = await self.roller.run(
            text,
            self.dev_select,
            epochs=self.cfg.dev_k,
            seed=derive_seed(self.cfg.seed, "select"),
            role="agent-dev",
            iteration=iteration,
        )
        scores = dev_scores(roll, [t.id for t in self.dev_select])
        best = max(self.checkpoints, key=rank, default=None)
        is_best = best is None or rank(scores) > rank(best)
        event = self.emit(
            {
                "kind": "checkpoint",
                "iteration": iteration,
                "hash": self.pb.hash,
                "render_hash": self.pb.render_hash,
                "best": is_best,
                "playbook_tokens": self.pb.tokens,
                **scores,
            }
        )
        self.checkpoints.append(event)
        self.checkpoints_since_best = 0 if is_best else self.checkpoints_since_best + 1

    async def iteration(self, i: int) -> None:
        cfg = self.cfg
        batch, replayed = self.sampler.next_batch(cfg.batch_size)
        self.emit(
            {
                "kind": "batch",
                "iteration": i,
                "tasks": [t.id for t in batch],
                "replay": replayed,
                "epoch": round(self.sampler.epoch_progress, 6),
            }
        )
        text = self.pb.render()
        train_seed = derive_seed(cfg.seed, "train", i)
        roll = await self.roller.run(
            text, batch, epochs=cfg.group_size, seed=train_seed, role="agent-train", iteration=i
        )
        groups = groups_of(roll, batch)
        self.emit(
            {
                "kind": "rollouts",
                "iteration": i,
                "key": roll.key,
                "reward": fmean([r.reward for r in roll.results]),
                "tokens_per_task": roll.tokens_per_task,
                "groups": [
                    {"task": g.task_id, "kind": g.kind, "rewards": list(g.rewards)} for g in groups
                ],
            }
        )
        live = {e.id for e in self.pb.live}
        updates = credit(groups, {r.ref: r.cited for r in roll.results}, live)
        if updates:
            self.version(self.pb.add_counters(updates), i, "counters from cited entries")
        for g in groups:
            if not g.rewards:  # every episode errored: nothing known about this task
                continue
            self.sampler.observe(g.task_id, g.mean, g.kind == "all-pass", cfg.replay_threshold)
        chosen = select_contrastive(groups, cfg.contrastive_groups)
        reflection, refs = await reflect_step(self, i, chosen, roll, batch)
        cur = self.curator.curate(
            reflection,
            self.pb,
            refs=refs,
            next_delta=self.next_delta,
            reflection_id=f"r-{i:04d}",
            gate_rejected=self.gate_rejected,
        )
        self.next_delta = cur.next_delta
        self.emit(
            {
                "kind": "curation",
                "iteration": i,
                "problems": list(reflection.problems),
                "error": reflection.error,
                "deltas": [d.model_dump(mode="json") for d in cur.deltas],
                "tags": [d.model_dump(mode="json") for d in cur.tags],
                "rejected": [r.model_dump(mode="json") for r in cur.rejected],
            }
        )
        for r in cur.rejected:
            self.recent.append(
                f"{r.delta.describe()} -> refused by the curator ({r.stage}: {r.reason})"
            )
        if cur.tags:
            tagged = apply_deltas(self.pb, cur.tags, status=EntryStatus.active).playbook
            self.version(tagged, i, "tags from the reflector")
        accepted, rejected = await self.gatekeeper.gate(i, list(cur.deltas), roll, chosen)
        pb, notes = prune(self.pb, margin=cfg.prune_margin, min_uses=cfg.prune_min_uses)
        pb, more = compact(pb, merge_similarity=cfg.merge_similarity)
        if notes or more:
            self.version(pb, i, "; ".join(notes + more))
        await self.checkpoint(i)
        self.rejections_in_a_row = 0 if accepted else self.rejections_in_a_row + 1
        best = max(self.checkpoints, key=rank)
        self.emit(
            {
                "kind": "iteration",
                "iteration": i,
                "accepted": accepted,
                "rejected": rejected + [r.delta.id for r in cur.rejected],
                "playbook": self.pb.hash,
                "entries": len(self.pb.live),
                "playbook_tokens": self.pb.tokens,
                "dev_reward": self.checkpoints[-1]["reward"],
                "best_reward": best["reward"],
                "ledger": self.ledger.by_role(),
                "training_tokens": self.ledger.training_tokens,
            }
        )
