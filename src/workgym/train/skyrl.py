"""A SkyRL-gym `BaseTextEnv` over any workgym environment, registered by id.

SkyRL (Ray-native, multi-node RL) creates one text environment per trajectory with
`skyrl_gym.make(env_class, env_config=..., extras=row_fields)`, then alternates: the model writes
text, `step(text)` returns observations, a reward and `done`. Here the text is parsed as a
Qwen2.5-style reply (`<tool_call>` JSON blocks, as the `hf/` provider does) and fed to an
`EpisodeDriver`, the one agent loop: tools are validated and limited exactly as in `workgym eval`.
The reward is 0 until the episode ends, then the verifier's reward; the verdict and the episode
record go in `metadata`, which SkyRL keeps away from the model.

Task fields travel in the dataset row (SkyRL passes every non-prompt column as `extras`):
`task_id` picks the task. Only the training view of the tasks is reachable (train and dev), never
the sealed test split. Build rows with `dataset_rows(env)`; make the environment known to SkyRL
with `register(env)` (id defaults to the workgym environment id).

skyrl-gym 0.4.0 installs from PyPI without a GPU; when it is absent this module still imports
and the class keeps the same interface (`init`, `step`, `close`, `get_metrics`), but `register`
says how to install it.
"""

from __future__ import annotations

import asyncio
import importlib
from functools import cache
from pathlib import Path
from typing import Any

from workgym.core.driver import EpisodeDriver
from workgym.core.environment import Environment
from workgym.core.errors import ConfigError
from workgym.core.loading import load
from workgym.core.model import Completion
from workgym.models.hf import parse_reply
from workgym.run.attempt import episode_seed
from workgym.run.finish import finish_episode
from workgym.run.policy import Policy
from workgym.train.trl.env_factory import TrainerDriven

try:
    _skyrl: Any = importlib.import_module("skyrl_gym")
    _Base: Any = importlib.import_module("skyrl_gym.envs.base_text_env").BaseTextEnv
except ImportError:  # the adapter's interface without the package (see the module doc)
    _skyrl = None

    class _Base:  # type: ignore[no-redef]
        def __init__(self) -> None:
            self.turns = 0
            self.max_turns = 1


END_MARKERS = ("<|im_end|>", "<|endoftext|>")


@cache
def _environment(ref: str) -> Environment:
    return load(ref)


class WorkgymTextEnv(_Base):  # type: ignore[misc]
    """One workgym episode as a SkyRL text environment.

    `env_config["env"]` (or `extras["workgym_env"]`) is the environment, its id or directory;
    `extras["task_id"]` the task; `env_config["model"]` the name recorded in the episode.
    """

    def __init__(self, env_config: Any = None, extras: dict[str, Any] | None = None) -> None:
        super().__init__()
        config = dict(env_config or {})
        extras = dict(extras or {})
        ref = config.get("env") or extras.get("workgym_env")
        if not ref:
            raise ConfigError("WorkgymTextEnv needs env_config['env']: a workgym env id or dir")
        self.env = ref if isinstance(ref, Environment) else _environment(str(ref))
        view = self.env.taskset.training_view()
        task_id = str(extras.get("task_id", ""))
        if task_id not in view:
            raise ConfigError(
                f"extras task_id {task_id!r} is not a train or dev task of {self.env.id} "
                "(the test split is sealed); build rows with workgym.train.skyrl.dataset_rows"
            )
        self.task = view[task_id]
        self.max_turns = self.env.limits.max_turns
        epoch = int(extras.get("epoch", 0))
        seed = episode_seed(int(config.get("seed", 0)), task_id, epoch)
        model = TrainerDriven(str(config.get("model", "skyrl/policy")))
        policy = Policy(model, system_prompt=str(config.get("system_prompt", "")))
        self._loop = asyncio.new_event_loop()
        self.driver = EpisodeDriver(
            self.env, self.task, policy, seed=seed, epoch=epoch, split=view.split_of(self.task)
        )
        self.episode: Any = None

    def init(self, prompt: Any = None) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """The opening messages as the agent sees them (the row's prompt is not trusted)."""
        messages = [m.to_openai() for m in self.driver.messages]
        tools = [s.to_openai() for s in self.driver.toolkit.specs]
        return messages, {"tools": tools, "task_id": self.task.id}

    def step(self, action: str) -> dict[str, Any]:
        """Apply one model reply; reward is the verdict's when the episode ends, else 0."""
        self.turns += 1
        text = action
        for marker in END_MARKERS:
            text = text.replace(marker, "")
        reply = parse_reply(text)
        observation = self._loop.run_until_complete(self.driver.step(Completion(message=reply)))
        if not self.driver.done and self.turns >= self.max_turns:
            self.driver.truncate("max_turns")
        if not self.driver.done:
            observations = [
                {"role": "tool", "content": m.content, "name": m.name or ""} for m in observation
            ]
            return {"observations": observations, "reward": 0.0, "done": False, "metadata": {}}
        self.episode = self._loop.run_until_complete(finish_episode(self.driver))
        verdict = self.episode.verdict
        reward = float(verdict.reward) if verdict is not None and verdict.trainable else 0.0
        metadata = {
            "status": verdict.status.value if verdict else "error",
            "trainable": bool(verdict and verdict.trainable),
            "success": self.episode.success,
            "subscores": dict(verdict.subscores) if verdict else {},
            "episode": self.episode.model_dump(mode="json"),
        }
        return {"observations": [], "reward": reward, "done": True, "metadata": metadata}

    def get_metrics(self) -> dict[str, Any]:
        episode = self.episode
        return {
            "turns": self.turns,
            "success": float(bool(episode and episode.success)),
            "reward": float(episode.reward) if episode is not None else 0.0,
        }

    def close(self) -> None:
        if not self._loop.is_closed():
            self._loop.close()


def dataset_rows(
    env: Environment, split: str = "train", *, env_class: str | None = None
) -> list[dict[str, Any]]:
    """SkyRL dataset rows for a split of the training view (`train` or `dev`)."""
    tasks = env.taskset.training_view().split(split)
    policy = Policy(TrainerDriven("skyrl/policy"))
    return [
        {
            "prompt": [m.to_openai() for m in policy.render(env, task)],
            "env_class": env_class or env.id,
            "task_id": task.id,
        }
        for task in tasks
    ]


def register(env: Environment | str | Path, env_id: str | None = None) -> str:
    """Register `env` with skyrl_gym under `env_id` (default: the workgym id); return the id.

    Registering the same id again is a no-op, so every Ray worker can call this on start-up.
    """
    if _skyrl is None:
        raise ConfigError("SkyRL support needs skyrl-gym: pip install skyrl-gym")
    environment = env if isinstance(env, Environment) else load(env)
    name = env_id or environment.id

    def make(env_config: Any = None, extras: dict[str, Any] | None = None) -> WorkgymTextEnv:
        # SkyRL passes its own per-class config; the environment itself is bound here.
        config = {**dict(env_config or {}), "env": environment}
        return WorkgymTextEnv(config, extras)

    if name not in _skyrl.registry:
        _skyrl.register(id=name, entry_point=make)
    return name
