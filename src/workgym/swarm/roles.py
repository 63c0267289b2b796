"""A role-based swarm: a planner, an executor and a checker act in one episode, one toolkit.

- The planner reads the task (and the names of the tools) and writes a plan; it calls no tool.
- The executor plays the episode with the tools, the plan in its instructions.
- The checker reviews each submission before it is accepted: it reads the task, the executor's
  work and the proposed answer, and replies APPROVE or REVISE: <what is wrong>. A revision comes
  back to the executor as the final tool's error (or, where the environment has no final tool
  and the answer is the executor's last text reply, as a user turn), and the executor may submit
  again; after `max_reviews` reviews a submission is accepted unreviewed.

They share one playbook, a section per role (see `sections`), and each role may have its own
model. Every agent's tokens are its own (`Episode.team`), summed exactly into the episode's
usage; `budget_tokens` caps the total (once it is spent the executor is truncated and no more
reviews are asked for). Like every team, only the one final episode is scored.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from workgym.core.driver import EpisodeDriver, drive
from workgym.core.episode import Episode, TokenUsage
from workgym.core.errors import ConfigError
from workgym.core.messages import Message, ToolCall
from workgym.core.model import Completion, Model, Sampling
from workgym.core.task_aware import TaskAwareModel
from workgym.core.tools import Submission, Toolkit, ToolResult
from workgym.run.policy import Policy
from workgym.swarm.accounting import Spend, agent_record, conversation_usage, sub_seed
from workgym.swarm.team import Team, finish_as_team, member_policy, now, resolve
from workgym.swarm.work import work_text

if TYPE_CHECKING:
    from workgym.core.environment import Environment
    from workgym.core.tasks import Task

ROLES = ("planner", "executor", "checker")
PROMPTS = {
    "planner": (
        "You are the planner of a team of agents. Read the task and write a short numbered plan "
        "for the executor: which tools to call, in what order, and what to check before "
        "answering. Do not answer the task yourself and do not call tools."
    ),
    "executor": (
        "You are the executor of a team of agents. Do the task with the tools; a planner's plan "
        "may follow. A checker reviews your final answer before it is accepted: if it asks for "
        "a revision, fix what it names and submit again."
    ),
    "checker": (
        "You are the checker of a team of agents. You see a task, the executor's work and its "
        "proposed final answer; you cannot call tools. If the work supports the answer, reply "
        "APPROVE. Otherwise reply REVISE: <what is wrong and what to check>."
    ),
}
# "REVISE" anywhere, or a reply that opens with "REVISION:" (what a 0.5B checker writes for
# "REVISE:"; claim 4's run passed 19 of them as approvals, decision 0186). "no revision" inside
# a sentence is not an objection.
REVISE = re.compile(r"\bREVISE\b\s*:?\s*|^\W*REVISION\b\W*", re.IGNORECASE | re.MULTILINE)
MAX_WORK_CHARS = 6000


Review = Callable[[str], Awaitable[str | None]]  # the proposed answer, as the checker reads it


def objection(reply: str) -> str | None:
    """What the checker's reply asks the executor to fix, or None when it approves."""
    found = REVISE.search(reply)
    if found is None:
        return None
    return reply[found.end() :].strip()[:600] or "the checker gave no reason."


class ReviewedToolkit(Toolkit):
    """The episode's toolkit with a review before the final tool runs: an objection becomes
    the call's error (nothing is submitted); an approval lets the call through unchanged."""

    def __init__(self, inner: Toolkit, review: Review) -> None:
        super().__init__(
            list(inner.tools.values()),
            inner.ctx,
            timeout_s=inner.timeout_s,
            max_output_chars=inner.max_output_chars,
        )
        self.review = review

    async def call(self, call: ToolCall) -> tuple[ToolResult, Submission | None]:
        found = self.tools.get(call.name)
        if found is not None and found.final:
            try:
                found.args_model.model_validate_json(call.arguments or "{}")
            except ValueError:
                return await super().call(call)  # invalid arguments: the usual error, no review
            objection = await self.review(f"{call.name}({call.arguments})")
            if objection is not None:
                content = (
                    f"error: not submitted: the checker asks for a revision: {objection} "
                    f"Fix it and call {call.name} again."
                )
                result = ToolResult(
                    call_id=call.id,
                    name=call.name,
                    arguments=call.arguments,
                    content=content,
                    status="error",
                )
                return result, None
        return await super().call(call)


