"""Tasks, task sets, and the split of tasks into train, dev and a sealed test set.

Splits are made by family (the template or generator key), never by task: two phrasings of one
template in train and test would measure memorisation, not skill. A family's split is a pure
function of a salted sha256 of its key, so it is reproducible, needs no stored assignment, and is
stable when tasks are added.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from workgym.core.choices import UnknownChoiceError, unknown
from workgym.core.errors import ConfigError, SealedSplitError
from workgym.core.messages import Message

Split = Literal["train", "dev", "test"]
SPLITS: tuple[Split, ...] = ("train", "dev", "test")
SPLIT_ALGORITHM = "sha256(salt|family)/v1"


class EmptySplitWarning(UserWarning):
    """An environment's tasks leave a split empty: too few families for the split fractions."""


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


class Task(BaseModel):
    """One instance of the job. `answer` is hidden ground truth: never rendered for the agent."""

    model_config = ConfigDict(frozen=True)

    id: str = ""
    family: str
    prompt: str | list[Message]
    answer: Any = None
    meta: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _content_id(self) -> Task:
        if not self.id:
            body = canonical_json(
                {"family": self.family, "prompt": _prompt_json(self.prompt), "meta": self.meta}
            )
            object.__setattr__(self, "id", hashlib.sha256(body.encode()).hexdigest()[:16])
        return self

    @property
    def kind(self) -> str:
        """The family key up to its first '/': what the task asks, without the template or
        tables that make its family a split unit (`F1/F1.t2/flights` is of kind `F1`)."""
        return self.family.split("/", 1)[0]

    def messages(self) -> list[Message]:
        """The prompt as the agent sees it."""
        if isinstance(self.prompt, str):
            return [Message(role="user", content=self.prompt)]
        return list(self.prompt)


def _prompt_json(prompt: str | list[Message]) -> Any:
    return prompt if isinstance(prompt, str) else [m.model_dump() for m in prompt]


class SplitSpec(BaseModel):
    """How families map to splits; recorded with every environment and run."""

    model_config = ConfigDict(frozen=True)

    salt: str = "workgym"
    train: float = 0.6
    dev: float = 0.2
    test: float = 0.2
    algorithm: str = SPLIT_ALGORITHM
    overrides: dict[str, Split] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _fractions(self) -> SplitSpec:
        if min(self.train, self.dev, self.test) < 0 or abs(self.train + self.dev + self.test - 1):
            raise ValueError("split fractions must be non-negative and sum to 1")
        if self.algorithm != SPLIT_ALGORITHM:
            raise ValueError(
                f"split algorithm {self.algorithm!r} is not supported by this workgym "
                f"(it implements {SPLIT_ALGORITHM!r}); upgrade workgym to read this environment"
            )
        return self

    def assign(self, family: str) -> Split:
        if family in self.overrides:
            return self.overrides[family]
        digest = hashlib.sha256(f"{self.salt}|{family}".encode()).digest()
        bucket = int.from_bytes(digest[:8], "big") / 2**64
        if bucket < self.train:
            return "train"
        if bucket < self.train + self.dev:
            return "dev"
        return "test"


