"""Teacher-forced scoring: how a model does when every step is handed the gold prefix.

Imitation scores a model on somebody else's trajectory: at step k it sees the gold conversation
up to k (the oracle's earlier actions and the tools' real replies) and is asked for the next
action. It never lives with its own mistakes, so the score says little about what the model does
on its own. This module measures exactly that teacher-forced score, so it can be set beside the
free-running success of the same model in the real episode loop (`certify.imitation_gap`).

A gold trajectory is the oracle played through the real episode loop (the same driver, tools and
limits as any agent), so the prefixes hold the tools' real outputs, rendered with the evaluated
policy's own system text. At each gold assistant step the model answers once, greedily by default
(one teacher-forced *epoch*); with a temperature, each epoch is another sampled answer at every
step, seeded as the free-running episode of the same (task, epoch) is. The step *matches* when
its first action equals the gold one:

- a tool call: the same tool name and the same arguments as JSON values (key order and
  whitespace do not count; `"5"` is not `5`);
- a text reply (environments without a final tool): the same text after stripping whitespace.

Where the environment declares several right next actions (`core.next_action.SeveralNextActions`),
the step matches when the answer is any of the actions right from the gold prefix, which must
include the gold one; the step's `gold` then names them all (`state_label`), so an own step
reached by another path can be matched to the gold state with the same right actions.

Any model works (an `openai/` endpoint, `hf/`, a test double). A model that can also score given
tokens (`GoldScorer`: the `hf/` provider) adds the gold trajectory's mean token log-likelihood.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from pydantic import BaseModel

from workgym.core.messages import Message
from workgym.core.model import Sampling
from workgym.core.next_action import SeveralNextActions, next_action_oracle
from workgym.core.task_aware import TaskAwareModel

if TYPE_CHECKING:
    from workgym.core.environment import Environment
    from workgym.core.model import Completion, Model
    from workgym.core.tasks import Task
    from workgym.core.tools import ToolSpec

GREEDY = Sampling(temperature=0.0)


@runtime_checkable
class GoldScorer(Protocol):
    """A model that can give the log-probability of a reply it did not write."""

    def reply_logprob(
        self, messages: list[Message], tools: list[ToolSpec], reply: Message
    ) -> tuple[float, int]:
        """Sum of the reply's token log-probabilities given `messages`, and its token count."""
        ...


class GoldStep(BaseModel):
    """One gold assistant step: where it sits in the gold conversation and what it did."""

    index: int
    """Position of the gold assistant message in the gold conversation."""
    action: str
    """The gold action as text: `tool(arguments)` or the reply text (for reports)."""


class StepScore(BaseModel):
    """The model's answer at one gold step, given the gold prefix."""

    index: int
    """Position of the gold assistant message this step predicts."""
    matched: bool
    """The model's first action equals the gold action (see the module docstring)."""
    predicted: str
    """The model's action as text, for reading mismatches."""
    gold: str
    """The gold action as text; where the environment declares several right actions, all of
    them (`state_label`): the label of the state this step was taken from."""
    logprob: float | None = None
    """Sum of the gold reply's token log-probabilities (GoldScorer models only)."""
    tokens: int | None = None
    """Number of tokens in the gold reply (GoldScorer models only)."""


class TaskScore(BaseModel):
    """Teacher-forced result of one task for one model: one line of teacher_forced.jsonl."""

    model: str
    """The scored model's name (a checkpoint label)."""
    task_id: str
    family: str
    epoch: int = 0
    """Which teacher-forced draw this is (0 under greedy decoding, which has only one)."""
    temperature: float = 0.0
    """The sampling temperature of the draw (a folder scored at one is not resumed at another)."""
    steps: list[StepScore]
    """One entry per gold assistant step, in order."""

    @property
    def step_rate(self) -> float:
        """Share of gold steps the model matched."""
        return sum(s.matched for s in self.steps) / len(self.steps) if self.steps else 0.0

    @property
    def all_steps(self) -> bool:
        """Every gold step matched: the teacher-forced analogue of solving the task."""
        return bool(self.steps) and all(s.matched for s in self.steps)

    @property
    def mean_logprob(self) -> float | None:
        """Mean log-likelihood per gold token over the trajectory, when the model scores tokens."""
        scored = [s for s in self.steps if s.logprob is not None and s.tokens]
        if not scored:
            return None
        return sum(s.logprob or 0.0 for s in scored) / sum(s.tokens or 0 for s in scored)


