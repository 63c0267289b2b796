"""The record one episode leaves behind: one line of episodes.jsonl.

The record is plain data. The loop that fills it is `workgym.core.driver`; what other layers add
to it is written by those layers into one typed extension each, never computed here and never
spread over the record's own fields (decision 0120): `audit` (the transcript audit's findings,
`workgym.guards.audit`), `team` (every agent's share when several played, `workgym.swarm`) and
`trainer` (token ids per turn, kept for trainers). Each is None when its layer wrote nothing.

Records written before the extensions existed carried them flat (`flags`, `flag_sites`,
`flag_details`, `agents`, `turn_tokens`); `upgrade_record` moves them into place on read, so old
run folders (and the certificates made from them) stay readable without being rewritten.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, model_validator

from workgym.core.messages import Message
from workgym.core.model import Completion, message_tokens, token_floor
from workgym.core.tools import ToolResult
from workgym.core.verdict import Verdict

Outcome = Literal["terminated", "truncated", "error"]
Truncation = Literal[
    "max_turns", "max_tokens", "time_limit", "repeat_limit", "token_budget", "time_budget"
]
"""The environment's limits (max_turns, max_tokens, time_limit) and the run's (the rest,
workgym.core.run_limits)."""


class TokenUsage(BaseModel):
    """Tokens of one episode. Call totals are the server's counts; `by_role` is estimated."""

    calls: int = 0
    """Model calls made (one per assistant turn)."""
    prompt_tokens: int = 0
    """Prompt tokens over all calls, as the server counted them."""
    completion_tokens: int = 0
    """Completion tokens over all calls, as the server counted them."""
    cached_tokens: int = 0
    """Prompt tokens the server served from its cache."""
    retries: int = 0
    """Transport retries inside the provider (not episode retries)."""
    by_role: dict[str, int] = Field(
        default_factory=lambda: {"system": 0, "user": 0, "assistant": 0, "tool": 0}
    )
    """Estimated tokens of the conversation by message role (`estimate_tokens`)."""

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def add_call(self, completion: Completion) -> None:
        self.calls += 1
        self.prompt_tokens += completion.usage.prompt_tokens
        # never fewer than the reply's size allows (a server's count can be wrong or absent)
        reported = completion.usage.completion_tokens
        self.completion_tokens += max(reported, token_floor(completion.message))
        self.cached_tokens += completion.usage.cached_tokens
        self.retries += completion.retries

    def add_message(self, message: Message) -> None:
        self.by_role[message.role] = self.by_role.get(message.role, 0) + message_tokens(message)


class TurnTokens(BaseModel):
    """Token ids of one model turn, kept when the provider returns them (for trainers)."""

    prompt_token_ids: list[int] | None = None
    """The prompt exactly as the model saw it, tokenised by the server."""
    completion_token_ids: list[int] | None = None
    """The sampled tokens of this turn."""
    logprobs: list[float] | None = None
    """One log-probability per completion token, when asked for."""


class AgentRecord(BaseModel):
    """One agent's share of an episode that several agents played (a team, `workgym.swarm`).

    `usage` counts that agent's own model calls only, so the episode's `usage` is the exact sum
    over its agents and every token is counted once.
    """

    name: str
    """The agent's name within its team."""
    role: str
    """The role it played (planner, executor, ...)."""
    model: str = ""
    """The `provider/name` of its model."""
    usage: TokenUsage = Field(default_factory=TokenUsage)
    """Its own model calls only."""
    turns: int = 0
    """Its own assistant turns."""
    outcome: Outcome | None = None
    """How its own conversation ended, when it had one."""
    answer: Any = None
    """What it submitted, if anything."""
    submitted: bool = False
    """Whether it submitted an answer."""
    selected: bool = False
    """Whether its answer became the team's."""
    transcript: list[Message] = Field(default_factory=list)
    """Its own conversation, bounded; empty for the agent whose conversation is `messages`."""
    transcript_dropped: int = 0
    """Messages left out of `transcript` by the bound."""


class AuditRecord(BaseModel):
    """What the transcript audit found in one episode; written by a finisher of the run layer
    (the default one runs `workgym.guards.audit`)."""

    flags: list[str] = Field(default_factory=list)
    """The audit's flags, sorted."""
    sites: dict[str, list[int]] = Field(default_factory=dict)
    """flag -> indexes in `Episode.messages` of the assistant messages that raised it."""
    details: dict[str, str] = Field(default_factory=dict)
    """flag -> why the audit raised it."""


class TeamRecord(BaseModel):
    """The shares of the agents that played one episode together (`workgym.swarm`)."""

    agents: list[AgentRecord]
    """Every agent's share; the episode's `usage` is their exact sum."""


class TrainerRecord(BaseModel):
    """What a trainer needs beyond the transcript: the token ids the provider returned."""

    turn_tokens: list[TurnTokens] = Field(default_factory=list)
    """Token ids per assistant turn, in order."""


