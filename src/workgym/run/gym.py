"""A Gymnasium-style reset/step facade, for trainers that drive the agent loop themselves.

The observation is only what the agent may see (messages and tool schemas). Everything else —
the verdict, the task id, the episode record — travels in `info`, which the caller must keep away
from the agent; nothing in `info` is ever copied into an observation.
"""

from __future__ import annotations

import asyncio
import random
from typing import Any

from workgym.core.driver import EpisodeDriver
from workgym.core.environment import Environment
from workgym.core.episode import Episode
from workgym.core.messages import Message, from_openai
from workgym.core.model import Completion, Usage
from workgym.core.tasks import Task
from workgym.run.finish import finish_episode
from workgym.run.policy import Policy


class GymEnv:
    """`reset(task) -> (observation, info)`, `step(message) -> (obs, reward, terminated,
    truncated, info)`. Reward is 0 until the episode ends, then the verdict's reward."""

    def __init__(self, env: Environment, policy: Policy | None = None) -> None:
        self.env = env
        self.policy = policy or Policy("scripted/null")
        self._driver: EpisodeDriver | None = None
        self._loop = asyncio.new_event_loop()
        self._rng = random.Random()

    def close(self) -> None:
        if not self._loop.is_closed():
            self._loop.close()

    def reset(
        self,
        task: Task | str | None = None,
        seed: int | None = None,
        options: dict[str, Any] | None = None,
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """Start an episode: on `task` (or `options["task_id"]`), else drawn by `seed`.

        Seeds 0..n-1 walk the training split's tasks once each (`draw_task`), so a sweep over
        seeds is a sweep over tasks; without a seed the draw comes from this facade's own RNG.
        """
        task_id = (options or {}).get("task_id")
        if task is None and task_id is not None:
            task = str(task_id)
        if seed is None:
            seed = self._rng.randrange(2**31)
        if task is None:
            task = draw_task(self.env, seed)
        elif isinstance(task, str):
            if task not in self.env.taskset:
                raise KeyError(f"no task {task!r} in {self.env.id}; pick one from its train split")
            task = self.env.taskset[task]
        self._driver = EpisodeDriver(
            self.env, task, self.policy, seed=seed, split=self.env.taskset.split_of(task)
        )
        observation = {
            "messages": [m.to_openai() for m in self._driver.messages],
            "tools": [s.to_openai() for s in self._driver.toolkit.specs],
        }
        return observation, {"task_id": task.id, "split": self._driver.episode.split, "seed": seed}

    def step(
        self, message: Message | dict[str, Any], usage: Usage | None = None
    ) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        return self._loop.run_until_complete(self.astep(message, usage))

    async def astep(
        self, message: Message | dict[str, Any], usage: Usage | None = None
    ) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        driver = self._driver
        if driver is None or driver.done:
            raise RuntimeError("call reset() before step(), and again after an episode ends")
        if isinstance(message, dict):
            message = from_openai(message)
        observation = await driver.step(Completion(message=message, usage=usage or Usage()))
        obs = {"messages": [m.to_openai() for m in observation]}
        if not driver.done:
            return obs, 0.0, False, False, {}
        episode: Episode = await finish_episode(driver)
        reward = episode.reward
        info = {"episode": episode, "verdict": episode.verdict}
        return obs, reward, episode.outcome == "terminated", episode.outcome == "truncated", info


def draw_task(env: Environment, seed: int, split: str = "train") -> Task:
    """The task seed `seed` picks from a split of the training view (never the test split).

    The split's tasks are shuffled once by a fixed RNG, then seed i takes task i mod n: equal
    seeds give equal tasks, and any n consecutive seeds give n different tasks.
    """
    if split == "test":
        raise ValueError("the test split is sealed: draw from train or dev")
    tasks = env.taskset.training_view().split(split)
    if not tasks:
        raise ValueError(f"split {split!r} of {env.id} has no tasks")
    order = sorted(tasks, key=lambda t: t.id)
    random.Random(f"{env.id}/{split}").shuffle(order)
    return order[seed % len(order)]
