"""One episode: the agent loop for one task, and the record it leaves behind.

The loop is a small state machine (`EpisodeDriver`) so that the runner (which calls the model
itself) and the Gymnasium-style facade (where the caller brings the assistant message) share one
implementation: there is exactly one place where tool calls are executed and limits enforced.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from workgym.core.messages import Message
from workgym.core.model import Completion, Model, ModelError, Sampling, message_tokens
from workgym.core.tools import ToolResult
from workgym.core.verdict import Verdict
from workgym.guards.audit import audit

if TYPE_CHECKING:
    from workgym.core.environment import Environment
    from workgym.core.tasks import Task
    from workgym.run.policy import Policy

Outcome = Literal["terminated", "truncated", "error"]
Truncation = Literal["max_turns", "max_tokens", "time_limit"]


class TokenUsage(BaseModel):
    """Tokens of one episode. Call totals are the server's counts; `by_role` is estimated."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    retries: int = 0
    by_role: dict[str, int] = Field(
        default_factory=lambda: {"system": 0, "user": 0, "assistant": 0, "tool": 0}
    )

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def add_call(self, completion: Completion) -> None:
        self.calls += 1
        self.prompt_tokens += completion.usage.prompt_tokens
        self.completion_tokens += completion.usage.completion_tokens
        self.cached_tokens += completion.usage.cached_tokens
        self.retries += completion.retries

    def add_message(self, message: Message) -> None:
        self.by_role[message.role] = self.by_role.get(message.role, 0) + message_tokens(message)


class TurnTokens(BaseModel):
    """Token ids of one model turn, kept when the provider returns them (for trainers)."""

    prompt_token_ids: list[int] | None = None
    completion_token_ids: list[int] | None = None
    logprobs: list[float] | None = None


class AgentRecord(BaseModel):
    """One agent's share of an episode that several agents played (a team, `workgym.swarm`).

    `usage` counts that agent's own model calls only, so the episode's `usage` is the exact sum
    over its agents and every token is counted once. `transcript` is the agent's own
    conversation, bounded (`transcript_dropped` messages left out); it is empty for the agent
    whose conversation is the episode's `messages`.
    """

    name: str
    role: str
    model: str = ""
    usage: TokenUsage = Field(default_factory=TokenUsage)
    turns: int = 0
    outcome: Outcome | None = None
    answer: Any = None
    submitted: bool = False
    selected: bool = False
    transcript: list[Message] = Field(default_factory=list)
    transcript_dropped: int = 0


class Episode(BaseModel):
    """Everything that happened in one episode; one line of episodes.jsonl."""

    task_id: str
    family: str
    split: str
    epoch: int = 0
    seed: int = 0
    model: str = ""
    policy_hash: str = ""
    env_id: str = ""
    env_hash: str = ""
    messages: list[Message] = Field(default_factory=list)
    tool_calls: list[ToolResult] = Field(default_factory=list)
    answer: Any = None
    submitted: bool = False
    verdict: Verdict | None = None
    flags: list[str] = Field(default_factory=list)
    # flag -> indexes in `messages` of the assistant messages that raised it (the audit's sites)
    flag_sites: dict[str, list[int]] = Field(default_factory=dict)
    flag_details: dict[str, str] = Field(default_factory=dict)  # flag -> why the audit raised it
    usage: TokenUsage = Field(default_factory=TokenUsage)
    turns: int = 0
    turn_tokens: list[TurnTokens] | None = None
    wall_time_s: float = 0.0
    outcome: Outcome = "terminated"
    truncation: Truncation | None = None
    error: str | None = None
    started_at: str = ""
    agents: list[AgentRecord] | None = None  # None: one agent played (see AgentRecord)
    # The tools' final state, for verifiers that compare state; never written to disk.
    state: Any = Field(default=None, exclude=True)

    @property
    def reward(self) -> float:
        return self.verdict.reward if self.verdict else 0.0

    @property
    def success(self) -> bool:
        return bool(self.verdict and self.verdict.success)