class TaskSet:
    """Ordered tasks plus the split rule. Indexable by id; iterates in file order."""

    def __init__(self, tasks: Iterable[Task], split_spec: SplitSpec | None = None) -> None:
        self._tasks = list(tasks)
        self.split_spec = split_spec or SplitSpec()
        self._by_id: dict[str, Task] = {}
        for task in self._tasks:
            if task.id in self._by_id:
                raise ValueError(f"duplicate task id {task.id!r}; task ids must be unique")
            self._by_id[task.id] = task

    def __len__(self) -> int:
        return len(self._tasks)

    def __iter__(self) -> Iterator[Task]:
        return iter(self._tasks)

    def __getitem__(self, task_id: str) -> Task:
        try:
            return self._by_id[task_id]
        except KeyError:
            raise KeyError(f"no task {task_id!r} in this task set") from None

    def __contains__(self, task_id: object) -> bool:
        return task_id in self._by_id

    def split_of(self, task: Task) -> Split:
        return self.split_spec.assign(task.family)

    def split(self, name: str) -> list[Task]:
        """Tasks of one split, or of all splits for `all`."""
        if name == "all":
            return list(self._tasks)
        if name not in SPLITS:
            raise UnknownChoiceError(unknown("split", name, [*SPLITS, "all"]))
        return [t for t in self._tasks if self.split_of(t) == name]

    def families(self) -> list[str]:
        return sorted({t.family for t in self._tasks})

    def training_view(self) -> TrainingTaskSet:
        """The view training code receives: the test split is not in it at all."""
        return TrainingTaskSet(
            [t for t in self._tasks if self.split_of(t) != "test"], self.split_spec
        )

    def split_record(self) -> dict[str, Any]:
        """What is written next to the tasks so anyone can check the assignment."""
        counts = {s: 0 for s in SPLITS}
        fams: dict[str, str] = {}
        for t in self._tasks:
            s = self.split_of(t)
            counts[s] += 1
            fams[t.family] = s
        return {
            "spec": self.split_spec.model_dump(),
            "tasks": counts,
            "families": dict(sorted(fams.items())),
        }

    def content_hash(self) -> str:
        h = hashlib.sha256()
        h.update(self.split_spec.model_dump_json().encode())
        for t in self._tasks:
            h.update(t.model_dump_json().encode())
            h.update(b"\n")
        return h.hexdigest()

    @classmethod
    def from_jsonl(cls, path: str | Path, split_spec: SplitSpec | None = None) -> TaskSet:
        """Tasks from a JSON-lines file: one object per line with `family`, `prompt`, the hidden
        `answer`, and optional `id` (a content hash when left out) and `meta`.

        A relative path is read next to the module that calls this when the file is there: an
        environment's data travels with its code, so `workgym check` works from any directory
        (docs/decisions/0040-first-hour.md). Otherwise (no such file beside the module, or an
        interactive session with no calling file) it is relative to the working directory.
        """
        path = _beside_caller(Path(path), sys._getframe(1).f_globals.get("__file__"))
        tasks = []
        with path.open(encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                tasks.append(_task_line(line, f"{path}:{lineno}"))
        return cls(tasks, split_spec)

    def to_jsonl(self, path: str | Path) -> None:
        with Path(path).open("w", encoding="utf-8") as fh:
            for t in self._tasks:
                fh.write(t.model_dump_json() + "\n")


class TaskLineError(ConfigError, ValueError):
    """A tasks.jsonl line that is not a task: a user's mistake (one line on the command line),
    and still the ValueError that library callers of `from_jsonl` caught before."""


def _task_line(line: str, where: str) -> Task:
    """One tasks.jsonl line as a Task, or a one-line ConfigError naming the line and the key:
    a misspelt key (`"answr"`) used to be dropped silently, leaving a task with no answer."""
    import difflib

    try:
        raw = json.loads(line)
    except ValueError as exc:
        raise TaskLineError(
            f"{where}: not valid JSON ({exc}); each line is one JSON object"
        ) from exc
    if not isinstance(raw, dict):
        raise TaskLineError(f"{where}: a task line is a JSON object, not {type(raw).__name__}")
    known = list(Task.model_fields)
    for key in raw:
        if key not in Task.model_fields:
            close = difflib.get_close_matches(key, known, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise TaskLineError(
                f"{where}: unknown key {key!r}; {hint}a task line has {', '.join(known)}"
            )
    try:
        return Task.model_validate(raw)
    except ValueError as exc:
        first = exc.errors(include_url=False)[0] if hasattr(exc, "errors") else None
        why = f"{'.'.join(map(str, first['loc']))}: {first['msg']}" if first else str(exc)
        raise TaskLineError(f"{where}: not a valid task ({why})") from exc


def warn_empty_splits(owner: str, tasks: TaskSet) -> None:
    """Warn, when an environment's tasks are first built, that a split came out empty.

    Splits are by family, so five families can come out train 21 / dev 0 / test 3 tasks; that
    is found here, at definition time, rather than by an eval with nothing to run."""
    if not len(tasks):
        return
    counts = tasks.split_record()["tasks"]
    wanted = tasks.split_spec.model_dump()  # a split given no share (a test-only suite) is fine
    empty = [s for s in SPLITS if not counts[s] and wanted[s] > 0]
    if not empty:
        return
    import warnings

    shown = " / ".join(f"{s} {counts[s]}" for s in SPLITS)
    verb = "is" if len(empty) == 1 else "are"
    warnings.warn(
        f"{owner}: {len(tasks.families())} families split {shown} tasks, so "
        f"{' and '.join(empty)} {verb} empty. Splits are by family: {split_advice(tasks, empty)}",
        EmptySplitWarning,
        stacklevel=3,
    )


def families_for_every_split(spec: SplitSpec, risk: float = 0.01) -> int:
    """How many families leave no split empty with probability 1 - `risk`: each family lands in a
    split by hash, so with shares 60/20/20 twelve families still leave dev or test empty about
    one time in seven; 24 bring that under one in a hundred."""
    shares = [share for share in (spec.train, spec.dev, spec.test) if share > 0]
    n = 1
    while sum((1 - share) ** n for share in shares) > risk:
        n += 1
    return n


def split_advice(tasks: TaskSet, empty: Sequence[str]) -> str:
    """What to do about empty splits: how many more families, or which to pin where."""
    spec = tasks.split_spec
    have = len(tasks.families())
    needed = families_for_every_split(spec)
    spare = [f for f in tasks.families() if spec.assign(f) == "train"][1:]  # train keeps one
    pins = dict(zip(spare[: len(empty)], empty, strict=False))
    pin = f"pin families: TaskSet.from_jsonl(..., split_spec=wg.SplitSpec(overrides={pins!r}))"
    more = f"add about {needed - have} families ({needed} leave no split empty 99 times in 100)"
    if not pins:  # one family or none in train: nothing to move without emptying it
        return more if needed > have else "pin a family to each empty split (SplitSpec overrides)"
    return f"{more}, or {pin} in your tasks()" if needed > have else f"{pin} in your tasks()"


def _beside_caller(path: Path, caller: str | None) -> Path:
    """`path` next to the calling module when it is there, else as given (the working
    directory): a relative path that names no file beside the module keeps its old meaning."""
    if path.is_absolute() or not caller:
        return path
    beside = Path(caller).resolve().parent / path
    return beside if beside.exists() else path


class TrainingTaskSet(TaskSet):
    """A task set with the test split removed; asking for test is an error, not an empty list."""

    def split(self, name: str) -> list[Task]:
        if name in ("test", "all"):
            raise SealedSplitError(
                f"split {name!r} is sealed for training code; train on 'train', select on 'dev', "
                "and let `workgym certify` open the test split"
            )
        return super().split(name)

    def training_view(self) -> TrainingTaskSet:
        return self
