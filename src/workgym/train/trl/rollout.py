"""A TRL `rollout_func` that plays real workgym episodes with the policy being trained.

TRL calls `rollout(prompts, trainer)` once per generation batch, each prompt already repeated
once per generation of its group. Each prompt here is a task id (the dataset this module builds
holds nothing else), so the trainer never sees task text it could leak into logs beyond the id,
and the agent's real prompt is rendered by the Policy exactly as in `workgym eval`.

Every episode goes through `run_episode`, the one agent loop: tool calls are validated, limits
enforced and the verdict computed the same way as in evaluation. The episode's per-turn token ids
are laid end to end (`tokens.episode_tokens`), with mask 1 on the model's tokens and 0 on what the
environment inserted. Reward, success, status and subscores go back as extra keys that reward
functions read (`workgym_reward` below is the one `train_grpo` uses). An episode that errored or
whose verifier failed gets reward None, which TRL turns into a zero advantage: masked out of
training and counted, never a silent zero.

Only tasks of the train split are loaded, from `env.taskset.training_view()`; asking for
anything else is impossible because those tasks are not in the table.
"""

from __future__ import annotations

import asyncio
import json
import statistics
from collections import Counter
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, Field

from workgym.core.environment import Environment
from workgym.core.episode import Episode
from workgym.core.errors import ConfigError
from workgym.core.model import Model, Sampling
from workgym.core.tasks import Task
from workgym.models.hf import HFModel, TokenGenerator
from workgym.run.attempt import AttemptSpec, attempt
from workgym.run.policy import Policy
from workgym.run.rundir import RunDir
from workgym.train.trl.tokens import EpisodeTokens, TokenMismatchError, episode_tokens

GeneratorFactory = Callable[[Any], TokenGenerator]


class RolloutStats(BaseModel):
    """What one generation batch scored: a point of the reward curve."""

    step: int
    episodes: int
    mean_reward: float | None
    min_reward: float | None = None
    max_reward: float | None = None
    success_rate: float
    masked: int = 0  # episodes with no trainable reward (error or verifier_error)
    groups_with_variance: int = 0
    groups: int = 0
    mean_turns: float = 0.0
    mean_model_tokens: float = 0.0
    statuses: dict[str, int] = Field(default_factory=dict)


def train_tasks(env: Environment) -> dict[str, Task]:
    """The train split, read through the training view (the test split is not in it)."""
    tasks = env.taskset.training_view().split("train")
    if not tasks:
        raise ConfigError(
            f"{env.id} has no tasks in its train split; generate more task families "
            "or change the split fractions"
        )
    return {t.id: t for t in tasks}


def reward_of(episode: Episode) -> float | None:
    """The trainable reward of an episode, or None when it must be masked out."""
    if episode.outcome == "error" or episode.verdict is None or not episode.verdict.trainable:
        return None
    return episode.verdict.reward


def workgym_reward(
    prompts: list[Any], completions: list[Any], workgym_reward: list[float | None], **_: Any
) -> list[float | None]:
    """TRL reward function: the verifier's reward, as the rollout returned it."""
    return list(workgym_reward)


