"""`@tool`: a typed, documented Python function becomes something an agent can call.

The function's type hints are the contract. They become a JSON schema for the model, and a strict
pydantic validator that runs before the function does: "5" is not 5, True is not 1, and unknown
arguments are refused. Everything that can go wrong in a call (bad JSON, bad types, an exception,
a timeout, an unknown tool) comes back to the agent as a tool error and the episode goes on.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import random
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, get_type_hints, overload

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from workgym.core.errors import ToolError
from workgym.core.messages import ToolCall

DEFAULT_TIMEOUT_S = 10.0
DEFAULT_MAX_OUTPUT_CHARS = 8000

CallStatus = Literal["ok", "error", "invalid_arguments", "unknown_tool", "timeout"]


@dataclass
class Ctx:
    """Per-episode context handed to tools that ask for it by annotating a parameter `Ctx`.

    `state` is whatever the environment built for this episode (a DB connection, an API session).
    The task's answer is deliberately not here: tools cannot leak what they never hold.
    """

    state: Any = None
    seed: int = 0
    rng: random.Random = field(default_factory=random.Random)
    scratch: dict[str, Any] = field(default_factory=dict)


class ToolSpec(BaseModel):
    """What the model sees of a tool: name, description and a JSON schema of its arguments."""

    model_config = ConfigDict(frozen=True)

    name: str
    description: str
    parameters: dict[str, Any]

    def to_openai(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }


class ToolResult(BaseModel):
    """The outcome of one call, as recorded in the Episode and shown (content only) to the agent."""

    call_id: str
    name: str
    arguments: str
    content: str
    status: CallStatus = "ok"
    elapsed_s: float = 0.0
    truncated: bool = False

    @property
    def is_error(self) -> bool:
        return self.status != "ok"


_ARG_LINE = re.compile(r"^\s*(\w+)\s*(?:\([^)]*\))?\s*:\s*(.+)$")


def _parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """Split a Google-style docstring into the summary and per-argument descriptions."""
    lines = inspect.cleandoc(doc).splitlines()
    summary: list[str] = []
    args: dict[str, str] = {}
    in_args = False
    current: str | None = None
    for line in lines:
        stripped = line.strip()
        if stripped in ("Args:", "Arguments:", "Parameters:"):
            in_args = True
            continue
        if in_args:
            if stripped.endswith(":") and not line.startswith((" ", "\t")):
                in_args = False  # next section (Returns:, Raises:)
                continue
            match = _ARG_LINE.match(line)
            if match:
                current = match.group(1)
                args[current] = match.group(2).strip()
            elif current and stripped:
                args[current] += " " + stripped
        elif not args:
            summary.append(line)
    return " ".join(s.strip() for s in summary if s.strip()), args


class Tool:
    """A registered tool: the function, its schema, its validator and its limits."""

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        final: bool = False,
        timeout_s: float | None = None,
        max_output_chars: int | None = None,
        blocking: bool = False,
    ) -> None:
        self.fn = fn
        self.name = name or fn.__name__
        self.final = final
        self.timeout_s = timeout_s
        self.max_output_chars = max_output_chars
        self.blocking = blocking
        self.is_async = inspect.iscoroutinefunction(fn)
        if not fn.__doc__:
            raise TypeError(
                f"tool {self.name!r} has no docstring: the docstring is what the model reads "
                "to decide when to call it; add one"
            )
        hints = get_type_hints(fn)
        summary, arg_docs = _parse_docstring(fn.__doc__)
        fields: dict[str, Any] = {}
        self.ctx_param: str | None = None
        for pname, param in inspect.signature(fn).parameters.items():
            annotation = hints.get(pname)
            if annotation is Ctx:
                self.ctx_param = pname
                continue
            if annotation is None:
                raise TypeError(f"tool {self.name!r}: parameter {pname!r} needs a type hint")
            default = ... if param.default is inspect.Parameter.empty else param.default
            fields[pname] = (annotation, _described(default, arg_docs.get(pname)))
        self.params = list(fields)
        self.args_model: type[BaseModel] = create_model(
            f"{self.name}_args",
            __config__=ConfigDict(strict=True, extra="forbid"),
            **fields,
        )
        schema = self.args_model.model_json_schema()
        schema.pop("title", None)
        for prop in schema.get("properties", {}).values():
            prop.pop("title", None)
        schema.setdefault("properties", {})
        schema["additionalProperties"] = False
        self.spec = ToolSpec(name=self.name, description=summary, parameters=schema)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"Tool({self.name!r}, final={self.final})"


def _unwrapped_object(
    found: Tool, arguments: str, error: ValidationError
) -> tuple[BaseModel | None, ValidationError]:
    """A tool whose one parameter is an object, called with that object itself.

    Real models flatten: offered `submit_answer(answer: {"kind": ..., ...})`, the 1.5B sent
    `{"kind": "integer", "value": 3}` in every warehouse episode (issue 34) and repeated the call
    until the episode's repeat limit, told only "answer: Field required". When the tool has
    exactly one parameter and the call's object does not name it, the object is read as that
    parameter: it runs if it validates, and otherwise its own errors (say, a bad `reason`) are
    the ones reported. Every other call keeps `error`.
    """
    if len(found.params) != 1:
        return None, error
    try:
        value = json.loads(arguments or "{}")
    except ValueError:
        return None, error
    (name,) = found.params
    if not isinstance(value, dict) or not value or name in value:
        return None, error
    try:
        return found.args_model.model_validate_json(json.dumps({name: value})), error
    except ValidationError as wrapped:
        return None, wrapped


def _described(default: Any, description: str | None) -> Any:
    from pydantic import Field

    return Field(default=default, description=description)


@overload
def tool(fn: Callable[..., Any], /) -> Tool: ...


@overload
def tool(
    *,
    name: str | None = None,
    final: bool = False,
    timeout_s: float | None = None,
    max_output_chars: int | None = None,
    blocking: bool = False,
) -> Callable[[Callable[..., Any]], Tool]: ...


def tool(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    final: bool = False,
    timeout_s: float | None = None,
    max_output_chars: int | None = None,
    blocking: bool = False,
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Turn a function into a tool.

    `final=True` marks the tool that ends the episode (submit_answer): its validated arguments
    are the answer (the single value when it takes one argument). Synchronous tools run on the
    event loop, which is the fast path; mark a slow synchronous tool `blocking=True` to run it in
    a worker thread where its timeout can be enforced. Async tools are always timed out.
    """

    def wrap(f: Callable[..., Any]) -> Tool:
        return Tool(
            f,
            name=name,
            final=final,
            timeout_s=timeout_s,
            max_output_chars=max_output_chars,
            blocking=blocking,
        )

    return wrap(fn) if fn is not None else wrap


