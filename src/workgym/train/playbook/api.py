"""`train_playbook`: the Python entry point (the CLI command is a thin wrapper around it)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from workgym.core.environment import Environment
from workgym.core.errors import ConfigError
from workgym.core.loading import load
from workgym.core.missing_extra import require
from workgym.core.model import Model
from workgym.core.task_aware import TaskAwareModel
from workgym.models import get_model
from workgym.run.policy import Agent, MakesPolicy
from workgym.train.playbook.config import TrainConfig
from workgym.train.playbook.loop import Trainer
from workgym.train.playbook.playbook import Playbook
from workgym.train.playbook.result import TrainResult
from workgym.train.playbook.scoring import Baseline
from workgym.train.playbook.state import Observer


def resolve_reflector(
    ref: Model | TaskAwareModel | str, *, base_url: str | None = None, api_key: str | None = None
) -> Model:
    """The reflector must answer a prompt it is given (a Model), not play a task."""
    model = get_model(ref, base_url=base_url, api_key=api_key)
    if not isinstance(model, Model):
        raise ConfigError(
            f"{model.name} cannot be a reflector: it plays tasks, it does not answer prompts; "
            "use openai/<model> or a scripted reflector"
        )
    return model


async def train_playbook_async(
    env: Environment | str | Path,
    model: Agent | str,
    *,
    out: str | Path,
    reflector: Model | TaskAwareModel | str | None = None,
    config: TrainConfig | None = None,
    baselines: Sequence[Baseline | Model | TaskAwareModel | str] = (),
    seed_playbook: Playbook | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
    reflector_base_url: str | None = None,
    reflector_api_key: str | None = None,
    observer: Observer | None = None,
) -> TrainResult:
    """Learn a playbook for `model` on `env` (train split; dev selects; test stays sealed).

    The reflector defaults to the agent's own model. Re-running with the same `out` and the same
    settings resumes the run and ends with the same playbook an uninterrupted run would.
    """
    require("plots", "the playbook's learning curve", "matplotlib")  # before training, not after
    environment = env if isinstance(env, Environment) else load(env)
    agent: Agent = (
        model
        if isinstance(model, MakesPolicy)
        else get_model(model, base_url=base_url, api_key=api_key)
    )
    if reflector is None:
        if not isinstance(agent, Model):
            raise ConfigError(f"{agent.name} cannot reflect; pass a reflector model")
        refl: Model = agent
    else:
        refl = resolve_reflector(
            reflector,
            base_url=reflector_base_url or base_url,
            api_key=reflector_api_key or api_key,
        )
    cfg = config or TrainConfig()
    arms = [_baseline(b, cfg, base_url, api_key) for b in baselines]
    trainer = Trainer(
        environment,
        agent,
        reflector=refl,
        out=out,
        config=cfg,
        baselines=arms,
        seed_playbook=seed_playbook,
        observer=observer,
    )
    return await trainer.run()


def _baseline(
    b: Baseline | Model | TaskAwareModel | str, cfg: TrainConfig, url: str | None, key: str | None
) -> Baseline:
    if isinstance(b, Baseline):
        return b
    model = get_model(b, base_url=url, api_key=key)
    return Baseline(f"untrained {model.name}", model, cfg.system_prompt)


def train_playbook(env: Environment | str | Path, model: Any, **kwargs: Any) -> TrainResult:
    """Synchronous `train_playbook_async` for scripts."""
    return asyncio.run(train_playbook_async(env, model, **kwargs))