def action_key(message: Message) -> tuple[str, Any]:
    """What a step is compared on: the first tool call (name, parsed arguments) or the text."""
    if message.tool_calls:
        call = message.tool_calls[0]
        try:
            args: Any = json.loads(call.arguments)
        except ValueError:
            args = call.arguments  # unparseable arguments only ever equal the same text
        return call.name, args
    return "", (message.content or "").strip()


def action_text(message: Message) -> str:
    name, args = action_key(message)
    if not name:
        return str(args)[:500]
    shown = args if isinstance(args, str) else json.dumps(args, sort_keys=True)
    return f"{name}({shown})"[:500]


def state_label(rights: list[Message]) -> str:
    """A state named by its right next actions: one action's text, or several sorted and joined
    by " | " (so a gold state and an own state with the same right actions share a label)."""
    return " | ".join(sorted({action_text(m) for m in rights}))


def gold_steps(messages: list[Message]) -> list[GoldStep]:
    """The assistant steps of a gold conversation."""
    return [
        GoldStep(index=i, action=action_text(m))
        for i, m in enumerate(messages)
        if m.role == "assistant"
    ]


async def score_task(
    model: Model | TaskAwareModel,
    model_name: str,
    env: Environment,
    task: Task,
    gold: list[Message],
    *,
    sampling: Sampling = GREEDY,
    epoch: int = 0,
) -> TaskScore:
    """Ask `model` for every gold step given the gold prefix; compare with the gold action.
    The gold log-likelihood does not depend on the draw, so only epoch 0 computes it."""
    tools = env.toolkit(task).specs
    if isinstance(model, TaskAwareModel):  # a test double plays its own script, step by step
        model = model.for_task(task, env)
    oracle = next_action_oracle(env)
    several = oracle if isinstance(oracle, SeveralNextActions) else None
    steps: list[StepScore] = []
    for step in gold_steps(gold):
        prefix = gold[: step.index]
        reply = (await model.complete(prefix, tools, sampling)).message
        target = gold[step.index]
        rights = [target] if several is None else several.next_actions(task, prefix)
        keys = [action_key(r) for r in rights]
        if action_key(target) not in keys:
            raise ValueError(
                f"{env.id}: next_actions of task {task.id} leaves out the gold step "
                f"{step.action}; make the oracle's trajectory one of its right paths"
            )
        score = StepScore(
            index=step.index,
            matched=action_key(reply) in keys,
            predicted=action_text(reply),
            gold=step.action if several is None else state_label(rights),
        )
        if epoch == 0 and isinstance(model, GoldScorer):
            score.logprob, score.tokens = model.reply_logprob(prefix, tools, target)
        steps.append(score)
    return TaskScore(
        model=model_name,
        task_id=task.id,
        family=task.family,
        epoch=epoch,
        temperature=sampling.temperature,
        steps=steps,
    )


class LocalScorer:
    """A local `hf/` model with `reply_logprob`: the gold reply's tokens scored in one forward
    pass after the prefix, tokenised exactly as the model's chat template renders them."""

    def __init__(self, hf_model: Any) -> None:
        self.inner = hf_model
        self.name: str = hf_model.name

    async def complete(
        self, messages: list[Message], tools: list[ToolSpec], sampling: Sampling
    ) -> Completion:
        completion: Completion = await self.inner.complete(messages, tools, sampling)
        return completion

    def reply_logprob(
        self, messages: list[Message], tools: list[ToolSpec], reply: Message
    ) -> tuple[float, int]:
        import torch

        chat = self.inner.chat
        head = chat.render(messages, tools, generation=True)
        full = chat.render([*messages, reply], tools, generation=False)
        if not full.startswith(head):
            raise ValueError(f"{self.name}: the chat template does not extend the prefix")
        head_ids = chat.encode(head)
        reply_ids = chat.encode(full[len(head) :])
        device = next(self.inner.model.parameters()).device  # a GPU by default (--device)
        ids = torch.tensor([head_ids + reply_ids], device=device)
        with torch.no_grad():
            logits = self.inner.model(ids).logits[0, len(head_ids) - 1 : -1].float()
        logp = torch.log_softmax(logits, dim=-1)
        rows = torch.arange(len(reply_ids), device=device)
        picked = logp[rows, torch.tensor(reply_ids, device=device)]
        return float(picked.sum()), len(reply_ids)


def as_scorer(model: Any) -> Any:
    """Wrap a local `hf/` model so it also scores gold tokens; other models pass through."""
    if hasattr(model, "chat") and hasattr(model, "tokenizer") and hasattr(model, "model"):
        return LocalScorer(model)
    return model
