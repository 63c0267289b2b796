"""Attempts per task: the served reward is an answer oracle unless replays are counted and capped.

Replaying one task with guesses recovered its answer in 260 episodes (2.3 s): every reset is a
question "is the answer X?" answered by the reward. So each reset is an attempt on its task,
appended to an attempts log that lives next to the looks log (outside run folders, so neither a
new --out nor a restart resets it), and a task that reached `max_per_task` attempts on this
environment is refused with 429. The cap counts every session (opening a new session per guess
must not reset it); each line also names the session, so per-session counts can be read back.
Training farms that replay tasks on purpose raise or lift the cap (`--max-attempts 0`).

The cap is per client: each line names the client (an id derived from its bearer token, never
the token), and a client's attempts count only against its own cap, so one client cannot spend
another's (issue 39, item 6). Caps persist across restarts, per client: a restart must not hand
an answer-guessing client a fresh budget; an operator who wants to give one issues that client
a new token (a new identity) or raises --max-attempts (decision 0064). Lines written before
clients were recorded (no `client`) count against every client, so an upgrade loosens no cap.
"""

from __future__ import annotations

import os
import threading
from collections import Counter
from pathlib import Path

from pydantic import BaseModel

from workgym.apps.serve.refusal import ServeError
from workgym.certify.looks import default_log, now
from workgym.core.environment import Environment
from workgym.core.errors import ConfigError
from workgym.core.tasks import Task

DEFAULT_MAX_ATTEMPTS = 200


class Attempt(BaseModel):
    """One line of the attempts log: a reset of `task_id` in `session_id`."""

    at: str
    env_id: str
    env_hash: str
    task_id: str
    split: str
    session_id: str
    attempt: int  # on this task and environment, by this client, counting this one
    client: str = ""  # the client's id (workgym.apps.serve.server.client_id); "" before clients


def default_attempts_log() -> Path:
    return default_log().with_name("serve_attempts.jsonl")


class AttemptLog:
    """Counts of this environment's attempts per task (read back at start), and the cap."""

    def __init__(self, env: Environment, path: Path, max_per_task: int | None) -> None:
        self.env = env
        self.path = path
        self.max_per_task = max_per_task or None
        self.counts: Counter[tuple[str, str]] = Counter()  # (client, task id)
        self.per_session: Counter[tuple[str, str]] = Counter()
        self._lock = threading.Lock()
        env_hash = env.content_hash()
        if path.exists():
            with path.open(encoding="utf-8") as fh:
                for lineno, line in enumerate(fh, 1):
                    if not line.strip():
                        continue
                    try:
                        seen = Attempt.model_validate_json(line)
                    except ValueError as exc:
                        raise ConfigError(
                            f"{path}:{lineno} is not an attempt record ({exc}); the log is "
                            "append-only: restore it from a backup rather than editing it"
                        ) from exc
                    if seen.env_hash == env_hash:
                        self.counts[(seen.client, seen.task_id)] += 1

    def done(self, client: str, task_id: str) -> int:
        """Attempts `client` made on the task (lines without a client count for every client)."""
        legacy = self.counts[("", task_id)] if client else 0
        return self.counts[(client, task_id)] + legacy

    def admit(self, task: Task, split: str, session_id: str, client: str = "") -> int:
        """Record one attempt of `client` on `task` and return its number; 429 once that
        client's cap on the task is reached."""

        with self._lock:
            done = self.done(client, task.id)
            if self.max_per_task is not None and done >= self.max_per_task:
                raise ServeError(
                    429,
                    f"task {task.id!r} has had {done} attempts by this client on this environment "
                    f"(the cap is "
                    f"{self.max_per_task}; {self.per_session[(session_id, task.id)]} in this "
                    "session): rewards from unlimited replays reveal the answer; draw another "
                    "task, or restart the server with a higher --max-attempts",
                )
            self.counts[(client, task.id)] += 1
            self.per_session[(session_id, task.id)] += 1
            line = Attempt(
                at=now(),
                env_id=self.env.id,
                env_hash=self.env.content_hash(),
                task_id=task.id,
                split=split,
                session_id=session_id,
                attempt=done + 1,
                client=client,
            )
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, (line.model_dump_json() + "\n").encode())
            finally:
                os.close(fd)
            return done + 1
