"""A workgym environment as an Inspect AI `Task`, for `inspect eval` and `inspect view`.

    inspect eval workgym/workgym_task -T env=workgym/toy-shop --model mockllm/model
    inspect eval workgym/workgym_task -T env=workgym/toy-shop \\
        --model openai-api/local/MODEL --model-base-url http://127.0.0.1:8000/v1

(`workgym/workgym_task` is registered through the `inspect_ai` entry point in workgym's
pyproject.) Each sample is one task of the training view's dev split by default (`split=train`
for the other; the test split is sealed). The environment's tools are handed to the model as
Inspect `ToolInfo`s (so they show in the log and the viewer), and the solver, `workgym_agent`,
steps every assistant message through a workgym episode (`EpisodeDriver`): workgym runs the
tools, enforces the limits and stops at the first accepted submission, exactly as under
`workgym eval`. The scorer, `workgym_verdict`, is the environment's verifier behind the audit:
its value is the verdict's reward, with the status and audit flags in the score's metadata.
"""

from __future__ import annotations

import json
from typing import Any

from workgym.adapters.episodes import open_episode, opening, training_tasks
from workgym.adapters.extras import require
from workgym.core.driver import EpisodeDriver
from workgym.core.environment import Environment
from workgym.core.loading import load
from workgym.core.messages import Message, ToolCall
from workgym.core.model import Completion
from workgym.run.finish import finish_episode

require("inspect_ai", "inspect")
from inspect_ai import Task, task  # noqa: E402
from inspect_ai.dataset import MemoryDataset, Sample  # noqa: E402
from inspect_ai.model import (  # noqa: E402
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    get_model,
)
from inspect_ai.scorer import Score, Target, mean, scorer  # noqa: E402
from inspect_ai.solver import Generate, TaskState, solver  # noqa: E402
from inspect_ai.tool import ToolInfo, ToolParams  # noqa: E402

INVALID_ARGUMENTS = "<arguments were not valid JSON>"


def inspect_tools(env: Environment) -> list[ToolInfo]:
    """The environment's tool schemas as Inspect tool definitions."""
    return [
        ToolInfo(
            name=t.spec.name,
            description=t.spec.description,
            parameters=ToolParams.model_validate(t.spec.parameters),
        )
        for t in env.tools
    ]


def to_inspect(message: Message) -> ChatMessage:
    if message.role == "system":
        return ChatMessageSystem(content=message.content)
    if message.role == "tool":
        return ChatMessageTool(
            content=message.content, tool_call_id=message.tool_call_id, function=message.name
        )
    return ChatMessageUser(content=message.content)


def to_workgym(message: ChatMessageAssistant) -> Message:
    """Inspect's assistant message as workgym's; arguments Inspect could not parse stay
    invalid, so workgym's validator answers them as a tool error, as it would the raw text."""
    calls = [
        ToolCall(
            id=c.id,
            name=c.function,
            arguments=INVALID_ARGUMENTS if c.parse_error else json.dumps(c.arguments),
        )
        for c in message.tool_calls or []
    ]
    return Message(role="assistant", content=message.text or "", tool_calls=calls)


class Episodes:
    """The live workgym episode of each sample, from the solver to the scorer."""

    def __init__(self, env: Environment) -> None:
        self.env = env
        self.live: dict[tuple[str, int], EpisodeDriver] = {}

    def key(self, state: TaskState) -> tuple[str, int]:
        return str(state.sample_id), state.epoch


@solver  # type: ignore[untyped-decorator]
def workgym_agent(episodes: Episodes) -> Any:
    """Call the model and step the workgym episode until it ends (no Inspect tool loop)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        env = episodes.env
        model = get_model()
        task_ = env.taskset[str(state.metadata["task_id"])]
        driver = open_episode(env, task_, f"inspect/{model.name}", seed=state.epoch)
        episodes.live[episodes.key(state)] = driver
        tools = inspect_tools(env)
        while not driver.done:
            output = await model.generate(state.messages, tools=tools)
            state.output = output
            state.messages.append(output.message)
            replies = await driver.step(Completion(message=to_workgym(output.message)))
            state.messages.extend(to_inspect(m) for m in replies)
        return state

    return solve


@scorer(metrics=[mean()])  # type: ignore[untyped-decorator]
def workgym_verdict(episodes: Episodes) -> Any:
    """The environment's verdict (after the audit) on the sample's episode."""

    async def score(state: TaskState, target: Target) -> Score:
        driver = episodes.live.pop(episodes.key(state), None)
        if driver is None:
            return Score(value=0.0, explanation="no workgym episode: use the workgym_agent solver")
        if not driver.done:
            driver.fail("inspect: the solver stopped before the episode ended")
        episode = await finish_episode(driver)
        status = episode.verdict.status.value if episode.verdict else "error"
        return Score(
            value=episode.reward,
            answer=json.dumps(episode.answer, default=str),
            explanation=status,
            metadata={"status": status, "flags": list(episode.flags), "turns": episode.turns},
        )

    return score


def samples(env: Environment, split: str) -> list[Sample]:
    """One sample per task: the opening messages and the task id; never the answer."""
    return [
        Sample(
            id=t.id,
            input=[to_inspect(m) for m in opening(env, t)],
            metadata={"task_id": t.id, "family": t.family},
        )
        for t in training_tasks(env, split)
    ]


@task  # type: ignore[untyped-decorator]
def workgym_task(env: str = "workgym/toy-shop", split: str = "dev") -> Task:
    """A workgym environment (registered id or saved directory) as an Inspect task."""
    loaded = load(env)
    episodes = Episodes(loaded)
    return Task(
        dataset=MemoryDataset(samples(loaded, split), name=f"{loaded.id}/{split}"),
        solver=workgym_agent(episodes),
        scorer=workgym_verdict(episodes),
        name=loaded.id.replace("/", "-"),
    )
