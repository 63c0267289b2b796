"""Settings of a bootstrap run; every field is also an option of `workgym train playbook
--learner bootstrap` (the option is the field's name with dashes), with the same default.

Everything except `concurrency` is part of the run's identity (it decides the episodes and the
search), so the same settings and `--out` read the episodes back instead of paying again.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from workgym.train.playbook.playbook import DEFAULT_TOKEN_BUDGET

Search = Literal["greedy", "random"]


class BootstrapConfig(BaseModel):
    model_config = ConfigDict(frozen=True)

    seed: int = 0
    # bootstrapping: the agent's own verified successes on train
    temperature: float = Field(0.7, ge=0, description="sampling temperature on train tasks")
    samples: int = Field(3, ge=1, description="episodes per train task")
    train_tasks: int | None = Field(16, ge=1, description="train tasks sampled (None: all of them)")
    max_candidates: int = Field(8, ge=1, description="worked examples the search chooses from")
    example_chars: int = Field(600, ge=80, description="longest worked example, in characters")
    tool_output_chars: int = Field(80, ge=8, description="tool output shown per call")
    # the gated search on dev
    search: Search = Field("greedy", description="greedy forward selection or random subsets")
    max_examples: int = Field(4, ge=1, description="worked examples in the playbook")
    subsets: int = Field(8, ge=1, description="random subsets tried (search=random)")
    dev_temperature: float = Field(0.0, ge=0, description="sampling temperature on dev")
    dev_k: int = Field(1, ge=1, description="episodes per dev task")
    dev_tasks: int | None = Field(
        None, ge=2, description="dev tasks the search scores on, seeded (None: all of them)"
    )
    se_multiple: float = Field(
        1.0, ge=0, description="a change must raise dev reward by more than this many paired SEs"
    )
    min_gain: float = Field(0.0, ge=0, description="and by more than this")
    # cost
    max_tokens: int | None = Field(None, ge=1, description="per agent call")
    system_prompt: str = ""
    playbook_budget: int = Field(DEFAULT_TOKEN_BUDGET, ge=50, description="playbook tokens")
    budget_tokens: int | None = Field(None, ge=1, description="training token budget")
    # not part of the identity
    concurrency: int = Field(8, ge=1)

    def episode_cap(self, n_train: int, n_dev: int) -> int:
        """An upper bound on the episodes a run plays, stated before it runs: every sampled train
        task `samples` times, and every dev task once for the empty set and at most
        `max_examples` rounds of `max_candidates` sets (greedy stops at the first failed gate)."""
        tasks = n_train if self.train_tasks is None else min(self.train_tasks, n_train)
        dev = n_dev if self.dev_tasks is None else min(self.dev_tasks, n_dev)
        return tasks * self.samples + dev * (1 + self.max_examples * self.max_candidates)

    def identity(self) -> dict[str, Any]:
        # dev_tasks came later: a run from before it (all dev tasks) keeps its identity.
        unset = {"dev_tasks"} if self.dev_tasks is None else set()
        return self.model_dump(mode="json", exclude={"concurrency", *unset})