_FLAT_AUDIT = {"flags": "flags", "flag_sites": "sites", "flag_details": "details"}


def upgrade_record(record: dict[str, Any]) -> dict[str, Any]:
    """One episodes.jsonl line in the current shape: the flat fields of records written before
    decision 0120 (`flags`, `flag_sites`, `flag_details`, `agents`, `turn_tokens`) moved into
    their extension (`audit`, `team`, `trainer`). A current record is returned as it is.

    Every reader of raw lines calls this (the run directory, the certificate's comparison, the
    viewer), so nothing above it has to know the old shape.
    """
    if not any(
        k in record for k in ("flags", "flag_sites", "flag_details", "agents", "turn_tokens")
    ):
        return record
    out = dict(record)
    audit = {new: out.pop(old) for old, new in _FLAT_AUDIT.items() if old in out}
    if audit and out.get("audit") is None:
        out["audit"] = {k: v for k, v in audit.items() if v is not None}
    agents = out.pop("agents", None)
    if agents is not None and out.get("team") is None:
        out["team"] = {"agents": agents}
    turn_tokens = out.pop("turn_tokens", None)
    if turn_tokens is not None and out.get("trainer") is None:
        out["trainer"] = {"turn_tokens": turn_tokens}
    return out


def record_flags(record: dict[str, Any]) -> list[str]:
    """The audit's flags of one raw episodes.jsonl line, in either shape (not the verdict's)."""
    audit = record.get("audit")
    if isinstance(audit, dict):
        return list(audit.get("flags") or [])
    return list(record.get("flags") or [])


def record_agents(record: dict[str, Any]) -> list[dict[str, Any]]:
    """The agents' shares of one raw episodes.jsonl line, in either shape; [] for one agent."""
    team = record.get("team")
    if isinstance(team, dict):
        return list(team.get("agents") or [])
    return list(record.get("agents") or [])


class Episode(BaseModel):
    """Everything that happened in one episode; one line of episodes.jsonl."""

    task_id: str
    """The task played."""
    family: str
    """The task's family (its split is a function of this)."""
    split: str
    """The split the task belongs to (train, dev, test)."""
    epoch: int = 0
    """Which repetition of the task this is within a run."""
    seed: int = 0
    """The seed handed to the tools and the model's sampling."""
    model: str = ""
    """The `provider/name` of the policy's model (or its team)."""
    policy_hash: str = ""
    """The policy's identity (`Policy.hash`)."""
    env_id: str = ""
    """The environment's registered id."""
    env_hash: str = ""
    """The environment's content hash (tasks, tools, verifier, limits)."""
    messages: list[Message] = Field(default_factory=list)
    """The whole conversation, opening messages included."""
    tool_calls: list[ToolResult] = Field(default_factory=list)
    """Every tool call and what it returned, in order."""
    answer: Any = None
    """What the agent submitted (or its last message, without a final tool)."""
    submitted: bool = False
    """Whether an answer was accepted."""
    verdict: Verdict | None = None
    """The verifier's judgement; None for an episode that errored."""
    usage: TokenUsage = Field(default_factory=TokenUsage)
    """Tokens of the whole episode (the exact sum over `team.agents` when a team played)."""
    turns: int = 0
    """Assistant turns."""
    wall_time_s: float = 0.0
    """Seconds from the first message to the end of scoring and finishing."""
    outcome: Outcome = "terminated"
    """How the episode ended."""
    truncation: Truncation | None = None
    """Which limit truncated it, if one did."""
    truncation_detail: str | None = None
    """What hit the limit, when the name alone does not say (the repeated call)."""
    error: str | None = None
    """What went wrong, for an episode that errored."""
    started_at: str = ""
    """UTC start time, ISO 8601 with milliseconds."""
    audit: AuditRecord | None = None
    """The transcript audit's findings; None when no audit ran."""
    team: TeamRecord | None = None
    """Every agent's share when several played; None when one agent played."""
    trainer: TrainerRecord | None = None
    """Token ids per turn, when the provider returned them; None otherwise."""
    state: Any = Field(default=None, exclude=True)
    """The tools' final state, for verifiers that compare state; never written to disk. Its
    type is the environment's own (`Environment.state`), which core cannot name (decision
    0120)."""

    @model_validator(mode="before")
    @classmethod
    def _upgrade(cls, data: Any) -> Any:
        return upgrade_record(data) if isinstance(data, dict) else data

    @property
    def flags(self) -> list[str]:
        """The audit's flags; empty when no audit ran (the verdict's own flags are apart)."""
        return self.audit.flags if self.audit is not None else []

    @property
    def reward(self) -> float:
        return self.verdict.reward if self.verdict else 0.0

    @property
    def success(self) -> bool:
        return bool(self.verdict and self.verdict.success)