class Roles(Team):
    """Planner, executor and checker (or a subset with the executor) sharing one playbook."""

    def __init__(
        self,
        model: Model | TaskAwareModel | str,
        *,
        roles: Sequence[str] = ROLES,
        models: Mapping[str, Model | TaskAwareModel | str] | None = None,
        prompts: Mapping[str, str] | None = None,
        max_reviews: int = 2,
        budget_tokens: int | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
    ) -> None:
        self.roles = tuple(dict.fromkeys(r.lower() for r in roles))
        unknown = set(self.roles) - set(ROLES)
        if unknown or "executor" not in self.roles:
            raise ConfigError(f"roles {list(roles)}: use the executor and any of planner, checker")
        if budget_tokens is not None and budget_tokens < 1:
            raise ConfigError("budget_tokens must be a positive number of tokens per task")
        given = dict(models or {})
        self.models = {r: resolve(given.get(r, model), base_url, api_key) for r in self.roles}
        self.prompts = {r: (prompts or {}).get(r, PROMPTS[r]) for r in self.roles}
        self.max_reviews = max_reviews
        self.budget_tokens = budget_tokens
        base = self.models["executor"].name
        others = [f"{r}={m.name}" for r, m in self.models.items() if m.name != base]
        budget = f"@{budget_tokens}" if budget_tokens is not None else ""
        extra = f"({','.join(others)})" if others else ""
        self.name = f"swarm/{'+'.join(self.roles)}{budget}:{base}{extra}"

    @property
    def lead(self) -> Model | TaskAwareModel:
        """The executor's model: its conversation is the episode's."""
        return self.models["executor"]

    def sections(
        self, shared: Sequence[str] = ("strategy", "tools", "pitfalls")
    ) -> tuple[str, ...]:
        """Playbook sections for training this team: one per role, then the shared ones."""
        return (*self.roles, *shared)

    def describe(self) -> dict[str, Any]:
        return {
            "kind": "roles",
            "roles": list(self.roles),
            "models": {r: m.name for r, m in self.models.items()},
            "prompts": self.prompts,
            "max_reviews": self.max_reviews,
            "budget_tokens": self.budget_tokens,
        }

    def _model(self, role: str, task: Task, env: Environment) -> Model:
        m = self.models[role]
        return m.for_task(task, env) if isinstance(m, TaskAwareModel) else m

    @staticmethod
    async def _ask(
        model: Model, messages: list[Message], sampling: Sampling, timeout: float | None
    ) -> Completion | None:
        """One tool-less call of the planner or checker; None when it ran out of time."""
        call = model.complete(messages, [], sampling)
        if timeout is None:
            return await call
        try:
            return await asyncio.wait_for(call, max(timeout, 0.0))
        except TimeoutError:
            return None

    async def play(
        self, policy: Policy, env: Environment, task: Task, *, seed: int, epoch: int, split: str
    ) -> Episode:
        started, started_at = time.perf_counter(), now()
        spend = Spend(self.budget_tokens)
        timeout = env.limits.episode_timeout_s
        agents = []
        plan = ""
        if "planner" in self.roles:
            usage = spend.track(TokenUsage())
            tools = "\n".join(f"- {t.spec.name}: {t.spec.description}" for t in env.tools)
            planner = member_policy(
                policy,
                self.models["planner"],
                "planner",
                self.roles,
                prompt=f"{self.prompts['planner']}\n\nTools the executor can call:\n{tools}",
            )
            messages = planner.render(env, task)
            reply = await self._ask(
                self._model("planner", task, env),
                messages,
                planner.sampling.with_seed(sub_seed(seed, "planner", 0)),
                timeout,
            )
            if reply is not None:
                conversation_usage(usage, messages, reply)
                plan = reply.message.content.strip()
            agents.append(
                agent_record(
                    "planner",
                    "planner",
                    planner.model_name,
                    usage,
                    transcript=[
                        *(m for m in messages if m.role != "system"),
                        *([reply.message] if reply else []),
                    ],
                    turns=1 if reply else 0,
                    outcome="terminated" if reply else "truncated",
                    answer=plan or None,
                )
            )
        prompt = self.prompts["executor"]
        if plan:
            prompt += f"\n\n## Plan from the planner\n{plan}"
        executor = member_policy(
            policy, self.models["executor"], "executor", self.roles, prompt=prompt
        )
        driver = EpisodeDriver(env, task, executor, seed=seed, epoch=epoch, split=split)
        spend.track(driver.episode.usage)
        checker_usage = spend.track(TokenUsage())
        checker_log: list[Message] = []
        reviews = 0
        if "checker" in self.roles:
            checker = member_policy(
                policy,
                self.models["checker"],
                "checker",
                self.roles,
                prompt=self.prompts["checker"],
            )
            checker_model = self._model("checker", task, env)

            async def review(proposal: str) -> str | None:
                nonlocal reviews
                if reviews >= self.max_reviews or spend.over():
                    return None
                reviews += 1
                work = work_text(driver.messages, MAX_WORK_CHARS, drop=("system",))
                ask = Message(
                    role="user",
                    content=f"# Executor's work\n{work}\n\n# Proposed final answer\n"
                    f"{proposal}\n\nReply APPROVE or REVISE: <reason>.",
                )
                messages = [*checker.render(env, task), ask]
                reply = await self._ask(
                    checker_model,
                    messages,
                    checker.sampling.with_seed(sub_seed(seed, "checker", reviews)),
                    driver.seconds_left(),
                )
                if reply is None:
                    return None
                conversation_usage(checker_usage, messages, reply)
                checker_log.extend([ask, reply.message])
                return objection(reply.message.content)

            # the episode's own toolkit decides: a suite may declare its final tools per task
            if any(t.final for t in driver.toolkit.tools.values()):
                driver.toolkit = ReviewedToolkit(driver.toolkit, review)
            if not env.has_final_tool:  # a text reply may be the answer: review it there too

                async def review_text(answer: str) -> str | None:
                    asked = await review(answer[:MAX_WORK_CHARS])
                    if asked is None:
                        return None
                    return (
                        f"Not accepted: the checker asks for a revision: {asked} Fix it and "
                        "reply with your final answer again."
                    )

                driver.answer_review = review_text
        await drive(
            driver,
            self._model("executor", task, env),
            executor.sampling.with_seed(seed),
            stop=spend.stop,
        )
        agents.append(
            agent_record(
                "executor",
                "executor",
                executor.model_name,
                driver.episode.usage,
                turns=driver.episode.turns,
                outcome=driver.episode.outcome,
                answer=driver.episode.answer,
                submitted=driver.episode.submitted,
                selected=True,
            )
        )
        if "checker" in self.roles:
            agents.append(
                agent_record(
                    "checker",
                    "checker",
                    self.models["checker"].name,
                    checker_usage,
                    transcript=checker_log,
                    turns=reviews,
                )
            )
        return await finish_as_team(
            driver, policy, agents, seed=seed, started=started, started_at=started_at
        )
