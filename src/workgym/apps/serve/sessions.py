"""Served episodes: one isolated EpisodeDriver per session, and the store that reaps idle ones.

Every transport (HTTP, WebSocket, MCP) goes through this module, so there is one place where a
remote agent's message becomes an episode step, and one place that decides what leaves the
server: the observation, the reward and the end flags. The verdict, the episode record and the
task's answer stay here (and in the optional run directory).
"""

from __future__ import annotations

import asyncio
import random
import secrets
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from workgym.apps.serve.attempts import DEFAULT_MAX_ATTEMPTS, AttemptLog, default_attempts_log
from workgym.apps.serve.refusal import ServeError
from workgym.core.driver import EpisodeDriver
from workgym.core.environment import Environment
from workgym.core.episode import Episode
from workgym.core.errors import ConfigError
from workgym.core.messages import Message, from_openai
from workgym.core.model import Completion, Sampling
from workgym.core.tasks import SPLITS, Task
from workgym.core.tools import ToolSpec
from workgym.run.finish import finish_episode
from workgym.run.gym import draw_task
from workgym.run.policy import Policy
from workgym.run.rundir import RunDir, RunSpec


class ResetRequest(BaseModel):
    task_id: str | None = None
    split: str = "train"
    seed: int = 0


class ResetResult(BaseModel):
    session_id: str
    task_id: str
    split: str
    seed: int
    observation: dict[str, Any]


class StepRequest(BaseModel):
    message: dict[str, Any]


def clean_text(value: Any) -> Any:
    """`value` with every lone surrogate (valid JSON, not encodable as UTF-8) replaced by U+FFFD:
    one such character used to fail the reply and the run file, and lose the episode."""
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    if isinstance(value, dict):
        return {clean_text(k): clean_text(v) for k, v in value.items()}
    if isinstance(value, list):
        return [clean_text(v) for v in value]
    return value


class StepResult(BaseModel):
    observation: dict[str, Any]
    reward: float = 0.0
    terminated: bool = False
    truncated: bool = False


class RemoteAgent:
    """The served policy's model: the agent lives on the other end of the connection."""

    name = "remote/agent"

    async def complete(
        self, messages: list[Message], tools: list[ToolSpec], sampling: Sampling
    ) -> Completion:
        raise ConfigError("a served episode's turns come from the client, not from a model")


def pick_task(
    env: Environment, task_id: str | None, split: str, seed: int, allow_test: bool
) -> Task:
    """The task a reset asks for: by id, or drawn from a split with the seed (reproducible)."""
    taskset = env.taskset
    if task_id is not None:
        if task_id not in taskset:
            raise ServeError(404, f"no task {task_id!r}; GET /info lists the splits to draw from")
        task = taskset[task_id]
        if taskset.split_of(task) == "test" and not allow_test:
            raise ServeError(403, _SEALED)
        return task
    if split not in (*SPLITS, "all"):
        raise ServeError(400, f"unknown split {split!r}: use train, dev, test or all")
    if split in ("test", "all") and not allow_test:
        if split == "test":
            raise ServeError(403, _SEALED)
        tasks = taskset.training_view().split("train") + taskset.split("dev")
    else:
        tasks = taskset.split(split)
    if not tasks:
        raise ServeError(404, f"split {split!r} of {env.id} has no tasks")
    if split in ("train", "dev"):  # seed i -> the split's i-th task, as Gymnasium's reset draws
        return draw_task(env, seed, split)
    return tasks[random.Random(seed).randrange(len(tasks))]


_SEALED = "the test split is sealed on this server; start it with --allow-test to serve it"


class Recorder:
    """Appends finished served episodes to a run directory (`workgym summary DIR` reads it).

    Each episode of a task gets the next free epoch number, so (task, epoch) stays unique.
    """

    def __init__(self, env: Environment, policy: Policy, out: str | Path) -> None:
        spec = RunSpec.for_run(
            env, policy, split="served", epochs=1, seed=0, n_tasks=len(env.taskset)
        )
        self.run = RunDir.open(out, spec)
        self.epochs = Counter(task_id for task_id, _ in self.run.finished())

    def next_epoch(self, task_id: str) -> int:
        epoch = self.epochs[task_id]
        self.epochs[task_id] += 1
        return epoch

    def append(self, episode: Episode) -> None:
        self.run.append(episode)

    def close(self) -> None:
        self.run.close()


