"""How a run is played, apart from what is played (environment, model, split, epochs, out).

`eval_async` takes these as one typed object so that its signature stays readable and every
caller (the CLI, certificates, playbook rollouts, guard baselines) passes the same record;
`workgym.eval` still accepts them as keyword arguments, for scripts.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

from workgym.core.errors import ConfigError
from workgym.core.model import Sampling
from workgym.core.run_limits import RunLimits

if TYPE_CHECKING:
    from workgym.run.executors.executor import Executor
    from workgym.run.policy import Policy


@dataclass(frozen=True, kw_only=True)
class EvalOptions:
    """Everything about a run besides its environment, model, split, epochs and folder."""

    policy: Policy | None = None
    """A ready policy; when given, the model and the policy fields below are not used."""
    concurrency: int = 8
    """Episodes in flight at once."""
    seed: int = 0
    """The run seed; each (task, epoch) derives its own (`run.attempt.episode_seed`)."""
    limit: int | None = None
    """Play only the first `limit` tasks of the split."""
    sample: int | None = None
    """Play a seeded, family-stratified sample of this many tasks (run.sample; the run's seed)."""
    max_retries: int = 2
    """Retries of a retryable model error, the same in every arm."""
    retry_backoff_s: float = 0.5
    """Seconds before the first retry; doubled before each next one."""
    progress: bool = True
    """Show a progress bar on stderr."""
    base_url: str | None = None
    """The provider's endpoint (an OpenAI-compatible server)."""
    api_key: str | None = None
    """The provider's key, when not in the environment."""
    sampling: Sampling | None = None
    """Sampling settings of the policy."""
    system_prompt: str = ""
    """The policy's system prompt, after the environment's instructions."""
    playbook: str | None = None
    """A playbook the policy carries (workgym.train.playbook)."""
    forced: list[str] = field(default_factory=list)
    """Gates the caller overrode (e.g. `admission`), written into run.json to stay visible."""
    executor: str | Executor = "asyncio"
    """Where episodes run: the asyncio pool, `ray`, or an Executor (workgym.run.executors)."""
    address: str | None = None
    """The Ray cluster's address, for executor='ray'."""
    label: str | None = None
    """The progress bar's label (default "eval ENV_ID"; `workgym check` names each of its runs)."""
    run_limits: RunLimits | None = None
    """Per-episode budgets of this run (repeated calls, tokens, seconds; core.run_limits),
    written into run.json; None: only the environment's own limits (the library's default, so
    a check's oracle or a certificate's arms play exactly as admitted). `workgym eval` sets
    its own defaults."""
    retry_errors: bool = False
    """Also re-run episodes whose current line ended in an error (run.rundir marks the old
    line superseded); without it a resume skips every episode that has a line."""

    @classmethod
    def of(cls, **given: Any) -> EvalOptions:
        """Options from keyword arguments, with a clear error for an unknown one."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(given) - known)
        if unknown:
            names = ", ".join(sorted(known))
            raise ConfigError(f"unknown eval option(s) {', '.join(unknown)}; use any of {names}")
        if given.get("forced") is None:
            given.pop("forced", None)
        return cls(**given)
