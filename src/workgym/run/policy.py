"""Policy: what acts in an environment — a model, a system prompt, a playbook and sampling.

Its identity is a hash of those parts, so two runs with the same hash are the same agent and a
run directory can refuse to mix episodes of different agents.

`Policy.play` is how a policy acts on one task; every episode (eval, training rollouts,
certificates) goes through it. One agent (the model) plays by default; a subclass changes how
the policy acts by overriding `play` and what it is by overriding `describe`. A team of agents
is such a subclass (`workgym.swarm.TeamPolicy`), so every consumer of a Policy accepts a team
unchanged. Code that is handed either a model or a team (`eval`, the playbook trainer) builds
its policy with `make_policy`: a team makes its own (`MakesPolicy`).
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any, Protocol, cast, runtime_checkable

from workgym.core.driver import EpisodeDriver, drive
from workgym.core.messages import Message
from workgym.core.model import Model, Sampling
from workgym.core.run_limits import RunLimits
from workgym.core.task_aware import TaskAwareModel
from workgym.core.tasks import canonical_json
from workgym.models import get_model
from workgym.models.placement import CPU_FLOAT32, Placement
from workgym.run.finish import finish_episode

if TYPE_CHECKING:
    from workgym.core.environment import Environment
    from workgym.core.episode import Episode
    from workgym.core.tasks import Task

PLAYBOOK_HEADER = "## Playbook (strategies learned in this job)"


@runtime_checkable
class MakesPolicy(Protocol):
    """What plays in a policy's place without being one model (a team of agents,
    `workgym.swarm`): it makes its own Policy, a subclass whose `play` it overrides."""

    name: str

    def policy(
        self,
        *,
        system_prompt: str = "",
        playbook: str | None = None,
        sampling: Sampling | None = None,
    ) -> Policy: ...


Agent = Model | TaskAwareModel | MakesPolicy
"""What a policy is made from (`make_policy`): one model, or something that makes its own."""


class Policy:
    """One model with a system prompt, a playbook and sampling; see the module docstring."""

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
        if isinstance(model, MakesPolicy):
            raise TypeError(
                f"{model.name} is a team, not a model: build its policy with "
                f"{type(model).__name__}(...).policy(...) or workgym.run.policy.make_policy"
            )
        self.model: Model | TaskAwareModel = get_model(model, base_url=base_url, api_key=api_key)
        # Checked once: isinstance against a runtime Protocol costs ~30 us, per episode.
        self._task_aware = isinstance(self.model, TaskAwareModel)
        self.system_prompt = system_prompt
        self.playbook = playbook
        self.sampling = sampling or Sampling()
        self.run_limits = RunLimits()
        """The run's per-episode budgets (set by the runner from EvalOptions); not part of the
        policy's identity: the same agent under a tighter budget is still the same agent."""
        self.hash = hashlib.sha256(canonical_json(self.describe()).encode()).hexdigest()[:16]

    @property
    def model_name(self) -> str:
        return self.model.name

    @property
    def placement(self) -> Placement | None:
        """Where a local model's weights are (`--device`, `--dtype`); None for a remote one."""
        placement = getattr(self.model, "placement", None)
        return placement if isinstance(placement, Placement) else None

    def describe(self) -> dict[str, Any]:
        """The policy's identity (hashed into `hash`); a subclass adds what it plays with."""
        out: dict[str, Any] = {
            "model": self.model_name,
            "system_prompt": self.system_prompt,
            "playbook": self.playbook,
            "sampling": self.sampling.describe(seed=False),
        }
        # Part of the identity: bfloat16 on a GPU is other numerics than float32 on a CPU. The
        # CPU's float32, what every run before device choice used, is left out so that their
        # hashes (and resumes, and certificates rebuilt from them) stay valid.
        if self.placement is not None and not self.placement.on_cpu_float32:
            out["placement"] = self.placement.describe()
        return out

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
        if self._task_aware:
            return cast(TaskAwareModel, self.model).for_task(task, env)
        return cast(Model, self.model)

    async def play(
        self, env: Environment, task: Task, *, seed: int = 0, epoch: int = 0, split: str = ""
    ) -> Episode:
        """Play one task to the end and return the scored Episode.

        One agent (the model) by default. Override this in a subclass to change how a policy
        acts (a team: `workgym.swarm.TeamPolicy`): `run_episode` and the runner call it.
        """
        return await play_alone(env, task, self, seed=seed, epoch=epoch, split=split)


def make_policy(
    agent: Agent | str,
    *,
    system_prompt: str = "",
    playbook: str | None = None,
    sampling: Sampling | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
) -> Policy:
    """The policy `agent` plays with: a Policy around a model (or a `provider/name`), or the
    policy a team makes for itself (`MakesPolicy`), with the same parts either way."""
    if isinstance(agent, MakesPolicy):
        return agent.policy(system_prompt=system_prompt, playbook=playbook, sampling=sampling)
    return Policy(
        agent,
        system_prompt=system_prompt,
        playbook=playbook,
        sampling=sampling,
        base_url=base_url,
        api_key=api_key,
    )


async def play_alone(
    env: Environment,
    task: Task,
    policy: Policy,
    *,
    seed: int = 0,
    epoch: int = 0,
    split: str = "",
) -> Episode:
    """The single-agent episode: the policy's model plays the task, then it is finished."""
    driver = EpisodeDriver(
        env, task, policy, seed=seed, epoch=epoch, split=split, run_limits=policy.run_limits
    )
    await drive(driver, policy.model_for(task, env), policy.sampling.with_seed(seed))
    return await finish_episode(driver)


async def run_episode(
    env: Environment,
    task: Task,
    policy: Policy,
    *,
    seed: int = 0,
    epoch: int = 0,
    split: str = "",
) -> Episode:
    """Play one task to the end with the policy (`Policy.play`) and return the finished record.

    A `ModelError` propagates (the runner decides about retries, symmetrically for every arm);
    anything the model *says* is handled inside the episode and never raises.
    """
    return await policy.play(env, task, seed=seed, epoch=epoch, split=split)


def recorded_placement(policy: dict[str, Any]) -> Placement | None:
    """The placement a policy record (run.json's `policy`) implies: its own, the CPU's float32
    for an `hf/` model that records none, None for a model with no local weights."""
    given = policy.get("placement")
    if isinstance(given, dict):
        return Placement(str(given.get("device")), str(given.get("dtype")))
    return CPU_FLOAT32 if str(policy.get("model", "")).startswith("hf/") else None
