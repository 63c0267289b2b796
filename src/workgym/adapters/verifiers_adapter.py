"""A workgym environment as a verifiers (Prime Intellect) environment, for `vf-eval` and
verifiers-based trainers.

    vf-eval workgym.adapters.verifiers_adapter -a '{"env": "workgym/toy-shop"}' \\
        -m MODEL -b http://127.0.0.1:8000/v1 -n 12 -r 1

`load_environment(env)` returns a `MultiTurnEnv` whose dataset is the training view's train
split and whose eval dataset is its dev split (the test split is never in it), whose tools are
the environment's tool schemas, and whose one reward function is the workgym verdict. Each
rollout owns a workgym episode: every assistant message verifiers gets from the model is
stepped through `EpisodeDriver`, which runs the tools, enforces the limits and, at the end,
scores and audits the episode, so a task's reward is the one `workgym eval` gives it. The
verdict's status and the audit's flags land in the rollout's `info`-free state as metrics.
"""

from __future__ import annotations

from typing import Any

from workgym.adapters.episodes import open_episode, opening, training_tasks
from workgym.adapters.extras import require
from workgym.core.driver import EpisodeDriver
from workgym.core.environment import Environment
from workgym.core.episode import Episode
from workgym.core.loading import load
from workgym.core.messages import Message, ToolCall
from workgym.core.model import Completion
from workgym.run.finish import finish_episode

require("verifiers.envs", "verifiers")  # the install hint, before the imports it guards
import datasets  # noqa: E402

import verifiers as vf  # noqa: E402


def dataset_rows(env: Environment, split: str) -> list[dict[str, Any]]:
    """One row per task: the opening messages and the task id; never the answer."""
    return [
        {
            "prompt": [m.to_openai() for m in opening(env, task)],
            "info": {"task_id": task.id},
        }
        for task in training_tasks(env, split)
    ]


def to_workgym(message: Any) -> Message:
    """verifiers' assistant message (pydantic, or a dict) as a workgym Message."""
    get = message.get if hasattr(message, "get") else lambda k, d=None: getattr(message, k, d)
    content = get("content")
    calls = [
        ToolCall(id=c["id"], name=c["name"], arguments=c["arguments"])
        for c in (get("tool_calls") or [])
    ]
    text = content if isinstance(content, str) else ""
    return Message(role="assistant", content=text, tool_calls=calls)


class WorkgymVerifiersEnv(vf.MultiTurnEnv):  # type: ignore[misc]
    """verifiers drives the model; a workgym episode per rollout decides everything else."""

    def __init__(self, env: Environment, **kwargs: Any) -> None:
        self.workgym_env = env
        self.episodes: dict[str, EpisodeDriver] = {}
        tool_defs = [
            vf.Tool(name=s.name, description=s.description, parameters=s.parameters)
            for s in (t.spec for t in env.tools)
        ]
        rubric = vf.Rubric(funcs=[self.workgym_reward], weights=[1.0])
        super().__init__(
            dataset=datasets.Dataset.from_list(dataset_rows(env, "train")),
            eval_dataset=datasets.Dataset.from_list(dataset_rows(env, "dev")),
            tool_defs=tool_defs,
            rubric=rubric,
            max_turns=env.limits.max_turns + 1,  # workgym's own limit ends it first
            **kwargs,
        )

    async def setup_state(self, state: Any) -> Any:
        task = self.workgym_env.taskset[state["info"]["task_id"]]
        self.episodes[state["trajectory_id"]] = open_episode(
            self.workgym_env, task, f"verifiers/{state['model']}"
        )
        return state

    async def env_response(self, messages: Any, state: Any, **kwargs: Any) -> Any:
        driver = self.episodes[state["trajectory_id"]]
        replies = await driver.step(Completion(message=to_workgym(messages[-1])))
        tool_messages = [
            vf.ToolMessage(tool_call_id=m.tool_call_id or "", content=m.content) for m in replies
        ]
        if driver.done:
            state["final_env_response"] = tool_messages
        return tool_messages

    async def workgym_reward(self, state: Any, **kwargs: Any) -> float:
        """The workgym verdict's reward (the only reward function of this environment)."""
        episode = await self.finish(state)
        state["workgym_status"] = episode.verdict.status.value if episode.verdict else "error"
        state["workgym_flags"] = list(episode.flags)
        return episode.reward

    async def finish(self, state: Any) -> Episode:
        """Score the rollout's episode; one that verifiers cut short is truncated or failed."""
        driver = self.episodes.pop(state["trajectory_id"])
        if not driver.done:
            error = state.get("error")
            if error is not None:
                driver.fail(f"verifiers: {error}")
            else:
                driver.truncate("time_limit" if state.get("timed_out") else "max_turns")
        return await finish_episode(driver)


def load_environment(env: str = "workgym/toy-shop", **kwargs: Any) -> WorkgymVerifiersEnv:
    """`vf-eval`'s entry point: a registered id or a saved environment directory."""
    return WorkgymVerifiersEnv(load(env), **kwargs)
