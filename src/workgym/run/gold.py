"""Gold trajectories: the oracle played through the real episode loop.

Imitation (supervised patches, teacher-forced scores) needs somebody else's answer as a whole
conversation, with the tools' real replies in it and rendered exactly as the imitating policy
would see it. Playing the oracle through the same driver, tools and limits as any agent gives
exactly that, so nothing about the gold is hand-assembled.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from workgym.core.environment import Environment
    from workgym.core.messages import Message
    from workgym.core.tasks import Task


async def gold_trajectory(env: Environment, task: Task, system_prompt: str = "") -> list[Message]:
    """The gold conversation of `task`, rendered with `system_prompt` like the scored policy.

    Raises ValueError when the oracle does not solve the task (there is no gold to imitate) and
    NotImplementedError when the environment has no oracle.
    """
    from workgym.run.policy import Policy

    policy = Policy("scripted/oracle", system_prompt=system_prompt)
    episode = await policy.play(env, task)
    if not episode.success:
        raise ValueError(f"the oracle does not solve {task.id}; no gold trajectory")
    return list(episode.messages)
