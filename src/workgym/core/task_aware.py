"""The test-double protocol: a model that sees the task and its environment for one episode.

It lives apart from `workgym.core.model` so that the providers' contract (`Model`) knows no
environment: only test doubles (`workgym.testing`, the oracle, probes) implement this one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

from workgym.core.model import Model

if TYPE_CHECKING:
    from workgym.core.environment import Environment
    from workgym.core.tasks import Task


@runtime_checkable
class TaskAwareModel(Protocol):
    """A test double that may see the task (oracle, probes). Real providers never implement this.

    The episode loop calls `for_task` once per episode and uses the returned model; nothing that
    serves a real model has access to `task.answer`.
    """

    name: str

    def for_task(self, task: Task, env: Environment) -> Model: ...
