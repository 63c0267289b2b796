"""Environment: tasks + tools + verifier + limits, saved as a directory and loaded by id or path.

There is one way to define an environment: subclass `Environment`, list its tools, and implement
`tasks`, `state` and `verify`. The framework owns everything around them (toolkits, scoring
errors, hashing, saving), so an environment author cannot forget a guard.
"""

from __future__ import annotations

import hashlib
import importlib
import json
from collections.abc import Callable
from functools import cached_property
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from pydantic import BaseModel, ConfigDict

from workgym.core.messages import Message, ToolCall
from workgym.core.model import ConfigError
from workgym.core.tasks import SplitSpec, Task, TaskSet, canonical_json
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


class Environment:
    """Subclass this. Class attributes describe the environment; methods build its parts."""

    id: ClassVar[str] = ""
    version: ClassVar[str] = "1"
    tools: ClassVar[list[Tool]] = []
    limits: ClassVar[Limits] = Limits()
    instructions: ClassVar[str] = ""  # system text every agent gets, before any policy prompt

    def __init__(self, root: str | Path | None = None) -> None:
        self.root = Path(root) if root is not None else None

    # -- what an environment author writes ---------------------------------------------------

    def tasks(self) -> TaskSet:
        """The task distribution. The default reads tasks.jsonl from the saved directory."""
        if self.root is None or not (self.root / "tasks.jsonl").exists():
            raise NotImplementedError(f"{type(self).__name__} must implement tasks()")
        spec_path = self.root / "splits.json"
        spec = None
        if spec_path.exists():
            spec = SplitSpec.model_validate(json.loads(spec_path.read_text())["spec"])
        return TaskSet.from_jsonl(self.root / "tasks.jsonl", spec)

    def state(self, task: Task) -> Any:
        """Fresh per-episode state for the tools (a connection, a world). None by default."""
        return None

    def verify(self, task: Task, episode: Any) -> Verdict:
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

    # -- guard hooks (GUARDS.md): how probes, baselines and the audit see this environment -----
    # Every hook has a default that works for a single-answer environment; override the ones
    # your verifier's semantics need. `workgym attack ENV` reports what it could not attack.

    guard_tags: ClassVar[frozenset[str]] = frozenset()
    """Declared verifier semantics, beyond what workgym infers from the tools (`final_answer`,
    `tools`): e.g. `sql_answer`, `tool_calls`, `state`, `conclusion`, `judge`. Probes declare
    which tags they attack; see workgym.guards.capabilities."""

    baseline_thresholds: ClassVar[dict[str, float]] = {}
    """Per-environment ceilings for baseline rewards (`null`, `constant`, `enumerating`,
    `random`), overriding the defaults in workgym.guards.baselines."""

    def submit(self, task: Task, answer: Any, text: str = "") -> list[Message]:
        """Assistant turns that submit `answer` as the final answer (with optional prose).

        Probes and baselines use this to play an arbitrary answer through the real tools. The
        default calls the single-argument final tool, or, without a final tool, replies with the
        answer as text (the text is then the answer).
        """
        final = self.final_tool
        if final is None:
            body = answer if isinstance(answer, str) else json.dumps(answer, default=str)
            content = f"{text}\n\n{body}" if text else body
            return [Message(role="assistant", content=content)]
        if len(final.params) != 1:
            raise NotImplementedError(
                f"{type(self).__name__}'s final tool takes {len(final.params)} arguments; "
                "implement submit(task, answer, text) so probes can play answers"
            )
        args = json.dumps({final.params[0]: answer}, default=str)
        call = ToolCall(id="submit_0", name=final.name, arguments=args)
        return [Message(role="assistant", content=text, tool_calls=[call])]

    def wrong_answer(self, task: Task) -> Any:
        """A plausible wrong answer for `task` (probes: injection, fake verdict, two answers).

        The default is another task's gold answer, preferring tasks of the same kind (the family
        key up to its first '/'), that differs from this task's; None when there is none.
        Override with a near miss (a neighbouring query's result) when you have one.
        """
        return other_task_gold(self.taskset, task)

    def gold_values(self, task: Task) -> Any:
        """The part of the gold answer an agent can only learn from the data: what the audit's
        provenance check traces through the transcript. The default is the whole answer;
        override to leave out what the verifier never compares (a hidden manifest, the gold's
        own evidence queries), which an honest answer has no reason to have observed."""
        return task.answer

    def audit_flags(self, task: Task, episode: Any) -> list[str]:
        """Environment-specific audit flags (canaries seen, state diffs that contradict a claim),
        added to the generic ones of workgym.guards.audit. Must be cheap and never raise."""
        return []

    def verify_data(self) -> DataCheck:
        """Check data files the tasks rely on that `data_hash` leaves out because they are too
        large to hash on every load (per-task database copies): `workgym check` runs this, so
        a file changed after generation fails admission instead of silently changing rewards.
        The default has nothing to check."""
        return DataCheck()

    def data_hash(self) -> str:
        """Hash of data the tools read besides the tasks (a snapshot); part of the identity."""
        return ""

    def save_data(self, directory: Path) -> None:
        """Write data files besides tasks.jsonl (a snapshot) when saving."""

    # -- what the framework provides -----------------------------------------------------------

    @cached_property
    def taskset(self) -> TaskSet:
        return self.tasks()

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

    def score(self, task: Task, episode: Any) -> Verdict:
        """verify() behind the guards every environment needs.

        No submission when one is required, or an episode cut by a limit before the agent
        answered, is `no_answer` (or `timeout`) without asking the verifier; a verifier that
        raises yields `verifier_error`, which is counted and masked out of training, never a
        silent zero.
        """
        if not episode.submitted and (self.has_final_tool or episode.outcome == "truncated"):
            status = Status.timeout if episode.truncation == "time_limit" else Status.no_answer
            return Verdict(reward=0.0, success=False, status=status)
        try:
            verdict = self.verify(task, episode)
        except Exception as exc:
            return Verdict(
                status=Status.verifier_error,
                evidence={"error": f"{type(exc).__name__}: {exc}"},
            )
        if not isinstance(verdict, Verdict):
            return Verdict(
                status=Status.verifier_error,
                evidence={"error": f"verify() returned {type(verdict).__name__}, not Verdict"},
            )
        return verdict

    async def score_async(self, task: Task, episode: Any) -> Verdict:
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
        from workgym import __version__

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
        """Write the environment as a directory that `Environment.load` reads back."""
        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        self.taskset.to_jsonl(out / "tasks.jsonl")
        (out / "splits.json").write_text(json.dumps(self.taskset.split_record(), indent=2))
        self.save_data(out)
        (out / MANIFEST).write_text(json.dumps(self.manifest(), indent=2) + "\n")
        return out

    @staticmethod
    def load(ref: str | Path) -> Environment:
        return load(ref)