def render_output(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, BaseModel):
        return value.model_dump_json()
    return json.dumps(value, default=str, ensure_ascii=False)


def cap_output(text: str, limit: int) -> tuple[str, bool]:
    if len(text) <= limit:
        return text, False
    note = f"\n[output truncated: {limit} of {len(text)} characters shown]"
    return text[:limit] + note, True


@dataclass
class Submission:
    """A call to a final tool that validated and ran: the episode ends with this answer."""

    answer: Any


class Toolkit:
    """The tools of one episode, bound to that episode's context.

    Created fresh for every episode by the environment, so no state leaks between episodes.
    """

    def __init__(
        self,
        tools: list[Tool],
        ctx: Ctx,
        *,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        max_output_chars: int = DEFAULT_MAX_OUTPUT_CHARS,
    ) -> None:
        self.tools = {t.name: t for t in tools}
        if len(self.tools) != len(tools):
            raise ValueError("two tools share a name; tool names must be unique")
        self.ctx = ctx
        self.timeout_s = timeout_s
        self.max_output_chars = max_output_chars
        self.specs = [t.spec for t in tools]

    async def call(self, call: ToolCall) -> tuple[ToolResult, Submission | None]:
        """Run one call; never raises for anything the agent did."""
        started = time.perf_counter()
        found = self.tools.get(call.name)
        if found is None:
            names = ", ".join(self.tools) or "none"
            return self._result(
                call,
                f"unknown tool {call.name!r}; available tools: {names}",
                "unknown_tool",
                started,
            ), None
        args: BaseModel | None
        try:
            args = found.args_model.model_validate_json(call.arguments or "{}")
        except ValidationError as exc:
            args, error = _unwrapped_object(found, call.arguments, exc)
            if args is None:
                return self._result(
                    call, _explain_validation(found.name, error), "invalid_arguments", started
                ), None
        kwargs = {name: getattr(args, name) for name in found.params}
        if found.ctx_param is not None:
            kwargs[found.ctx_param] = self.ctx
        timeout = found.timeout_s or self.timeout_s
        try:
            if found.is_async:  # a deadline, not wait_for: no extra task per call
                async with asyncio.timeout(timeout):
                    value = await found.fn(**kwargs)
            elif found.blocking:
                async with asyncio.timeout(timeout):
                    value = await asyncio.to_thread(found.fn, **kwargs)
            else:
                value = found.fn(**kwargs)
        except TimeoutError:
            return self._result(
                call, f"tool {found.name!r} timed out after {timeout:g} s", "timeout", started
            ), None
        except ToolError as exc:
            return self._result(call, str(exc), "error", started), None
        except Exception as exc:  # a tool's bug must not end the agent's episode
            message = f"tool {found.name!r} raised {type(exc).__name__}: {exc}"
            return self._result(call, message, "error", started), None
        if isinstance(value, ToolError):
            return self._result(call, str(value), "error", started), None
        limit = found.max_output_chars or self.max_output_chars
        text, truncated = cap_output(render_output(value), limit)
        result = self._result(call, text, "ok", started, truncated)
        if found.final:
            dumped = args.model_dump(mode="json")
            answer = dumped[found.params[0]] if len(found.params) == 1 else dumped
            return result, Submission(answer)
        return result, None

    def _result(
        self,
        call: ToolCall,
        content: str,
        status: CallStatus,
        started: float,
        truncated: bool = False,
    ) -> ToolResult:
        if status != "ok":
            content = f"error: {content}"
        return ToolResult(
            call_id=call.id,
            name=call.name,
            arguments=call.arguments,
            content=content,
            status=status,
            elapsed_s=time.perf_counter() - started,
            truncated=truncated,
        )


def _explain_validation(name: str, exc: ValidationError) -> str:
    problems = []
    for err in exc.errors(include_url=False):
        where = ".".join(str(p) for p in err["loc"]) or "arguments"
        if err["type"] == "json_invalid":
            problems.append(f"arguments are not valid JSON ({err['msg']})")
        else:
            problems.append(f"{where}: {err['msg']}")
    return f"invalid arguments for {name!r}: " + "; ".join(problems)
