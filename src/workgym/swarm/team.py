"""What every team shares: the Policy a team plays through (`TeamPolicy`, which overrides
`Policy.play`), the policy each agent plays with, and how an agent's episode becomes the team's
episode (identity, every agent's record, the exact total usage, one verdict)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Protocol

from workgym.core.driver import EpisodeDriver
from workgym.core.episode import AgentRecord, Episode, TeamRecord
from workgym.core.model import Model, Sampling
from workgym.core.task_aware import TaskAwareModel
from workgym.models import get_model
from workgym.models.placement import Placement
from workgym.run.finish import finish_episode
from workgym.run.policy import Policy
from workgym.swarm.accounting import sum_usage
from workgym.swarm.sections import role_view

if TYPE_CHECKING:
    from workgym.core.environment import Environment
    from workgym.core.tasks import Task


class Team(Protocol):
    """Several agents that play one episode together (`Attempts`, `Roles`).

    `play` must return one scored Episode whose `usage` is the exact sum of its agents' usage
    (`workgym.core.episode.TeamRecord`); `describe()` is part of the policy's identity; `lead`
    is the model whose conversation becomes the episode's messages.
    """

    name: str

    @property
    def lead(self) -> Model | TaskAwareModel: ...

    def describe(self) -> dict[str, Any]: ...

    async def play(
        self, policy: Policy, env: Environment, task: Task, *, seed: int, epoch: int, split: str
    ) -> Episode: ...

    def policy(
        self,
        *,
        system_prompt: str = "",
        playbook: str | None = None,
        sampling: Sampling | None = None,
    ) -> Policy:
        """This team's Policy (`TeamPolicy`): what eval, the trainer and the certificate play.
        Defined once here for every team that names `Team` as its base."""
        return TeamPolicy(self, system_prompt=system_prompt, playbook=playbook, sampling=sampling)


class TeamPolicy(Policy):
    """A Policy whose episodes a team plays, with the policy's system prompt, playbook and
    sampling (each agent's view of them: `member_policy`).

    Its name and identity are the team's (`describe` adds the team's own description, so the
    hash is the one a team had when it sat in a Policy's model slot, and old runs resume); its
    `model` is the team's lead, the model a preflight pings. Build one with
    `Attempts(...).policy(...)`, `Roles(...).policy(...)` or `TeamPolicy(team, ...)`.
    """

    def __init__(
        self,
        team: Team,
        *,
        system_prompt: str = "",
        playbook: str | None = None,
        sampling: Sampling | None = None,
    ) -> None:
        self.team = team  # before the base hashes `describe()`
        super().__init__(
            team.lead, system_prompt=system_prompt, playbook=playbook, sampling=sampling
        )

    @property
    def model_name(self) -> str:
        return self.team.name

    @property
    def placement(self) -> Placement | None:
        """None: a team's agents may sit on different devices; `describe` names its models."""
        return None

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "team": self.team.describe()}

    def model_for(self, task: Task, env: Environment) -> Model:
        raise TypeError(f"{self.team.name} is a team: it plays through Policy.play")

    async def play(
        self, env: Environment, task: Task, *, seed: int = 0, epoch: int = 0, split: str = ""
    ) -> Episode:
        return await self.team.play(self, env, task, seed=seed, epoch=epoch, split=split)


def resolve(
    model: Model | TaskAwareModel | str, base_url: str | None, api_key: str | None
) -> Model | TaskAwareModel:
    return get_model(model, base_url=base_url, api_key=api_key)


def member_policy(
    policy: Policy,
    model: Model | TaskAwareModel,
    role: str,
    roles: Sequence[str],
    *,
    prompt: str = "",
    sampling: Sampling | None = None,
) -> Policy:
    """The policy one agent of a team plays with: the team policy's system prompt plus the
    role's prompt, the role's view of the shared playbook, and the team policy's sampling."""
    system = "\n\n".join(p.strip() for p in (policy.system_prompt, prompt) if p and p.strip())
    return Policy(
        model,
        system_prompt=system,
        playbook=role_view(policy.playbook, role, roles),
        sampling=sampling or policy.sampling,
    )


async def finish_as_team(
    driver: EpisodeDriver,
    policy: Policy,
    agents: list[AgentRecord],
    *,
    seed: int,
    started: float,
    started_at: str,
) -> Episode:
    """Turn one agent's episode into the team's: the team's identity, every agent's record, the
    exact total usage; then score it (once) through the driver."""
    ep = driver.episode
    ep.team = TeamRecord(agents=agents)
    ep.usage = sum_usage(a.usage for a in agents)
    ep.model = policy.model_name
    ep.policy_hash = policy.hash
    ep.seed = seed
    ep.started_at = started_at
    final = await finish_episode(driver)
    final.wall_time_s = time.perf_counter() - started
    return final


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")
