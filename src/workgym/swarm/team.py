"""What every team shares: the policy each agent plays with, and how an agent's episode becomes
the team's episode (identity, every agent's record, the exact total usage, one verdict)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import UTC, datetime

from workgym.core.driver import EpisodeDriver
from workgym.core.episode import AgentRecord, Episode, TeamRecord
from workgym.core.model import Model, Sampling
from workgym.core.task_aware import TaskAwareModel
from workgym.models import get_model
from workgym.run.finish import finish_episode
from workgym.run.policy import Policy
from workgym.swarm.accounting import sum_usage
from workgym.swarm.sections import role_view


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
