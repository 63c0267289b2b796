"""Policy: what acts in an environment — a model, a system prompt, a playbook and sampling.

Its identity is a hash of those parts, so two runs with the same hash are the same agent and a
run directory can refuse to mix episodes of different agents.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

from workgym.messages import Message
from workgym.models import get_model
from workgym.models.base import Model, Sampling, TaskAwareModel
from workgym.tasks import canonical_json

if TYPE_CHECKING:
    from workgym.environment import Environment
    from workgym.tasks import Task

PLAYBOOK_HEADER = "## Playbook (strategies learned in this job)"


class Policy:
    def __init__(
        self,
        model: Model | TaskAwareModel | str,
        *,
        system_prompt: str = "",
        playbook: str | None = None,
        sampling: Sampling | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
    ) -> None:
        self.model = get_model(model, base_url=base_url, api_key=api_key)
        self.system_prompt = system_prompt
        self.playbook = playbook
        self.sampling = sampling or Sampling()
        self.hash = hashlib.sha256(canonical_json(self.describe()).encode()).hexdigest()[:16]

    @property
    def model_name(self) -> str:
        return self.model.name

    def describe(self) -> dict[str, Any]:
        return {
            "model": self.model.name,
            "system_prompt": self.system_prompt,
            "playbook": self.playbook,
            "sampling": self.sampling.model_dump(exclude={"seed"}),
        }

    def system_text(self, env: Environment) -> str:
        parts = [env.instructions, self.system_prompt]
        if self.playbook:
            parts.append(f"{PLAYBOOK_HEADER}\n{self.playbook}")
        return "\n\n".join(p.strip() for p in parts if p and p.strip())

    def render(self, env: Environment, task: Task) -> list[Message]:
        """The opening messages of an episode: system text, then the task prompt."""
        text = self.system_text(env)
        head = [Message(role="system", content=text)] if text else []
        return head + task.messages()

    def model_for(self, task: Task, env: Environment) -> Model:
        """The model that plays this episode; test doubles get a per-episode instance."""
        if isinstance(self.model, TaskAwareModel):
            return self.model.for_task(task, env)
        return self.model