class Session:
    """One client's episodes, one at a time; a lock keeps its steps in order."""

    def __init__(self, hub: Hub, session_id: str, client: str = "") -> None:
        self.hub = hub
        self.id = session_id
        self.client = client  # whose attempts its resets spend (and who may use it)
        self.driver: EpisodeDriver | None = None
        self.last_episode: Episode | None = None
        self.lock = asyncio.Lock()
        self.last_used = time.monotonic()
        self.on_reap: Callable[[], Awaitable[None]] | None = None

    def touch(self) -> None:
        self.last_used = time.monotonic()

    def abandon(self, reason: str) -> None:
        """Record a started episode that will not finish (reset, close, reap) as an error:
        every episode that started stays in the run."""
        driver = self.driver
        if driver is not None and not driver.done:
            driver.fail(reason)
            self.hub.record(driver.episode)

    def reset(self, request: ResetRequest) -> ResetResult:
        self.touch()
        hub = self.hub
        task = pick_task(hub.env, request.task_id, request.split, request.seed, hub.allow_test)
        hub.attempts.admit(task, hub.env.taskset.split_of(task), self.id, self.client)
        self.abandon("abandoned: the client reset before the episode ended")
        epoch = hub.recorder.next_epoch(task.id) if hub.recorder else 0
        self.driver = EpisodeDriver(
            hub.env,
            task,
            hub.policy,
            seed=request.seed,
            epoch=epoch,
            split=hub.env.taskset.split_of(task),
        )
        observation = {
            "messages": [m.to_openai() for m in self.driver.messages],
            "tools": [s.to_openai() for s in self.driver.toolkit.specs],
        }
        return ResetResult(
            session_id=self.id,
            task_id=task.id,
            split=self.driver.episode.split,
            seed=request.seed,
            observation=observation,
        )

    async def step(self, message: dict[str, Any] | Message) -> StepResult:
        self.touch()
        driver = self.driver
        if driver is None or driver.done:
            raise ServeError(409, "no episode running in this session: reset first")
        if self.lock.locked():
            raise ServeError(409, "a step is already running in this session; wait for it")
        async with self.lock:
            try:
                wire = message if isinstance(message, Message) else clean_text(message)
                parsed = wire if isinstance(wire, Message) else from_openai(wire)
            except (TypeError, ValueError, AttributeError) as exc:
                raise ServeError(
                    400, f"step needs an assistant message in chat-completions form ({exc})"
                ) from exc
            try:
                replies = await driver.step(Completion(message=parsed))
                result = StepResult(observation={"messages": [m.to_openai() for m in replies]})
            except Exception as exc:  # the server's fault: keep the episode, as an error
                if not driver.done:
                    driver.fail(f"server error: {type(exc).__name__}: {exc}"[:500])
                self.hub.record(await finish_episode(driver))
                raise ServeError(
                    500,
                    f"the server failed this step ({type(exc).__name__}); the episode was "
                    "recorded as an error: reset to start another",
                ) from exc
            if driver.done:
                episode = await finish_episode(driver)
                self.last_episode = episode
                self.hub.record(episode)
                result.reward = episode.reward
                result.terminated = episode.outcome == "terminated"
                result.truncated = episode.outcome == "truncated"
            self.touch()
            return result


class Hub:
    """The environment being served and its live sessions."""

    def __init__(
        self,
        env: Environment,
        *,
        idle_timeout_s: float = 600.0,
        max_sessions: int = 1024,
        allow_test: bool = False,
        out: str | Path | None = None,
        max_attempts: int | None = DEFAULT_MAX_ATTEMPTS,
        attempts_log: str | Path | None = None,
    ) -> None:
        self.env = env
        self.policy = Policy(RemoteAgent())
        self.idle_timeout_s = idle_timeout_s
        self.max_sessions = max_sessions
        self.allow_test = allow_test
        self.sessions: dict[str, Session] = {}
        self.recorder = Recorder(env, self.policy, out) if out is not None else None
        log = Path(attempts_log) if attempts_log is not None else default_attempts_log()
        self.attempts = AttemptLog(env, log, max_attempts)
        self.reaped = 0

    def record(self, episode: Episode) -> None:
        if self.recorder is not None:
            self.recorder.append(episode)

    def open(self, client: str = "") -> Session:
        if len(self.sessions) >= self.max_sessions:
            raise ServeError(
                503, f"{self.max_sessions} sessions are open; close one (DELETE) or wait"
            )
        session = Session(self, secrets.token_urlsafe(12), client)
        self.sessions[session.id] = session
        return session

    def get(self, session_id: str, client: str | None = None) -> Session:
        """The session, for its own client only (None: any client, for in-process callers)."""
        session = self.sessions.get(session_id)
        if session is None or (client is not None and session.client != client):
            raise ServeError(404, f"no session {session_id!r} (closed or reaped when idle)")
        return session

    def close(self, session_id: str) -> None:
        session = self.sessions.pop(session_id, None)
        if session is not None:
            session.abandon("abandoned: the session closed before the episode ended")

    async def reap(self) -> int:
        """Close sessions idle for longer than the timeout; returns how many."""
        cutoff = time.monotonic() - self.idle_timeout_s
        idle = [s for s in self.sessions.values() if s.last_used < cutoff and not s.lock.locked()]
        for session in idle:
            self.close(session.id)
            if session.on_reap is not None:
                await session.on_reap()
        self.reaped += len(idle)
        return len(idle)

    async def reap_forever(self) -> None:
        period = max(0.05, min(5.0, self.idle_timeout_s / 4))
        while True:
            await asyncio.sleep(period)
            await self.reap()

    def info(self) -> dict[str, Any]:
        """What a client may know about the environment: never tasks' answers."""
        env = self.env
        return {
            "env_id": env.id,
            "version": env.version,
            "content_hash": env.content_hash(),
            "tools": [t.spec.to_openai() for t in env.tools],
            "limits": env.limits.model_dump(),
            "splits": env.taskset.split_record()["tasks"],
            "test_split_served": self.allow_test,
            "sessions": len(self.sessions),
        }

    def shutdown(self) -> None:
        for session_id in list(self.sessions):
            self.close(session_id)
        if self.recorder is not None:
            self.recorder.close()