class WorkgymRollout:
    """Callable as TRL's `rollout_func`. One instance per training run.

    `generator_factory(trainer)` picks how tokens are generated: None means the trainer's own
    model through `hf/` (CPU, or one GPU without vLLM); `vllm.server_generator(url)` uses a
    `trl vllm-serve` server that TRL keeps in sync with the trained weights.
    """

    def __init__(
        self,
        env: Environment,
        *,
        model_name: str,
        sampling: Sampling | None = None,
        system_prompt: str = "",
        generator_factory: GeneratorFactory | None = None,
        run_dir: RunDir | None = None,
        seed: int = 0,
        concurrency: int = 8,
        on_stats: Callable[[RolloutStats], None] | None = None,
    ) -> None:
        self.env = env
        self.tasks = train_tasks(env)
        self.model_name = model_name if model_name.startswith("hf/") else f"hf/{model_name}"
        self.sampling = sampling or Sampling(temperature=1.0, max_tokens=64)
        self.system_prompt = system_prompt
        self.generator_factory = generator_factory
        self.run_dir = run_dir
        self.seed = seed
        self.concurrency = concurrency
        self.on_stats = on_stats
        self.plays: Counter[str] = Counter()
        self.history: list[RolloutStats] = []
        self.last_episodes: list[Episode] = []
        self._model: HFModel | None = None
        self._eos_id = 0

    def dataset_rows(self) -> list[dict[str, str]]:
        """One row per train task; the prompt column is the task id (see the module doc)."""
        return [{"prompt": task_id} for task_id in self.tasks]

    def policy(self, model: Model) -> Policy:
        return Policy(model, system_prompt=self.system_prompt, sampling=self.sampling)

    def model_for(self, trainer: Any) -> HFModel:
        """The trained model behind the `hf/` provider (built once; it follows the weights)."""
        if self._model is None:
            network = trainer.accelerator.unwrap_model(trainer.model)
            tokenizer = trainer.processing_class
            generator = self.generator_factory(trainer) if self.generator_factory else None
            self._model = HFModel(
                self.model_name, model=network, tokenizer=tokenizer, generator=generator
            )
            self._eos_id = int(tokenizer.eos_token_id)
        return self._model

    def __call__(self, prompts: list[Any], trainer: Any) -> dict[str, list[Any]]:
        model = self.model_for(trainer)
        tasks = [self.task(p) for p in prompts]
        step = int(trainer.state.global_step)
        episodes = asyncio.run(self.play(tasks, model, step))
        self.last_episodes = episodes
        if episodes and all(e.outcome == "error" for e in episodes):
            raise RuntimeError(f"every episode of this rollout failed; first: {episodes[0].error}")
        limit = int(getattr(trainer, "max_completion_length", 0) or 0)
        stats = rollout_stats(episodes, step, int(getattr(trainer, "num_generations", 1) or 1))
        self.history.append(stats)
        if self.on_stats is not None:
            self.on_stats(stats)
        return self.pack(episodes, limit)

    def task(self, prompt: Any) -> Task:
        key = prompt if isinstance(prompt, str) else json.dumps(prompt)
        task = self.tasks.get(key)
        if task is None:
            raise ConfigError(
                f"rollout got prompt {key[:60]!r}, which is not a train task id of {self.env.id}; "
                "build the dataset with WorkgymRollout.dataset_rows()"
            )
        return task

    async def play(self, tasks: list[Task], model: Model, step: int) -> list[Episode]:
        """Play one episode per task (repeats included), each with its own seed."""
        policy = self.policy(model)
        plays = []
        for task in tasks:
            plays.append((task, self.plays[task.id]))
            self.plays[task.id] += 1
        gate = asyncio.Semaphore(self.concurrency)

        async def one(task: Task, epoch: int) -> Episode:
            async with gate:
                spec = AttemptSpec(
                    env=self.env,
                    policy=policy,
                    task=task,
                    epoch=epoch,
                    run_seed=self.seed,
                    max_retries=0,
                    retry_backoff_s=0.0,
                )
                return await attempt(spec)

        episodes = list(await asyncio.gather(*(one(t, e) for t, e in plays)))
        if self.run_dir is not None:
            for episode in episodes:
                self.run_dir.append(episode)
        return episodes

    def pack(self, episodes: list[Episode], max_completion: int = 0) -> dict[str, list[Any]]:
        """The dict TRL expects, plus the verdict fields reward functions read."""
        out: dict[str, list[Any]] = {
            key: []
            for key in (
                "prompt_ids",
                "completion_ids",
                "logprobs",
                "env_mask",
                "workgym_reward",
                "workgym_success",
                "workgym_status",
                "workgym_subscores",
                "workgym_task_id",
                "workgym_turns",
            )
        }
        for episode in episodes:
            reward = reward_of(episode)
            turns = episode.trainer.turn_tokens if episode.trainer is not None else None
            try:
                tokens = episode_tokens(turns)
            except TokenMismatchError:
                if turns:  # the provider broke exactness: a bug to report
                    raise
                # No model turn at all (the episode errored first): a one-token placeholder
                # with mask 0 and no reward, so the batch keeps its shape and nothing trains.
                tokens = EpisodeTokens(
                    prompt_ids=[self._eos_id], completion_ids=[self._eos_id], env_mask=[0],
                    logprobs=[0.0],
                )  # fmt: skip
                reward = None
            if max_completion:
                tokens = tokens.truncated(max_completion)
            out["prompt_ids"].append(tokens.prompt_ids)
            out["completion_ids"].append(tokens.completion_ids)
            out["logprobs"].append(tokens.logprobs)
            out["env_mask"].append(tokens.env_mask)
            out["workgym_reward"].append(reward)
            out["workgym_success"].append(episode.success)
            status = episode.verdict.status.value if episode.verdict else "error"
            out["workgym_status"].append(status)
            out["workgym_subscores"].append(episode.verdict.subscores if episode.verdict else {})
            out["workgym_task_id"].append(episode.task_id)
            out["workgym_turns"].append(episode.turns)
        return out


def rollout_stats(episodes: list[Episode], step: int, group: int) -> RolloutStats:
    """Reward-curve point of one generation batch (groups are consecutive runs of `group`)."""
    rewards = [reward_of(e) for e in episodes]
    scored = [r for r in rewards if r is not None]
    groups = [rewards[i : i + group] for i in range(0, len(rewards), max(group, 1))]
    varied = sum(1 for g in groups if len({r for r in g if r is not None}) > 1)
    model_tokens = [e.usage.completion_tokens for e in episodes]
    return RolloutStats(
        step=step,
        episodes=len(episodes),
        mean_reward=statistics.fmean(scored) if scored else None,
        min_reward=min(scored) if scored else None,
        max_reward=max(scored) if scored else None,
        success_rate=sum(e.success for e in episodes) / max(len(episodes), 1),
        masked=len(rewards) - len(scored),
        groups_with_variance=varied,
        groups=len(groups),
        mean_turns=statistics.fmean(e.turns for e in episodes) if episodes else 0.0,
        mean_model_tokens=statistics.fmean(model_tokens) if model_tokens else 0.0,
        statuses=dict(Counter(e.verdict.status.value if e.verdict else "error" for e in episodes)),
    )
