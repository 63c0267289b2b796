"""A Gymnasium-style reset/step facade, for trainers that drive the agent loop themselves.

The observation is only what the agent may see (messages and tool schemas). Everything else —
the verdict, the task id, the episode record — travels in `info`, which the caller must keep away
from the agent; nothing in `info` is ever copied into an observation.
"""

from __future__ import annotations

import asyncio
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

    def close(self) -> None:
        self._loop.close()

    def reset(
        self, task: Task | str | None = None, seed: int = 0
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        if task is None:
            task = self.env.taskset.training_view().split("train")[0]
        elif isinstance(task, str):
            task = self.env.taskset[task]
        self._driver = EpisodeDriver(
            self.env, task, self.policy, seed=seed, split=self.env.taskset.split_of(task)
        )
        observation = {
            "messages": [m.to_openai() for m in self._driver.messages],
            "tools": [s.to_openai() for s in self._driver.toolkit.specs],
        }
        return observation, {"task_id": task.id, "split": self._driver.episode.split}

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
