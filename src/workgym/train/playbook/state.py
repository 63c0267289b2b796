"""The state a playbook run's steps share, apart from the loop that drives them.

The training view of the environment (the test split does not exist from here on), the dev
subsets, the playbook and its versions, the token ledger, the curator, the append-only log and
the roller. `loop.Trainer` drives the steps over it; each step module takes a `TrainingState`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from workgym.core.environment import Environment
from workgym.core.errors import ConfigError
from workgym.core.model import Model, Sampling
from workgym.run.policy import Agent
from workgym.train.playbook.config import TrainConfig
from workgym.train.playbook.curator import Curator
from workgym.train.playbook.deltas import Delta
from workgym.train.playbook.leak_lint import LeakLint
from workgym.train.playbook.ledger import Ledger
from workgym.train.playbook.playbook import Playbook, PlaybookVersion
from workgym.train.playbook.rollouts import Roller, sealed_view
from workgym.train.playbook.runlog import RunLog
from workgym.train.playbook.scoring import Baseline, split_dev

Observer = Callable[[dict[str, Any]], None]


class TrainingState:
    """Everything the steps share: settings, the playbook, its history, the ledger, the log.

    The steps (`reflect`, `gate`, `finish`) take this, not the loop, so the loop can import
    them without them importing it back.
    """

    log: RunLog
    roller: Roller

    def __init__(
        self,
        env: Environment,
        model: Agent,
        *,
        reflector: Model,
        out: str | Path,
        config: TrainConfig | None = None,
        baselines: Sequence[Baseline] = (),
        seed_playbook: Playbook | None = None,
        observer: Observer | None = None,
    ) -> None:
        self.cfg = cfg = config or TrainConfig()
        self.env = sealed_view(env)  # from here on, the test split does not exist
        self.tasks = self.env.taskset
        self.train = self.tasks.split("train")
        if not self.train:
            raise ConfigError(f"{env.id} has no train tasks; training needs a train split")
        dev = self.tasks.split("dev")
        if len(dev) < 2:
            raise ConfigError(f"{env.id} has {len(dev)} dev tasks; gates and checkpoints need 2+")
        self.dev_gate, self.dev_select = split_dev(dev, cfg.seed)
        self.model = model
        self.reflector = reflector
        self.out = Path(out)
        self.baselines = list(baselines) or [
            Baseline(f"untrained {model.name}", model, cfg.system_prompt)
        ]
        self.observer = observer
        seed = seed_playbook or Playbook()
        self.pb = seed.model_copy(
            update={
                "token_budget": cfg.playbook_budget,
                "sections": tuple(dict.fromkeys(cfg.sections + seed.sections)),
            }
        )
        self.ledger = Ledger(budget=cfg.budget_tokens)
        self.lint = LeakLint(self.train)
        self.curator = Curator(
            lint=self.lint,
            max_deltas=cfg.max_deltas,
            max_words=cfg.max_words,
            dedup_similarity=cfg.dedup_similarity,
        )
        self.sampling = Sampling(temperature=cfg.temperature, max_tokens=cfg.max_tokens)
        self.history: list[PlaybookVersion] = []
        self.checkpoints: list[dict[str, Any]] = []
        self.recent: list[str] = []
        self.gate_rejected: list[Delta] = []
        self.next_delta = 1
        self.rejections_in_a_row = 0
        self.checkpoints_since_best = 0

    def identity(self) -> dict[str, Any]:
        return {
            "env_id": self.env.id,
            "env_hash": self.env.content_hash(),
            "model": self.model.name,
            "reflector": self.reflector.name,
            # a temperature is named only when set, so runs from before it existed still resume
            "baselines": [
                [b.name, b.model.name, b.system_prompt]
                + ([] if b.temperature is None else [b.temperature])
                for b in self.baselines
            ],
            "seed_playbook": self.pb.hash,
            "config": self.cfg.identity(),
            "splits": self.tasks.split_record()["tasks"],
        }

    # -- plumbing ------------------------------------------------------------------------------

    def emit(self, event: dict[str, Any]) -> dict[str, Any]:
        logged = self.log.emit(event)
        if self.observer is not None:
            self.observer(logged)
        return logged

    def version(self, pb: Playbook, iteration: int, reason: str) -> None:
        """Record a new version; its parent is the last recorded one (intermediate candidates,
        such as an unpromoted batch or a half-pruned playbook, are not versions)."""
        if self.history:
            if pb.hash == self.history[-1].hash:
                return
            pb = pb.model_copy(update={"parent": self.history[-1].hash})
        self.pb = pb
        v = PlaybookVersion(
            hash=pb.hash, parent=pb.parent, iteration=iteration, reason=reason, playbook=pb
        )
        self.history.append(v)
        self.emit(
            {
                "kind": "version",
                "iteration": iteration,
                "hash": pb.hash,
                "parent": pb.parent,
                "reason": reason,
                "playbook": pb.model_dump(mode="json"),
            }
        )

    def open(self) -> None:
        """Open the run directory: the append-only log (replayed on resume) and the roller."""
        self.out.mkdir(parents=True, exist_ok=True)
        self.log = RunLog.open(self.out, self.identity())
        self.roller = Roller(
            self.env,
            self.model,
            root=self.out / "episodes",
            ledger=self.ledger,
            sampling=self.sampling,
            system_prompt=self.cfg.system_prompt,
            concurrency=self.cfg.concurrency,
        )