class EpisodeDriver:
    """Advances one episode by one assistant message at a time."""

    def __init__(
        self,
        env: Environment,
        task: Task,
        policy: Policy,
        *,
        seed: int = 0,
        epoch: int = 0,
        split: str = "",
    ) -> None:
        self.env = env
        self.task = task
        self.limits = env.limits
        self.toolkit = env.toolkit(task, seed=seed)
        self.started = time.perf_counter()
        self.done = False
        self.episode = Episode(
            task_id=task.id,
            family=task.family,
            split=split,
            epoch=epoch,
            seed=seed,
            model=policy.model_name,
            policy_hash=policy.hash,
            env_id=env.id,
            env_hash=env.content_hash(),
            started_at=datetime.now(UTC).isoformat(timespec="milliseconds"),
            state=self.toolkit.ctx.state,
        )
        for message in policy.render(env, task):
            self._append(message)

    @property
    def messages(self) -> list[Message]:
        return self.episode.messages

    def _append(self, message: Message) -> None:
        self.episode.messages.append(message)
        self.episode.usage.add_message(message)

    def seconds_left(self) -> float | None:
        limit = self.limits.episode_timeout_s
        return None if limit is None else limit - (time.perf_counter() - self.started)

    async def step(self, completion: Completion) -> list[Message]:
        """Apply one assistant turn; return the observation (tool results) it produced."""
        if self.done:
            raise RuntimeError("episode is over; start a new one")
        ep = self.episode
        ep.turns += 1
        ep.usage.add_call(completion)
        if completion.completion_token_ids is not None:
            if ep.turn_tokens is None:
                ep.turn_tokens = []
            ep.turn_tokens.append(
                TurnTokens(
                    prompt_token_ids=completion.prompt_token_ids,
                    completion_token_ids=completion.completion_token_ids,
                    logprobs=completion.logprobs,
                )
            )
        message = completion.message
        self._append(message)
        observation: list[Message] = []
        if not message.tool_calls:
            if not self.env.has_final_tool:
                ep.answer = message.content
                ep.submitted = True
            self._end("terminated")
            return observation
        for call in message.tool_calls:
            result, submission = await self.toolkit.call(call)
            ep.tool_calls.append(result)
            reply = Message(
                role="tool", content=result.content, tool_call_id=call.id, name=call.name
            )
            self._append(reply)
            observation.append(reply)
            if submission is not None:
                ep.answer = submission.answer
                ep.submitted = True
                self._end("terminated")
                return observation  # the first accepted submission ends the episode
        self._check_limits()
        return observation

    def _check_limits(self) -> None:
        limits = self.limits
        usage = self.episode.usage
        if limits.max_total_tokens is not None and usage.total_tokens >= limits.max_total_tokens:
            self.truncate("max_tokens")
        elif self.episode.turns >= limits.max_turns:
            self.truncate("max_turns")
        else:
            left = self.seconds_left()
            if left is not None and left <= 0:
                self.truncate("time_limit")

    def truncate(self, reason: Truncation) -> None:
        self.episode.truncation = reason
        self._end("truncated")

    def fail(self, error: str) -> None:
        self.episode.error = error
        self._end("error")

    def _end(self, outcome: Outcome) -> None:
        self.done = True
        self.episode.outcome = outcome
        self.episode.wall_time_s = time.perf_counter() - self.started

    async def finish(self) -> Episode:
        """Score the episode (unless it errored) and return the record."""
        if not self.done:
            raise RuntimeError("finish() before the episode ended")
        ep = self.episode
        if ep.outcome != "error":
            ep.verdict = await self.env.score_async(self.task, ep)
        findings = audit(self.env, self.task, ep)  # GUARDS.md: every episode is audited
        ep.flags, ep.flag_sites, ep.flag_details = findings.flags, findings.sites, findings.details
        ep.wall_time_s = time.perf_counter() - self.started
        return ep


async def run_episode(
    env: Environment,
    task: Task,
    policy: Policy,
    *,
    seed: int = 0,
    epoch: int = 0,
    split: str = "",
) -> Episode:
    """Play one task to the end with the policy (`Policy.play`) and return the scored record.

    A `ModelError` propagates (the runner decides about retries, symmetrically for every arm);
    anything the model *says* is handled inside the episode and never raises.
    """
    return await policy.play(env, task, seed=seed, epoch=epoch, split=split)


async def play_alone(
    env: Environment,
    task: Task,
    policy: Policy,
    *,
    seed: int = 0,
    epoch: int = 0,
    split: str = "",
) -> Episode:
    """The single-agent episode: the policy's model plays the task, then it is scored."""
    driver = EpisodeDriver(env, task, policy, seed=seed, epoch=epoch, split=split)
    await drive(driver, policy.model_for(task, env), policy.sampling.with_seed(seed))
    return await driver.finish()


async def drive(
    driver: EpisodeDriver,
    model: Model,
    sampling: Sampling,
    *,
    stop: Callable[[], Truncation | None] | None = None,
) -> None:
    """Call the model and step the driver until the episode ends; scoring is `finish()`'s job.

    `stop` is a caller's own limit, checked after every turn (a team's token budget): when it
    names a reason, the episode is truncated with it.
    """
    import asyncio

    specs = driver.toolkit.specs
    while not driver.done:
        left = driver.seconds_left()
        if left is not None and left <= 0:  # out of time before the turn: no call at all
            driver.truncate("time_limit")
            break
        try:
            if left is None:
                completion = await model.complete(driver.messages, specs, sampling)
            else:  # a deadline, not wait_for: no extra task per model call
                async with asyncio.timeout(left):
                    completion = await model.complete(driver.messages, specs, sampling)
        except TimeoutError:
            driver.truncate("time_limit")
            break
        except ModelError:
            raise
        await driver.step(completion)
        if stop is not None and not driver.done:
            reason = stop()
            if reason is not None:
                driver.truncate(reason)
