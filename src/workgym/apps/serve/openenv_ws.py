"""OpenEnv's WebSocket protocol on `workgym serve --protocol openenv`.

OpenEnv clients (`openenv.core.EnvClient`, `GenericEnvClient`, verifiers' OpenEnv taskset) open
`/ws` and send `{"type": "reset"|"step"|"state"|"close", "data": {...}}`; the server answers
`{"type": "observation", "data": {"observation": {...}, "reward": r, "done": d}}`, `{"type":
"state", ...}` or `{"type": "error", "data": {"message": ..., "code": ...}}`. This module maps
those messages onto a `Session`, so the protocol gets the same isolation, reaping, sealed test
split and run directory as workgym's own; nothing here needs OpenEnv installed.

A step's data is one assistant message (`content`, chat-completions `tool_calls`); an
observation is `messages` (and, on reset, `tools` and `task_id`), like `WorkgymOpenEnv` in
`workgym.adapters.openenv_adapter`. OpenEnv's protocol carries no credentials, so the
WebSocket takes none; the CLI only binds it to loopback.
"""

from __future__ import annotations

import json
from typing import Any

from workgym.apps.serve.refusal import ServeError
from workgym.apps.serve.sessions import ResetRequest, Session


def _observation(observation: dict[str, Any], reward: float | None, done: bool) -> str:
    data = {"observation": observation, "reward": reward, "done": done}
    return json.dumps({"type": "observation", "data": data})


def _error(message: str, code: str) -> str:
    return json.dumps({"type": "error", "data": {"message": message, "code": code}})


def openenv_refusal(exc: ServeError) -> dict[str, Any]:
    """The reply to a connection the hub has no room for."""
    return {"type": "error", "data": {"message": str(exc), "code": "CAPACITY_REACHED"}}


async def openenv_turn(session: Session, text: str, steps: list[int]) -> str | None:
    """One OpenEnv request -> its JSON reply; None for `close`. `steps` counts this episode's
    steps (OpenEnv's `state`)."""
    try:
        request = json.loads(text)
    except ValueError:
        return _error("send one JSON object per message", "INVALID_JSON")
    if not isinstance(request, dict):
        return _error('send a JSON object like {"type": "reset"}', "INVALID_JSON")
    kind, data = request.get("type"), request.get("data") or {}
    try:
        if kind == "close":
            return None
        if kind == "reset":
            seed = data.get("seed")
            reset = ResetRequest(
                task_id=data.get("task_id"),
                split=data.get("split", "train"),
                seed=0 if seed is None else seed,
            )
            result = session.reset(reset)
            steps[0] = 0
            return _observation({**result.observation, "task_id": result.task_id}, None, False)
        if kind == "step":
            message = {"content": data.get("content", ""), "tool_calls": data.get("tool_calls")}
            step = await session.step(message)
            steps[0] += 1
            done = step.terminated or step.truncated
            return _observation(step.observation, step.reward, done)
        if kind == "state":
            episode_id = session.driver.episode.task_id if session.driver else None
            state = {"episode_id": episode_id, "step_count": steps[0]}
            return json.dumps({"type": "state", "data": state})
        return _error(f"unknown type {kind!r}: use reset, step, state or close", "UNKNOWN_TYPE")
    except ServeError as exc:
        return _error(str(exc), "EXECUTION_ERROR" if exc.status >= 500 else "VALIDATION_ERROR")
    except ValueError as exc:
        return _error(f"bad {kind} data ({exc})", "VALIDATION_ERROR")
