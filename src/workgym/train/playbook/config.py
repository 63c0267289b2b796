"""Settings of a playbook training run. Defaults follow docs/playbook.md.

Everything here except `concurrency` is part of the run's identity: resuming with other values
is refused, because the log would no longer describe the run.
"""

from __future__ import annotations

from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, model_validator

from workgym.train.playbook.entries import DEFAULT_SECTIONS, MAX_WORDS
from workgym.train.playbook.playbook import DEFAULT_TOKEN_BUDGET

Learner = Literal["reflect", "bootstrap"]
"""`workgym train playbook --learner`: reflect (lessons from a reflector, `TrainConfig`) or
bootstrap (worked examples from verified successes, `bootstrap.BootstrapConfig`)."""
LEARNERS: tuple[Learner, ...] = get_args(Learner)


class TrainConfig(BaseModel):
    model_config = ConfigDict(frozen=True)

    seed: int = 0
    # rollouts
    group_size: int = Field(5, ge=2, description="G: rollouts per train task")
    batch_size: int = Field(8, ge=1, description="B: train tasks per iteration")
    temperature: float = Field(0.7, ge=0, description="agent sampling temperature (> 0)")
    max_tokens: int | None = Field(None, ge=1, description="per agent call")
    system_prompt: str = ""
    # reflection and curation
    contrastive_groups: int = Field(3, ge=1, description="M: groups the reflector sees")
    max_lessons: int = Field(5, ge=0)
    max_deltas: int = Field(3, ge=0, description="deltas gated per iteration")
    max_words: int = Field(MAX_WORDS, ge=5)
    dedup_similarity: float = Field(0.9, gt=0, le=1)
    sections: tuple[str, ...] = DEFAULT_SECTIONS
    reflector_temperature: float = Field(0.0, ge=0)
    reflector_max_tokens: int | None = Field(4000, ge=1)
    reflector_schema: bool = Field(
        True, description="constrain the reflector's reply to the lesson JSON where it can"
    )
    recent_deltas: int = Field(12, ge=0, description="gate outcomes shown to the reflector")
    # gates
    dev_k: int = Field(3, ge=1, description="K: rollouts per dev task")
    gate_tasks: int = Field(8, ge=2, description="dev tasks in gate B's fresh subset")
    gate_a: bool = True
    gate_a_tolerance: float = Field(0.0, ge=0)
    hold_delta: float = Field(0.02, ge=0, description="gate B: largest reward drop for a hold")
    token_tau: float = Field(0.10, ge=0, le=1, description="gate B: token fall needed to hold")
    # counters, pruning, budget of the playbook itself
    playbook_budget: int = Field(DEFAULT_TOKEN_BUDGET, ge=50, description="playbook tokens")
    merge_similarity: float = Field(0.75, gt=0, le=1)
    prune_margin: int = Field(3, ge=1)
    prune_min_uses: int = Field(5, ge=1)
    replay_fraction: float = Field(0.25, ge=0, le=1)
    replay_threshold: float = Field(0.5, ge=0)
    max_replays: int = Field(3, ge=1)
    # stopping
    budget_tokens: int | None = Field(None, ge=1, description="training token budget")
    max_epochs: int = Field(3, ge=1)
    max_iterations: int | None = Field(None, ge=1)
    patience: int = Field(3, ge=1, description="iterations in a row without an accepted change")
    plateau: int = Field(3, ge=1, description="checkpoints in a row without a new best")
    # reporting
    ni_margin: float = Field(0.05, ge=0, description="non-inferiority margin, fixed in advance")
    # not part of the identity
    concurrency: int = Field(8, ge=1)

    @model_validator(mode="after")
    def _check(self) -> TrainConfig:
        if not self.sections or len(set(self.sections)) != len(self.sections):
            raise ValueError("sections must be a non-empty list of distinct names")
        return self

    def identity(self) -> dict[str, Any]:
        # reflector_schema came later: a run from before it (unconstrained) resumes with it off.
        off = set() if self.reflector_schema else {"reflector_schema"}
        return self.model_dump(mode="json", exclude={"concurrency", *off})
