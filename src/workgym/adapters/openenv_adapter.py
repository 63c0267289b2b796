"""A workgym environment for OpenEnv: its `Environment` interface, its server, its client.

OpenEnv's `EnvClient` speaks one WebSocket protocol (`{"type": "reset"|"step"|"state"|"close",
"data": ...}` at `/ws`). Two servers speak it for a workgym environment:

- `openenv_app(env)`: OpenEnv's own `create_app` around `WorkgymOpenEnv` (this module), the
  reference implementation of the protocol;
- `workgym serve ENV --protocol openenv`: workgym's server (`workgym.apps.serve.openenv_ws`),
  which needs no OpenEnv install and shares the sessions, reaping and run directory of
  `workgym serve`. `bench/adapters.py` measures the two on one workload.

An action is one assistant message (`content` and chat-completions `tool_calls`); an
observation is the messages it produced (on reset: the opening messages and the tool schemas),
with the verdict's reward and `done` at the end. Reset takes `seed` (drawn from the split as
`workgym serve` draws), `task_id` and `split` (train or dev; the test split is sealed).
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import Field

from workgym.adapters.episodes import open_episode
from workgym.adapters.extras import require
from workgym.core.driver import EpisodeDriver
from workgym.core.environment import Environment
from workgym.core.loading import load
from workgym.core.messages import from_openai
from workgym.core.model import Completion
from workgym.run.finish import finish_episode
from workgym.run.gym import draw_task

require("openenv", "openenv")
from openenv.core.client_types import StepResult  # noqa: E402
from openenv.core.env_client import EnvClient  # noqa: E402
from openenv.core.env_server.http_server import create_app  # noqa: E402
from openenv.core.env_server.interfaces import Environment as OpenEnvEnvironment  # noqa: E402
from openenv.core.env_server.types import Action, Observation, State  # noqa: E402


class ChatAction(Action):  # type: ignore[misc]
    """One assistant turn: text and/or tool calls in chat-completions form."""

    content: str = ""
    tool_calls: list[dict[str, Any]] = Field(default_factory=list)


class ChatObservation(Observation):  # type: ignore[misc]
    """What the agent may see: the new messages (tool results), and on reset the tools."""

    messages: list[dict[str, Any]] = Field(default_factory=list)
    tools: list[dict[str, Any]] = Field(default_factory=list)
    task_id: str = ""


class WorkgymOpenEnv(OpenEnvEnvironment):  # type: ignore[misc]
    """One OpenEnv session = one workgym episode at a time (`EpisodeDriver`)."""

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self, env: Environment | str) -> None:
        super().__init__()
        self.env = env if isinstance(env, Environment) else load(env)
        self.driver: EpisodeDriver | None = None
        self._state = State(episode_id=None, step_count=0)

    def reset(
        self,
        seed: int | None = None,
        episode_id: str | None = None,
        task_id: str | None = None,
        split: str = "train",
        **kwargs: Any,
    ) -> ChatObservation:
        taskset = self.env.taskset  # the same draws as `workgym serve` and Gymnasium's reset
        if task_id is not None:
            if task_id not in taskset or taskset.split_of(taskset[task_id]) == "test":
                raise ValueError(f"no task {task_id!r} in the training view of {self.env.id}")
            task = taskset[task_id]
        else:
            task = draw_task(self.env, seed or 0, split)
        self.driver = open_episode(self.env, task, "openenv/client", seed=seed or 0)
        self._state = State(episode_id=episode_id or uuid.uuid4().hex, step_count=0)
        return ChatObservation(
            messages=[m.to_openai() for m in self.driver.messages],
            tools=[s.to_openai() for s in self.driver.toolkit.specs],
            task_id=task.id,
        )

    def step(self, action: ChatAction, timeout_s: float | None = None, **kwargs: Any) -> Any:
        raise RuntimeError(
            "WorkgymOpenEnv steps asynchronously: OpenEnv's server awaits step_async"
        )

    async def step_async(
        self, action: ChatAction, timeout_s: float | None = None, **kwargs: Any
    ) -> ChatObservation:
        driver = self.driver
        if driver is None or driver.done:
            raise RuntimeError("no episode running: reset first")
        message = from_openai({"content": action.content, "tool_calls": action.tool_calls})
        replies = await driver.step(Completion(message=message))
        self._state.step_count += 1
        observation = ChatObservation(
            messages=[m.to_openai() for m in replies], task_id=driver.task.id
        )
        if driver.done:
            episode = await finish_episode(driver)
            observation.reward = episode.reward
            observation.done = True
        else:
            observation.reward = 0.0
        return observation

    @property
    def state(self) -> State:
        return self._state


def openenv_app(env: Environment | str, max_concurrent_envs: int = 1024) -> Any:
    """OpenEnv's own FastAPI server for a workgym environment (run it with uvicorn)."""
    loaded = env if isinstance(env, Environment) else load(env)
    return create_app(
        lambda: WorkgymOpenEnv(loaded),
        ChatAction,
        ChatObservation,
        env_name=loaded.id,
        max_concurrent_envs=max_concurrent_envs,
    )


class WorkgymEnvClient(EnvClient[ChatAction, ChatObservation, State]):  # type: ignore[misc]
    """OpenEnv's `EnvClient`, typed for workgym's actions and observations."""

    def _step_payload(self, action: ChatAction) -> dict[str, Any]:
        payload: dict[str, Any] = action.model_dump(exclude={"metadata"})
        return payload

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[ChatObservation]:
        reward, done = payload.get("reward"), payload.get("done", False)
        observation = ChatObservation(**payload.get("observation", {}), reward=reward, done=done)
        return StepResult(observation=observation, reward=reward, done=done)

    def _parse_state(self, payload: dict[str, Any]) -> State:
        return State(**payload)


Agent = Callable[[list[dict[str, Any]], list[dict[str, Any]]], Awaitable[dict[str, Any]]]
"""An agent turn: (messages so far, tool schemas) -> one assistant message (chat-completions)."""


async def play_episode(client: Any, agent: Agent, **reset: Any) -> tuple[str, float]:
    """Play one episode over an OpenEnv client (`WorkgymEnvClient` or `GenericEnvClient`)
    against either server; returns (task id, reward)."""
    result = await client.reset(**reset)
    observation = _as_dict(result.observation)
    messages, tools = list(observation["messages"]), list(observation.get("tools") or [])
    task_id = str(observation.get("task_id", ""))
    while not result.done:
        message = await agent(messages, tools)
        result = await client.step(_action(client, message))
        messages += [{"role": "assistant", **message}, *_as_dict(result.observation)["messages"]]
    return task_id, float(result.reward or 0.0)


def _as_dict(observation: Any) -> dict[str, Any]:
    if isinstance(observation, dict):
        return observation
    data: dict[str, Any] = observation.model_dump()
    return data


def _action(client: Any, message: dict[str, Any]) -> Any:
    data = {"content": message.get("content") or "", "tool_calls": message.get("tool_calls") or []}
    return ChatAction(**data) if isinstance(client, WorkgymEnvClient) else data
