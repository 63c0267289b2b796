"""The state-conditional oracle: an environment that can say the right next call from any state.

An environment's `oracle(task)` gives one gold trajectory from the start. To measure what a
model does on its *own* prefix (exposure bias, docs/imitation.md), every step the model took
after its own earlier steps needs a label: given this conversation so far, which action is right
now? Only the environment can say, and only some can (lookup's facts are read-only, so the right
next call is the first lookup whose answer is not yet in the conversation). An environment
declares the capability by defining `next_action`; the `Environment` base class knows nothing of
it, and a consumer that finds none says so instead of guessing.

Some states have several right next actions: the reads of an order-free list, or a tool call and
the answer it would return when the agent can work the answer out itself. An environment says so
by also defining `next_actions`, every right action with the canonical one first; a step is then
right when it is any of them, given the gold prefix as given the model's own (`right_next`), so
the two accuracies stay one unit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from workgym.core.environment import Environment
    from workgym.core.messages import Message
    from workgym.core.tasks import Task


@runtime_checkable
class NextActionOracle(Protocol):
    """An environment that labels any state of an episode with the right next action."""

    def next_action(self, task: Task, messages: list[Message]) -> Message:
        """The assistant message an agent should send next, given the conversation so far
        (system and user messages, the agent's own earlier turns and the tools' replies)."""
        ...


@runtime_checkable
class SeveralNextActions(Protocol):
    """An oracle whose states may have more than one right next action."""

    def next_actions(self, task: Task, messages: list[Message]) -> list[Message]:
        """Every right next action from this state, `next_action`'s first."""
        ...


def right_next(oracle: NextActionOracle, task: Task, messages: list[Message]) -> list[Message]:
    """The right next actions from a state: all of them where the oracle declares several, else
    its one."""
    if isinstance(oracle, SeveralNextActions):
        return oracle.next_actions(task, messages)
    return [oracle.next_action(task, messages)]


def next_action_oracle(env: Environment) -> NextActionOracle | None:
    """The environment as a state-conditional oracle, or None when it declares none."""
    return env if isinstance(env, NextActionOracle) else None
