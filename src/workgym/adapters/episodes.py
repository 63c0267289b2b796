"""What every adapter shares: the tasks another harness may see, and one workgym episode per
rollout, stepped with the harness's assistant messages.

Other harnesses own the loop that calls the model; workgym keeps owning what happens to each
assistant message (tool execution, limits, the first accepted submission, scoring, the audit),
so a task scores the same under any harness as under `workgym eval`: `EpisodeDriver` is the one
place that does it, and every adapter goes through it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from workgym.core.driver import EpisodeDriver
from workgym.core.errors import ConfigError
from workgym.core.messages import Message
from workgym.core.model import Completion, Sampling
from workgym.run.policy import Policy

if TYPE_CHECKING:
    from workgym.core.environment import Environment
    from workgym.core.tasks import Task
    from workgym.core.tools import ToolSpec

SEALED = (
    "the test split is sealed: adapters serve train or dev (workgym eval --split test scores it)"
)


class HarnessModel:
    """The model slot of an episode whose turns come from another harness (`vf-eval`,
    `inspect eval`, an OpenEnv client); it names them in the episode record."""

    def __init__(self, name: str) -> None:
        self.name = name

    async def complete(
        self, messages: list[Message], tools: list[ToolSpec], sampling: Sampling
    ) -> Completion:
        raise ConfigError(f"{self.name}: this episode's turns come from its harness, not workgym")


def training_tasks(env: Environment, split: str) -> list[Task]:
    """The tasks of a split of the training view; the test split is refused."""
    if split == "test":
        raise ValueError(SEALED)
    if split not in ("train", "dev"):
        raise ValueError(f"unknown split {split!r}: use train or dev")
    tasks = env.taskset.training_view().split(split)
    if not tasks:
        raise ValueError(f"split {split!r} of {env.id} has no tasks")
    return tasks


def open_episode(env: Environment, task: Task, model_name: str, seed: int = 0) -> EpisodeDriver:
    """A fresh episode of `task` (its own tool state), played by `model_name`'s harness."""
    policy = Policy(HarnessModel(model_name))
    return EpisodeDriver(env, task, policy, seed=seed, split=env.taskset.split_of(task))


def opening(env: Environment, task: Task) -> list[Message]:
    """The messages an episode opens with (system text, then the prompt), as workgym eval has."""
    return Policy(HarnessModel("adapter")).render(env, task)
