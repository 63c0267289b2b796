"""Environment: tasks + tools + verifier + limits, saved as a directory (workgym.core.loading
finds one by id or path).

There is one way to define an environment: subclass `Environment`, list its tools, and implement
`tasks`, `state` and `verify`. The framework owns everything around them (toolkits, scoring
errors, hashing, saving), so an environment author cannot forget a guard.
"""

from __future__ import annotations

import hashlib
import json
from contextlib import AbstractContextManager, nullcontext
from functools import cached_property
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict

from workgym.core.episode import Episode
from workgym.core.messages import Message, ToolCall
from workgym.core.tasks import SplitSpec, Task, TaskSet, canonical_json, warn_empty_splits
from workgym.core.tools import DEFAULT_MAX_OUTPUT_CHARS, DEFAULT_TIMEOUT_S, Ctx, Tool, Toolkit
from workgym.core.verdict import Status, Verdict

MANIFEST = "manifest.json"
MANIFEST_FORMAT = "workgym-env/1"


class Limits(BaseModel):
    """Hard limits of an episode; hitting one truncates it (Gymnasium's `truncated`)."""

    model_config = ConfigDict(frozen=True)

    max_turns: int = 20
    max_total_tokens: int | None = None
    tool_timeout_s: float = DEFAULT_TIMEOUT_S
    max_tool_output_chars: int = DEFAULT_MAX_OUTPUT_CHARS
    episode_timeout_s: float | None = 600.0


class DataCheck(BaseModel):
    """What `Environment.verify_data` found: how many data files it checked, and what is wrong."""

    checked: int = 0
    problems: list[str] = []


class QualityCheck(BaseModel):
    """What `Environment.quality_check` found: a named rule set over the tasks, whether the
    environment passes it, a one-line detail, and a few offending task ids."""

    name: str
    passed: bool
    detail: str
    failures: list[str] = []


