"""The episode driver: the agent loop for one task, one assistant message at a time.

The loop is a small state machine (`EpisodeDriver`) so that the runner (which calls the model
itself) and the Gymnasium-style facade (where the caller brings the assistant message) share one
implementation: there is exactly one place where tool calls are executed and limits enforced.

The driver scores the episode and stops there. It knows no policy (it needs only a `Player`:
a name, a hash and the opening messages) and no guard: what happens to a finished episode
(the audit) is composed by the run layer (`workgym.run.finish`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Protocol

from workgym.core.episode import Episode, Outcome, TrainerRecord, Truncation, TurnTokens
from workgym.core.errors import ModelError
from workgym.core.messages import Message, ToolCall
from workgym.core.model import Completion, Model, Sampling
from workgym.core.run_limits import RunLimits, call_key

if TYPE_CHECKING:
    from workgym.core.environment import Environment
    from workgym.core.tasks import Task


class Player(Protocol):
    """What the driver needs of whoever acts: its identity and the episode's opening messages.

    `workgym.run.policy.Policy` is the one implementation; the driver never sees more of it.
    """

    @property
    def model_name(self) -> str: ...

    @property
    def hash(self) -> str: ...

    def render(self, env: Environment, task: Task) -> list[Message]: ...


AnswerReview = Callable[[str], Awaitable[str | None]]


class EpisodeDriver:
    """Advances one episode by one assistant message at a time.

    `answer_review`, when set, sees a text answer (an environment with no final tool) before it
    is accepted: a returned objection goes back to the agent as a user turn and the episode goes
    on; None accepts. It is how a team's checker reviews answers that are not tool calls (a final
    tool's calls are reviewed in the toolkit instead, `swarm.roles.ReviewedToolkit`).
    """

    def __init__(
        self,
        env: Environment,
        task: Task,
        player: Player,
        *,
        seed: int = 0,
        epoch: int = 0,
        split: str = "",
        run_limits: RunLimits | None = None,
    ) -> None:
        self.env = env
        self.task = task
        self.limits = env.limits
        self.run_limits = run_limits or RunLimits()
        self._calls: dict[tuple[str, str], int] = {}
        self._repeated: str | None = None
        self.toolkit = env.toolkit(task, seed=seed)
        self.started = time.perf_counter()
        self.done = False
        self.answer_review: AnswerReview | None = None
        self.episode = Episode(
            task_id=task.id,
            family=task.family,
            split=split,
            epoch=epoch,
            seed=seed,
            model=player.model_name,
            policy_hash=player.hash,
            env_id=env.id,
            env_hash=env.content_hash(),
            started_at=datetime.now(UTC).isoformat(timespec="milliseconds"),
            state=self.toolkit.ctx.state,
        )
        for message in player.render(env, task):
            self._append(message)

    @property
    def messages(self) -> list[Message]:
        return self.episode.messages

    def _append(self, message: Message) -> None:
        self.episode.messages.append(message)
        self.episode.usage.add_message(message)

    def seconds_left(self) -> float | None:
        limit = self._deadline()[0]
        return None if limit is None else limit - (time.perf_counter() - self.started)

    def _deadline(self) -> tuple[float | None, Truncation]:
        """The sooner of the environment's time limit and the run's time budget, and its name."""
        own, budget = self.limits.episode_timeout_s, self.run_limits.max_episode_s
        if budget is not None and (own is None or budget < own):
            return budget, "time_budget"
        return own, "time_limit"

    def time_out(self) -> None:
        """Truncate for time, naming whichever limit ran out (the environment's or the run's)."""
        self.truncate(self._deadline()[1])

    async def step(self, completion: Completion) -> list[Message]:
        """Apply one assistant turn; return the observation (tool results) it produced."""
        if self.done:
            raise RuntimeError("episode is over; start a new one")
        ep = self.episode
        ep.turns += 1
        ep.usage.add_call(completion)
        if completion.completion_token_ids is not None:
            if ep.trainer is None:
                ep.trainer = TrainerRecord()
            ep.trainer.turn_tokens.append(
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
                if self.answer_review is not None:
                    objection = await self.answer_review(message.content)
                    if objection is not None:
                        note = Message(role="user", content=objection)
                        self._append(note)
                        self._check_limits()
                        return [note]
                ep.answer = message.content
                ep.submitted = True
            self._end("terminated")
            return observation
        for call in message.tool_calls:
            self._count(call)
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

    def _count(self, call: ToolCall) -> None:
        """Count identical calls for the run's repeat limit; the one that reaches it is noted."""
        key = call_key(call)
        self._calls[key] = seen = self._calls.get(key, 0) + 1
        cap = self.run_limits.max_repeats
        if cap is not None and seen >= cap and self._repeated is None:
            self._repeated = f"{call.name}({key[1]}) called {seen} times"

    def _check_limits(self) -> None:
        limits, run = self.limits, self.run_limits
        usage = self.episode.usage
        if limits.max_total_tokens is not None and usage.total_tokens >= limits.max_total_tokens:
            self.truncate("max_tokens")
        elif run.max_episode_tokens is not None and usage.total_tokens >= run.max_episode_tokens:
            self.truncate("token_budget")
        elif self._repeated is not None:
            self.truncate("repeat_limit")
            self.episode.truncation_detail = self._repeated
        elif self.episode.turns >= limits.max_turns:
            self.truncate("max_turns")
        else:
            left = self.seconds_left()
            if left is not None and left <= 0:
                self.time_out()

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

    def elapsed(self) -> float:
        return time.perf_counter() - self.started

    async def finish(self) -> Episode:
        """Score the episode (unless it errored) and return the record; finishers come after."""
        if not self.done:
            raise RuntimeError("finish() before the episode ended")
        ep = self.episode
        if ep.outcome != "error":
            ep.verdict = await self.env.score_async(self.task, ep)
        ep.wall_time_s = self.elapsed()
        return ep


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
    specs = driver.toolkit.specs
    while not driver.done:
        left = driver.seconds_left()
        if left is not None and left <= 0:  # out of time before the turn: no call at all
            driver.time_out()
            break
        try:
            if left is None:
                completion = await model.complete(driver.messages, specs, sampling)
            else:  # a deadline, not wait_for: no extra task per model call
                async with asyncio.timeout(left):
                    completion = await model.complete(driver.messages, specs, sampling)
        except TimeoutError:
            driver.time_out()
            break
        except ModelError:
            raise
        await driver.step(completion)
        if stop is not None and not driver.done:
            reason = stop()
            if reason is not None:
                driver.truncate(reason)