E = TypeVar("E", bound=type[Environment])
_REGISTRY: dict[str, Callable[[], Environment]] = {}


def register(cls: E) -> E:
    """Class decorator: make an environment loadable by its `id`."""
    if not cls.id:
        raise TypeError(f"{cls.__name__} needs a non-empty `id` to be registered")
    _REGISTRY[cls.id] = cls
    return cls


# Built-in environments by id, imported only when one is asked for: `workgym envs` must not
# import FastAPI or reasoning-gym, and a suite whose extra is missing must not break the rest.
BUILTIN: dict[str, str] = {
    "workgym/toy-shop": "workgym.envs.toy.env:ToyShop",
    "workgym/toy-rules": "workgym.envs.toy_rules.env:ToyRules",
    "workgym/lookup": "workgym.envs.lookup.env:Lookup",
    "workgym/ops-api": "workgym.envs.ops_api.env:OpsApi",
    "workgym/docstore": "workgym.envs.docstore.env:DocStore",
    "suites/reasoning": "workgym.envs.suites.reasoning:ReasoningSuite",
    "suites/bfcl": "workgym.envs.suites.bfcl:BFCLSuite",
    "suites/bfcl-full": "workgym.envs.suites.bfcl:BFCLSuiteFull",
    "suites/ifeval": "workgym.envs.suites.ifeval:IFEvalSuite",
}


def _lazy(entry: str) -> Callable[[], Environment]:
    def make() -> Environment:
        module_name, _, qualname = entry.partition(":")
        try:
            cls: Any = importlib.import_module(module_name)
        except ImportError as exc:
            raise ConfigError(
                f"{entry} cannot be imported ({exc}); install the extra it needs "
                "(see `pip install 'workgym[suites]'` for suites/*)"
            ) from exc
        for part in qualname.split("."):
            cls = getattr(cls, part)
        env: Environment = cls()
        return env

    return make


def registered() -> dict[str, Callable[[], Environment]]:
    """Built-in environments, those registered with @register in this process, and those other
    packages declare (entry point group `workgym.environments`); factories import lazily."""
    found: dict[str, Callable[[], Environment]] = {k: _lazy(v) for k, v in BUILTIN.items()}
    found.update(_REGISTRY)
    for ep in entry_points(group="workgym.environments"):
        found.setdefault(ep.name, ep.load)
    return dict(sorted(found.items()))


def load(ref: str | Path) -> Environment:
    """An environment from a saved directory or a registered id."""
    path = Path(ref)
    if (path / MANIFEST).exists():
        return _load_dir(path)
    if path.exists():
        raise ConfigError(
            f"{path} is not an environment directory (no {MANIFEST}); "
            "make one with `workgym generate ...` or Environment.save()"
        )
    found = registered().get(str(ref))
    if found is None:
        raise ConfigError(
            f"unknown environment {str(ref)!r}: `workgym envs` lists the registered ids, "
            "or pass a directory made by `workgym generate`"
        )
    return found()


def _load_dir(path: Path) -> Environment:
    try:
        manifest = json.loads((path / MANIFEST).read_text())
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path / MANIFEST} is not valid JSON ({exc}); re-save it") from exc
    if manifest.get("format") != MANIFEST_FORMAT:
        raise ConfigError(
            f"{path} has format {manifest.get('format')!r}; this workgym reads {MANIFEST_FORMAT}"
        )
    module_name, _, qualname = str(manifest["entry"]).partition(":")
    try:
        obj: Any = importlib.import_module(module_name)
        for part in qualname.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(
            f"{path}: cannot import its environment class {manifest['entry']!r} ({exc}); "
            "install the package that defines it"
        ) from exc
    env: Environment = obj(path)
    if env.content_hash() != manifest["content_hash"]:
        raise ConfigError(
            f"{path} changed after it was saved (content hash {env.content_hash()[:12]} != "
            f"manifest {str(manifest['content_hash'])[:12]}); re-generate or re-save it"
        )
    return env


def other_task_gold(tasks: TaskSet, task: Task) -> Any:
    """Another task's real gold answer that differs from `task`'s, preferring the same kind
    (the family up to its first '/'); None when every task has the same answer."""
    mine = canonical_json(task.answer)
    kind = task.family.split("/", 1)[0]
    fallback: Any = None
    for other in tasks:
        if other.id == task.id or canonical_json(other.answer) == mine:
            continue
        if other.family.split("/", 1)[0] == kind:
            return other.answer
        if fallback is None:
            fallback = other.answer
    return fallback