class Environment:
    """Subclass this. Class attributes describe the environment; methods build its parts."""

    id: ClassVar[str] = ""
    version: ClassVar[str] = "1"
    tools: ClassVar[list[Tool]] = []
    limits: ClassVar[Limits] = Limits()
    instructions: ClassVar[str] = ""  # system text every agent gets, before any policy prompt
    # The rule set of `quality_check` and its version ("warehouse-lint/2"): admission records it,
    # so an environment admitted under older rules says so (issue 40). "": unversioned rules.
    quality_rules: ClassVar[str] = ""

    def __init__(self, root: str | Path | None = None) -> None:
        self.root = Path(root) if root is not None else None

    # -- what an environment author writes ---------------------------------------------------

    def tasks(self) -> TaskSet:
        """The task distribution. The default reads tasks.jsonl from the saved directory."""
        saved = self.saved_tasks()
        if saved is None:
            raise NotImplementedError(f"{type(self).__name__} must implement tasks()")
        return saved

    def state(self, task: Task) -> Any:
        """Fresh per-episode state for the tools (a connection, a world). None by default."""
        return None

    def verify(self, task: Task, episode: Episode) -> Verdict:
        """The reward: judge what the agent produced against the hidden answer."""
        raise NotImplementedError(f"{type(self).__name__} must implement verify()")

    def oracle(self, task: Task) -> list[Message]:
        """Assistant turns that solve the task (self-checks only: `workgym check`).

        The default submits `task.answer` through the final tool when it takes one argument.
        """
        final = self.final_tool
        if final is None or len(final.params) != 1:
            raise NotImplementedError(
                f"{type(self).__name__} has no single-argument final tool; implement oracle()"
            )
        args = json.dumps({final.params[0]: task.answer})
        call = ToolCall(id="oracle_0", name=final.name, arguments=args)
        return [Message(role="assistant", tool_calls=[call])]

    # -- data hooks: what the environment reads besides its tasks ------------------------------
    # Guard hooks (how probes, baselines and the audit see an environment: `submit`,
    # `wrong_answer`, `gold_values`, `audit_flags`, `guard_tags`, `baseline_thresholds`) are
    # not part of this contract: define them on your class when your verifier's semantics need
    # them (workgym.guards.capabilities has the protocols and the defaults).

    def verify_data(self) -> DataCheck:
        """Check data files the tasks rely on that `data_hash` leaves out because they are too
        large to hash on every load (per-task database copies): `workgym check` runs this, so
        a file changed after generation fails admission instead of silently changing rewards.
        The default has nothing to check."""
        return DataCheck()

    def quality_check(self) -> QualityCheck | None:
        """An environment's own lint of its tasks (the warehouse's task-quality rules), which
        `workgym check` adds to admission. The default has none."""
        return None

    def warm(self) -> AbstractContextManager[None]:
        """A block in which the environment may keep costly resources open from one episode or
        scoring to the next (a warehouse keeps each database file's instance loaded). Runners
        (`eval`, `check`, `attack`) enter it around a batch; nothing may depend on it for
        correctness. The default holds nothing."""
        return nullcontext()

    def data_hash(self) -> str:
        """Hash of data the tools read besides the tasks (a snapshot); part of the identity."""
        return ""

    def save_data(self, directory: Path) -> None:
        """Write data files besides tasks.jsonl (a snapshot) when saving."""

    # -- what the framework provides -----------------------------------------------------------

    def saved_tasks(self) -> TaskSet | None:
        """The tasks `save()` wrote into `root` (tasks.jsonl with its splits.json), or None.

        Loading a directory uses these even when the class overrides `tasks()`: they are what
        the saved content hash covers, and `tasks()` may read files relative to elsewhere.
        """
        if self.root is None or not (self.root / "tasks.jsonl").exists():
            return None
        spec_path = self.root / "splits.json"
        spec = None
        if spec_path.exists():
            spec = SplitSpec.model_validate(json.loads(spec_path.read_text())["spec"])
        return TaskSet.from_jsonl(self.root / "tasks.jsonl", spec)

    @cached_property
    def taskset(self) -> TaskSet:
        tasks = self.tasks()
        warn_empty_splits(self.id or type(self).__name__, tasks)
        return tasks

    @cached_property
    def final_tool(self) -> Tool | None:
        finals = [t for t in self.tools if t.final]
        if len(finals) > 1:
            raise TypeError(f"{type(self).__name__} has {len(finals)} final tools; allow one")
        return finals[0] if finals else None

    @property
    def has_final_tool(self) -> bool:
        return self.final_tool is not None

    def toolkit(self, task: Task, seed: int = 0) -> Toolkit:
        import random

        ctx = Ctx(state=self.state(task), seed=seed, rng=random.Random(seed))
        return Toolkit(
            list(self.tools),
            ctx,
            timeout_s=self.limits.tool_timeout_s,
            max_output_chars=self.limits.max_tool_output_chars,
        )

    def score(self, task: Task, episode: Episode) -> Verdict:
        """verify() behind the guards every environment needs.

        No submission when one is required, or an episode cut by a limit before the agent
        answered, is `no_answer` (or `timeout`) without asking the verifier; a verifier that
        raises yields `verifier_error`, which is counted and masked out of training, never a
        silent zero.
        """
        if not episode.submitted and (self.has_final_tool or episode.outcome == "truncated"):
            timed_out = episode.truncation in ("time_limit", "time_budget")
            status = Status.timeout if timed_out else Status.no_answer
            return Verdict(reward=0.0, success=False, status=status)
        try:
            verdict = self.verify(task, episode)
        except Exception as exc:
            import traceback

            return Verdict(
                status=Status.verifier_error,
                evidence={
                    "error": f"{type(exc).__name__}: {exc}",
                    "traceback": "".join(traceback.format_exception(exc)),
                },
            )
        if not isinstance(verdict, Verdict):
            return Verdict(
                status=Status.verifier_error,
                evidence={"error": f"verify() returned {type(verdict).__name__}, not Verdict"},
            )
        return verdict

    async def score_async(self, task: Task, episode: Episode) -> Verdict:
        """Async hook for slow verifiers (override to run them in a thread); default inline."""
        return self.score(task, episode)

    @cached_property
    def _hash(self) -> str:
        h = hashlib.sha256()
        h.update(canonical_json({"id": self.id, "version": self.version}).encode())
        h.update(canonical_json([t.spec.model_dump() for t in self.tools]).encode())
        h.update(self.limits.model_dump_json().encode())
        h.update(self.instructions.encode())
        h.update(self.taskset.content_hash().encode())
        h.update(self.data_hash().encode())
        return h.hexdigest()

    def content_hash(self) -> str:
        """Identity of what an agent faces here: tasks, tools, limits, data and version."""
        return self._hash

    def manifest(self) -> dict[str, Any]:
        from workgym.core.version import __version__

        cls = type(self)
        if "<locals>" in cls.__qualname__:
            raise TypeError(
                f"{cls.__qualname__} is defined inside a function, so load() could not import "
                "it back; define the environment class at module level"
            )
        return {
            "format": MANIFEST_FORMAT,
            "id": self.id,
            "version": self.version,
            "entry": f"{cls.__module__}:{cls.__qualname__}",
            "content_hash": self.content_hash(),
            "tasks": len(self.taskset),
            "workgym_version": __version__,
        }

    def save(self, directory: str | Path) -> Path:
        """Write the environment as a directory that `workgym.load` reads back."""
        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        self.taskset.to_jsonl(out / "tasks.jsonl")
        (out / "splits.json").write_text(json.dumps(self.taskset.split_record(), indent=2))
        self.save_data(out)
        (out / MANIFEST).write_text(json.dumps(self.manifest(), indent=2) + "\n")
        return out
