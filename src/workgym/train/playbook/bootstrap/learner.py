"""`bootstrap_playbook`: sample train tasks, keep verified successes, search which worked examples
raise dev reward, write the playbook.

1. Sample `train_tasks` train tasks (seeded) and roll each out `samples` times at `temperature`
   with the seed playbook.
2. Keep the episodes the verifier passed and the audit did not flag; render each as a worked
   example, drop those over `example_chars`, and refuse, with the reason, any the example lint
   flags. One example per task (the shortest), at most `max_candidates`, in a seeded order.
3. The gated search on dev (`search`), every set scored on all dev tasks with the same seeds at
   `dev_temperature`; the playbook's token cost is counted in every score's record.
4. Write `playbook.md` (+ history), `bootstrap.json` (candidates, refusals, every scored set,
   tokens by role) and keep every episode under `episodes/`, read back on a re-run.

The dev reward of the chosen set is optimistic (dev also chose it); a held-out comparison is
`workgym eval --playbook ... --split test` or `bench/playbook_real.py`.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from statistics import fmean
from typing import Any

from pydantic import BaseModel, ConfigDict

from workgym.core.environment import Environment
from workgym.core.errors import ConfigError
from workgym.core.loading import load
from workgym.core.model import Sampling
from workgym.core.tasks import Task
from workgym.models import get_model
from workgym.run.policy import Agent, MakesPolicy
from workgym.train.playbook.bootstrap.bootstrap_config import BootstrapConfig
from workgym.train.playbook.bootstrap.example_lint import ExampleLint, HeldOut
from workgym.train.playbook.bootstrap.examples import SECTION, WorkedExample, render, verified
from workgym.train.playbook.bootstrap.subset_search import SEARCHES, Chosen, Scores, Step
from workgym.train.playbook.entries import Entry, Provenance, entry_id
from workgym.train.playbook.leak_lint import LintFinding
from workgym.train.playbook.ledger import BudgetExceeded, Ledger
from workgym.train.playbook.playbook import Playbook, PlaybookVersion, save_playbook
from workgym.train.playbook.rollouts import Roller, sealed_view
from workgym.train.playbook.scoring import derive_seed


class Refused(BaseModel):
    model_config = ConfigDict(frozen=True)

    example: WorkedExample
    findings: tuple[LintFinding, ...]


class DevScore(BaseModel):
    model_config = ConfigDict(frozen=True)

    reward: float
    audit_reward: float  # flagged episodes earn nothing (gate B's audit condition)
    tokens_per_task: float
    playbook_tokens: int
    task_means: tuple[float, ...]


class BootstrapResult(BaseModel):
    """What a bootstrap run learned and what it cost (written as bootstrap.json)."""

    model_config = ConfigDict(frozen=True)

    env_id: str
    model: str
    config: BootstrapConfig
    train_tasks: tuple[str, ...]
    episodes: int
    verified: int
    candidates: tuple[WorkedExample, ...]
    too_long: int
    refused: tuple[Refused, ...]
    steps: tuple[Step, ...]
    chosen: tuple[WorkedExample, ...]
    dev_tasks: tuple[str, ...]
    baseline: DevScore  # the seed playbook on dev
    learned: DevScore  # the chosen playbook on dev (optimistic: dev chose it)
    tokens_by_role: dict[str, int]
    training_tokens: int
    playbook_path: str


class BootstrapLearner:
    """One bootstrap run over an environment (sealed here) and a frozen agent.

    The agent may be a team (`workgym.swarm.Roles`): its verified episodes are the lead's
    conversation, so a worked example shows the calls that solved the task, and the examples go
    in a shared section that every member reads (`workgym.swarm.sections`)."""

    def __init__(
        self,
        env: Environment,
        model: Agent,
        *,
        out: str | Path,
        config: BootstrapConfig | None = None,
        seed_playbook: Playbook | None = None,
    ) -> None:
        self.cfg = cfg = config or BootstrapConfig()
        held_out = HeldOut.of(env.taskset)  # digests only; taken before the split is sealed
        self.env = sealed_view(env)  # from here on, the test split does not exist
        self.train = self.env.taskset.split("train")
        self.dev = self.sample_dev(self.env.taskset.split("dev"))
        if not self.train:
            raise ConfigError(f"{env.id} has no train tasks; bootstrapping needs a train split")
        if len(self.dev) < 2:
            raise ConfigError(f"{env.id} has {len(self.dev)} dev tasks; the search needs 2+")
        self.lint = ExampleLint(self.train, held_out)
        self.model = model
        self.out = Path(out)
        seed = seed_playbook or Playbook()
        self.seed_pb = seed.model_copy(
            update={
                "token_budget": cfg.playbook_budget,
                "sections": tuple(dict.fromkeys((*seed.sections, SECTION))),
            }
        )
        self.ledger = Ledger(budget=cfg.budget_tokens)
        root = self.out / "episodes"
        self.train_roller = self._roller(root, cfg.temperature)
        self.dev_roller = self._roller(root, cfg.dev_temperature)
        self.scores: dict[str, DevScore] = {}

    def _roller(self, root: Path, temperature: float) -> Roller:
        return Roller(
            self.env,
            self.model,
            root=root,
            ledger=self.ledger,
            sampling=Sampling(temperature=temperature, max_tokens=self.cfg.max_tokens),
            system_prompt=self.cfg.system_prompt,
            concurrency=self.cfg.concurrency,
        )

    def identity(self) -> dict[str, Any]:
        return {
            "learner": "bootstrap",
            "env_id": self.env.id,
            "env_hash": self.env.content_hash(),
            "model": self.model.name,
            "seed_playbook": self.seed_pb.hash,
            "config": self.cfg.identity(),
        }

    def _open(self) -> None:
        self.out.mkdir(parents=True, exist_ok=True)
        path = self.out / "identity.json"
        ident = json.loads(json.dumps(self.identity()))
        if path.exists():
            old = json.loads(path.read_text(encoding="utf-8"))
            if old != ident:
                changed = sorted(k for k in ident if old.get(k) != ident[k])
                raise ConfigError(
                    f"{self.out} holds a run with other settings ({', '.join(changed)}); "
                    "use a new --out or the same settings"
                )
        else:
            path.write_text(json.dumps(ident, indent=2) + "\n", encoding="utf-8")

    def playbook(self, examples: tuple[WorkedExample, ...]) -> Playbook:
        pb, number = self.seed_pb, self.seed_pb.next_id
        entries = list(pb.entries)
        for ex in examples:
            entries.append(
                Entry(
                    id=entry_id(number),
                    section=SECTION,
                    text=ex.text,
                    provenance=Provenance(
                        tasks=(ex.task_id,),
                        episodes=(ex.episode,),
                        notes=("bootstrap: a verified, unflagged train success",),
                    ),
                )
            )
            number += 1
        return pb.evolve(entries, next_id=number)

    def fits(self, examples: tuple[WorkedExample, ...]) -> bool:
        return not self.playbook(examples).over_budget

    async def score(self, examples: tuple[WorkedExample, ...]) -> Scores:
        pb = self.playbook(examples)
        roll = await self.dev_roller.run(
            pb.render(),
            self.dev,
            epochs=self.cfg.dev_k,
            seed=derive_seed(self.cfg.seed, "bootstrap-dev"),
            role="agent-dev",
            iteration=0,
        )
        ids = [t.id for t in self.dev]
        means, audit = roll.task_means(ids), roll.task_means(ids, audit=True)
        self.scores[pb.render_hash] = DevScore(
            reward=fmean(means),
            audit_reward=fmean(audit),
            tokens_per_task=roll.tokens_per_task,
            playbook_tokens=pb.tokens,
            task_means=tuple(means),
        )
        return Scores(means, audit)

    def sample_dev(self, dev: list[Task]) -> list[Task]:
        """`dev_tasks` of the dev split, drawn by the seed and kept in split order; all of them
        when unset. A smaller dev set makes a pilot affordable on slow agents, at the price of
        a coarser gate."""
        n = self.cfg.dev_tasks
        if n is None or n >= len(dev):
            return list(dev)
        order = sorted(dev, key=lambda t: derive_seed(self.cfg.seed, "bootstrap-dev-task", t.id))
        chosen = {t.id for t in order[:n]}
        return [t for t in dev if t.id in chosen]

    def sample_train(self) -> list[Task]:
        order = sorted(self.train, key=lambda t: derive_seed(self.cfg.seed, "bootstrap-task", t.id))
        n = self.cfg.train_tasks
        return order if n is None else order[:n]

    async def candidates(
        self, tasks: list[Task]
    ) -> tuple[int, int, list[WorkedExample], int, list[Refused]]:
        cfg = self.cfg
        roll = await self.train_roller.run(
            self.seed_pb.render(),
            tasks,
            epochs=cfg.samples,
            seed=derive_seed(cfg.seed, "bootstrap-train"),
            role="agent-train",
            iteration=0,
        )
        by_id = {t.id: t for t in tasks}
        best: dict[str, WorkedExample] = {}
        refused: list[Refused] = []
        n_verified = too_long = 0
        for ref, ep in roll.episodes.items():
            if not verified(ep):
                continue
            n_verified += 1
            ex = render(by_id[ep.task_id], ep, ref, tool_chars=cfg.tool_output_chars)
            if len(ex.text) > cfg.example_chars:
                too_long += 1
                continue
            findings = self.lint.check(ex)
            if findings:
                refused.append(Refused(example=ex, findings=tuple(findings)))
                continue
            if ex.task_id not in best or len(ex.text) < len(best[ex.task_id].text):
                best[ex.task_id] = ex
        order = [best[t.id] for t in tasks if t.id in best]
        return len(roll.results), n_verified, order[: cfg.max_candidates], too_long, refused

    async def run(self) -> BootstrapResult:
        self._open()
        cfg = self.cfg
        tasks = self.sample_train()
        try:
            episodes, n_verified, cands, too_long, refused = await self.candidates(tasks)
            chosen: Chosen = await SEARCHES[cfg.search](cands, self.score, cfg, self.fits)
        except BudgetExceeded as exc:
            raise ConfigError(
                f"the token budget ran out before the search ended ({exc}); raise "
                "--budget-tokens or lower --samples, --train-tasks or --max-candidates"
            ) from exc
        pb = self.playbook(chosen.examples)
        baseline = self.scores[self.seed_pb.render_hash]
        learned = self.scores.get(pb.render_hash) or baseline
        history = [
            PlaybookVersion(
                hash=self.seed_pb.hash, parent=None, iteration=0, reason="seed",
                playbook=self.seed_pb,
            ),
            PlaybookVersion(
                hash=pb.hash, parent=self.seed_pb.hash, iteration=1,
                reason=f"bootstrap ({cfg.search} search): {len(chosen.examples)} worked examples",
                playbook=pb,
            ),
        ]  # fmt: skip
        path = save_playbook(
            pb, self.out / "playbook.md", history if pb is not self.seed_pb else []
        )
        result = BootstrapResult(
            env_id=self.env.id,
            model=self.model.name,
            config=cfg,
            train_tasks=tuple(t.id for t in tasks),
            episodes=episodes,
            verified=n_verified,
            candidates=tuple(cands),
            too_long=too_long,
            refused=tuple(refused),
            steps=chosen.steps,
            chosen=chosen.examples,
            dev_tasks=tuple(t.id for t in self.dev),
            baseline=baseline,
            learned=learned,
            tokens_by_role=self.ledger.by_role(),
            training_tokens=self.ledger.training_tokens,
            playbook_path=str(path),
        )
        (self.out / "bootstrap.json").write_text(result.model_dump_json(indent=2) + "\n")
        return result


async def bootstrap_playbook_async(
    env: Environment | str | Path,
    model: Agent | str,
    *,
    out: str | Path,
    config: BootstrapConfig | None = None,
    seed_playbook: Playbook | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
) -> BootstrapResult:
    """Learn a playbook of worked examples for `model` on `env` (train bootstraps, dev selects,
    test stays sealed). Any model works: openai/<model> with `base_url`, hf/<path>, scripted/;
    so does a team of them (`workgym.swarm.Roles`)."""
    environment = env if isinstance(env, Environment) else load(env)
    if isinstance(model, MakesPolicy):
        agent: Agent = model
    else:
        agent = get_model(model, base_url=base_url, api_key=api_key)
    learner = BootstrapLearner(
        environment, agent, out=out, config=config, seed_playbook=seed_playbook
    )
    return await learner.run()


def bootstrap_playbook(env: Environment | str | Path, model: Any, **kwargs: Any) -> BootstrapResult:
    """Synchronous `bootstrap_playbook_async` for scripts."""
    return asyncio.run(bootstrap_playbook_async(env, model, **kwargs))
