"""`suites/bfcl`: function calling on the Berkeley Function Calling Leaderboard's data.

The items, function documents and possible answers are read from the JSON files that ship inside
the installed bfcl-eval package (nothing is downloaded). Each item offers its own functions as
tools; the agent's first turn is its answer: the calls it makes (or, on irrelevance items, a
reply that makes none). Scoring is `bfcl_scoring`: strict schema types by the tool-call
verifier, BFCL's lists of acceptable values, one-to-one pairing of parallel calls.

The default suite samples up to PER_CATEGORY items of each single-turn Python category with a
fixed hash order (`suites/bfcl`); `suites/bfcl-full` has every item of those categories.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict

from workgym.core.environment import Environment, Limits
from workgym.core.episode import Episode
from workgym.core.messages import Message, ToolCall
from workgym.core.tasks import Task, TaskSet
from workgym.core.tools import Ctx, Tool, Toolkit, ToolSpec
from workgym.core.verdict import Status, Verdict
from workgym.envs.suites import bfcl_scoring as scoring
from workgym.envs.suites.common import SUITE_SPLIT, require

CATEGORIES = (
    "simple_python",
    "multiple",
    "parallel",
    "parallel_multiple",
    "live_simple",
    "live_multiple",
    "live_parallel",
    "live_parallel_multiple",
    "irrelevance",
)
PER_CATEGORY = 40
NO_CALL_REPLY = "None of the available functions fits this request, so I will not call any."


def _data_file(category: str, answers: bool = False) -> Any:
    from importlib.resources import files

    # no extra installs it: its own pins would downgrade numpy
    require("bfcl_eval", "suites/bfcl", install="pip install --no-deps bfcl-eval==2026.3.23")
    folder = files("bfcl_eval") / "data"
    if answers:
        folder = folder / "possible_answer"
    pattern = re.compile(rf"BFCL_v(\d+)_{re.escape(category)}\.json")
    found = [(int(m.group(1)), p) for p in folder.iterdir() if (m := pattern.fullmatch(p.name))]
    return max(found, key=lambda vp: vp[0])[1] if found else None


def _jsonl(path: Any) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def load_category(category: str) -> list[tuple[dict[str, Any], list[dict[str, Any]] | None]]:
    """(item, expected calls) pairs of one category; expected is None for irrelevance items."""
    path = _data_file(category)
    if path is None:
        raise FileNotFoundError(f"bfcl-eval ships no data for category {category!r}")
    items = _jsonl(path)
    answer_path = _data_file(category, answers=True)
    answers = {a["id"]: a["ground_truth"] for a in _jsonl(answer_path)} if answer_path else {}
    return [(item, answers.get(item["id"])) for item in items]


def _sample(ids: list[str], n: int | None) -> set[str]:
    if n is None or n >= len(ids):
        return set(ids)
    return set(sorted(ids, key=lambda i: hashlib.sha256(f"bfcl|{i}".encode()).hexdigest())[:n])


def build_tasks(per_category: int | None = PER_CATEGORY, consistent: bool = True) -> list[Task]:
    """Tasks of every category; with `consistent`, only items that BFCL's own possible answers
    can solve under the declared schema (see `inconsistency`), sampled per category."""
    tasks: list[Task] = []
    for category in CATEGORIES:
        built = [_task(category, item, expected) for item, expected in load_category(category)]
        if consistent:
            built = [t for t in built if inconsistency(t) is None]
        keep = _sample([t.id for t in built], per_category)
        tasks.extend(t for t in built if t.id in keep)
    return tasks


def inconsistency(task: Task) -> str | None:
    """Why BFCL's possible answers cannot solve this item under its own function schema (the
    answer breaks the declared types or enum, or leaves out a required argument); None if they
    can. Such items are left out of the suite and listed in docs/certificate.md."""
    verdict = score_turn(task, oracle_turn(task))
    return None if verdict.success else str(verdict.evidence.get("reason", verdict.status))


def _task(category: str, item: dict[str, Any], expected: Any) -> Task:
    """One BFCL item as a task: its functions become tools under OpenAI-safe names."""
    taken: set[str] = set()
    tools, names = [], {}
    for fn in item["function"]:
        name = scoring.safe_name(fn["name"], taken)
        names[name] = fn["name"]
        tools.append(
            {
                "name": name,
                "description": str(fn.get("description", "")),
                "parameters": scoring.to_json_schema(fn.get("parameters", {})),
            }
        )
    prompt = [Message(role=m["role"], content=str(m["content"])) for m in item["question"][0]]
    return Task(
        id=f"bfcl-{item['id']}",
        family=category,
        prompt=prompt,
        answer={"calls": expected},
        meta={"tools": tools, "names": names, "bfcl_id": item["id"]},
    )


class _AnyArguments(BaseModel):
    """The toolkit accepts any JSON object here: the verifier, not the toolkit, judges it."""

    model_config = ConfigDict(extra="allow")


class DeclaredTool(Tool):
    """A tool known only by its schema. Calling it ends the turn: BFCL scores the first turn."""

    def __init__(self, spec: dict[str, Any]) -> None:
        self.fn = _recorded
        self.name = str(spec["name"])
        self.final = True
        self.timeout_s = None
        self.max_output_chars = None
        self.blocking = False
        self.is_async = False
        self.ctx_param = None
        self.params = []
        self.args_model = _AnyArguments
        self.spec = ToolSpec(
            name=self.name, description=spec["description"], parameters=spec["parameters"]
        )


def _recorded() -> str:
    return "call recorded"


class BFCLSuite(Environment):
    """Call the right functions with the right arguments, or none when none fits."""

    id = "suites/bfcl"
    version = "1"
    tools = []
    limits = Limits(max_turns=1)
    instructions = (
        "You can call the functions provided as tools. Call the function(s) that answer the "
        "request, with the arguments it states; if several calls are needed, make them all in "
        "one turn. If no function fits, reply in words and call none."
    )
    per_category: int | None = PER_CATEGORY
    # Judged on its calls: on irrelevance items the right answer is to call nothing, so the
    # guards test those with the tool-call probes (a call where none fits must fail) rather
    # than the answer-content ones, for which any reply without a call is abstaining.
    guard_tags: ClassVar[frozenset[str]] = frozenset({"tool_calls"})

    def tasks(self) -> TaskSet:
        return TaskSet(build_tasks(self.per_category), SUITE_SPLIT)

    def toolkit(self, task: Task, seed: int = 0) -> Toolkit:
        import random

        tools: list[Tool] = [DeclaredTool(spec) for spec in task.meta["tools"]]
        ctx = Ctx(state=None, seed=seed, rng=random.Random(seed))
        return Toolkit(tools, ctx, timeout_s=self.limits.tool_timeout_s)

    def verify(self, task: Task, episode: Episode) -> Verdict:
        turn = next((m for m in episode.messages if m.role == "assistant"), None)
        return score_turn(task, turn)

    def oracle(self, task: Task) -> list[Message]:
        return [oracle_turn(task)]


class BFCLSuiteFull(BFCLSuite):
    """Every item of the single-turn Python categories (for audits; slow to run in full)."""

    id = "suites/bfcl-full"
    per_category = None


def score_turn(task: Task, turn: Message | None) -> Verdict:
    """The verdict on one assistant turn (the whole BFCL answer)."""
    expected = task.answer["calls"]
    calls = list(turn.tool_calls) if turn is not None else []
    if expected is None:  # irrelevance: the right answer is to call nothing, and say so
        if calls:
            return Verdict.wrong(reason="called a function although none fits")
        if turn is None or not turn.content.strip():
            return Verdict.wrong(Status.no_answer)
        return Verdict.correct()
    if not calls:
        status = Status.no_answer if turn is None or not turn.content.strip() else Status.ok
        return Verdict.wrong(status, reason="no function call")
    decoded = scoring.decode(calls, task.meta["names"])
    if isinstance(decoded, str):
        return Verdict.wrong(Status.parse_error, reason=decoded)
    schemas = {task.meta["names"][t["name"]]: t["parameters"] for t in task.meta["tools"]}
    reason = scoring.check_calls(decoded, expected, schemas)
    if reason is not None:
        return Verdict.wrong(reason=reason)
    return Verdict.correct()


def _options(options: Any) -> list[Any]:
    return [o for o in (options if isinstance(options, list) else [options]) if o != ""]


def _first_of_nested(value: Any) -> Any:
    if isinstance(value, dict):  # a dict answer is key -> acceptable values
        out = {}
        for key, options in value.items():
            opts = _options(options)
            if opts:
                out[key] = _first_of_nested(opts[0])
        return out
    if isinstance(value, list):
        return [_first_of_nested(v) for v in value]
    return value


def answer_calls(task: Task) -> list[scoring.Call]:
    """The expected calls, each argument BFCL's first acceptable value that fits the declared
    schema (an optional argument with no fitting value is left out)."""
    schemas = {task.meta["names"][t["name"]]: t["parameters"] for t in task.meta["tools"]}
    calls: list[scoring.Call] = []
    for expected in task.answer["calls"] or []:
        ((name, params),) = expected.items()
        schema = schemas.get(name, {})
        args = {}
        for param, options in params.items():
            opts = [_first_of_nested(o) for o in _options(options)]
            fitting = [o for o in opts if o is not None and scoring.value_fits(param, o, schema)]
            optional = "" in (options if isinstance(options, list) else [options])
            if fitting:
                args[param] = fitting[0]
            elif opts and not optional:
                args[param] = opts[0]
        calls.append((name, args))
    return calls


def as_turn(task: Task, calls: list[scoring.Call]) -> Message:
    back = {v: k for k, v in task.meta["names"].items()}
    tool_calls = [
        ToolCall(id=f"call_{i}", name=back.get(name, name), arguments=json.dumps(args))
        for i, (name, args) in enumerate(calls)
    ]
    return Message(role="assistant", tool_calls=tool_calls)


def oracle_turn(task: Task) -> Message:
    if task.answer["calls"] is None:
        return Message(role="assistant", content=NO_CALL_REPLY)
    return as_turn(task, answer_calls(task))
