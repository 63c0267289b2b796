"""A workgym environment as a real `gymnasium.Env`, with text observations and actions.

Gymnasium's own tooling (`check_env`, `gymnasium.make`, wrappers, vector envs) only accepts a
`gymnasium.Env` whose observations live in its declared space. A conversation has no fixed
shape, so both spaces are `Text` over printable ASCII: an observation is the JSON of the
messages (and, on reset, the tool schemas) with non-ASCII escaped, an action is an assistant
message in chat-completions JSON, or plain text (a plain answer). The verdict, the task's
answer stay out of observations; the verdict's status and the audit's flags are in the last
step's `info`, and the full episode record in `last_episode`.

Importing this module registers every workgym environment with Gymnasium under its own id:
`gymnasium.make("workgym/toy-shop")`, or in one line without the import,
`gymnasium.make("workgym.adapters.gym_adapter:workgym/toy-shop")`.
"""

from __future__ import annotations

import json
from typing import Any, SupportsFloat

from workgym.adapters.extras import require
from workgym.core.environment import Environment
from workgym.core.episode import Episode
from workgym.core.loading import load, registered
from workgym.core.messages import Message
from workgym.core.messages import from_openai as message_from_openai
from workgym.run.gym import GymEnv, draw_task
from workgym.run.policy import Policy

require("gymnasium", "gymnasium")  # the install hint, before the imports it guards
import gymnasium  # noqa: E402
from gymnasium import spaces  # noqa: E402

PRINTABLE = "".join(chr(c) for c in range(32, 127))
MAX_OBSERVATION_CHARS = 2**24
MAX_ACTION_CHARS = 2**16


def text_space(max_length: int) -> spaces.Text:
    """Printable ASCII of any length up to `max_length`; JSON with ensure_ascii stays inside."""
    return spaces.Text(max_length=max_length, min_length=0, charset=PRINTABLE)


def parse_action(action: str | dict[str, Any] | Message) -> Message:
    """An action as the assistant message it stands for: chat-completions JSON (or its dict),
    a `Message`, or any other text, which is a plain assistant reply."""
    if isinstance(action, Message):
        return action
    if isinstance(action, dict):
        return message_from_openai(action)
    try:
        data = json.loads(action)
    except ValueError:
        data = None
    if isinstance(data, dict) and ("tool_calls" in data or data.get("role") == "assistant"):
        return message_from_openai(data)
    return Message(role="assistant", content=action)


class WorkgymEnv(gymnasium.Env[str, str]):  # type: ignore[misc]
    """`reset(seed=, options={"task_id": ...})` draws a task from the split by seed (seeds
    0..n-1 visit each task once); `step(action)` plays one assistant turn."""

    metadata: dict[str, Any] = {"render_modes": []}

    def __init__(
        self, env: Environment | str, *, split: str = "train", policy: Policy | None = None
    ) -> None:
        self.env = env if isinstance(env, Environment) else load(env)
        if split not in ("train", "dev"):
            raise ValueError(f"split {split!r}: a Gymnasium env draws from train or dev")
        self.split = split
        self.facade = GymEnv(self.env, policy)
        self.observation_space = text_space(MAX_OBSERVATION_CHARS)
        self.action_space = text_space(MAX_ACTION_CHARS)
        self.render_mode = None
        self.last_episode: Episode | None = None

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        task_id = (options or {}).get("task_id")
        if seed is None:  # continue the sequence the last seed started (Gymnasium's contract)
            seed = int(self.np_random.integers(2**31))
        if task_id is not None:
            taskset, key = self.env.taskset, str(task_id)
            if key not in taskset or taskset.split_of(taskset[key]) == "test":
                raise ValueError(f"no task {task_id!r} in the training view of {self.env.id}")
            task = taskset[key]
        else:
            task = draw_task(self.env, seed, self.split)
        observation, info = self.facade.reset(task, seed=seed)
        return _text(observation), info

    def step(
        self, action: str | dict[str, Any] | Message
    ) -> tuple[str, SupportsFloat, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.facade.step(parse_action(action))
        if "episode" in info:
            self.last_episode = info["episode"]
            info = end_info(self.last_episode)
        return _text(obs), reward, terminated, truncated, info

    def close(self) -> None:
        self.facade.close()


def end_info(episode: Episode) -> dict[str, Any]:
    """The end of an episode in `info`: the verdict and the audit, as plain values, so two
    equal episodes give equal info (the full record, with timings, is `last_episode`)."""
    verdict = episode.verdict
    return {
        "task_id": episode.task_id,
        "status": verdict.status.value if verdict else "error",
        "success": episode.success,
        "reward": episode.reward,
        "outcome": episode.outcome,
        "truncation": episode.truncation,
        "flags": list(episode.flags),
    }


def _text(observation: dict[str, Any]) -> str:
    return json.dumps(observation, ensure_ascii=True, separators=(",", ":"))


def make(env: str, **kwargs: Any) -> WorkgymEnv:
    """Gymnasium's entry point: `gymnasium.make(ENV_ID)` calls this with the workgym id."""
    return WorkgymEnv(env, **kwargs)


def register_all() -> list[str]:
    """Register every workgym environment with Gymnasium (idempotent); returns the ids."""
    ids = []
    for env_id in sorted(registered()):
        if env_id not in gymnasium.registry:
            gymnasium.register(id=env_id, entry_point=make, kwargs={"env": env_id})
        ids.append(env_id)
    return ids


register_all()
