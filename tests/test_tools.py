from __future__ import annotations

import asyncio
import time
from typing import Literal

import pytest
from pydantic import BaseModel, ConfigDict

import workgym as wg
from conftest import call
from workgym.core.errors import ToolError
from workgym.core.tools import Ctx, Toolkit


@wg.tool
def add(a: int, b: int = 1) -> int:
    """Add two integers.

    Args:
        a: The first number.
        b: The second number,
            defaulting to one.
    """
    return a + b


@wg.tool
def remember(ctx: Ctx, key: str, value: str) -> str:
    """Store a value in this episode's memory.

    Args:
        key: Name to store it under.
        value: What to store.
    """
    ctx.state[key] = value
    return f"stored {len(ctx.state)}"


@wg.tool
def boom(x: int) -> str:
    """Always fails."""
    raise ValueError("kaput")


@wg.tool
def polite_failure(x: int) -> ToolError:
    """Returns an error instead of raising."""
    return ToolError("nothing found for that")


@wg.tool(timeout_s=0.05)
async def slow_async(x: int) -> str:
    """Sleeps too long."""
    await asyncio.sleep(5)
    return "late"


@wg.tool(timeout_s=0.05, blocking=True)
def slow_blocking(x: int) -> str:
    """Blocks too long in a worker thread."""
    time.sleep(0.3)
    return "late"


@wg.tool(max_output_chars=50)
def big(n: int) -> str:
    """Returns a lot of text."""
    return "x" * n


@wg.tool(final=True)
def submit(answer: int) -> str:
    """Submit the answer."""
    return "ok"


def kit(*tools: wg.Tool, state: object = None) -> Toolkit:
    return Toolkit(list(tools), Ctx(state=state if state is not None else {}))


def run(toolkit: Toolkit, c: wg.ToolCall):  # type: ignore[no-untyped-def]
    return asyncio.run(toolkit.call(c))


def test_schema_from_hints_and_docstring() -> None:
    spec = add.spec
    assert spec.name == "add" and spec.description == "Add two integers."
    params = spec.parameters
    assert params["required"] == ["a"]
    assert params["properties"]["a"] == {"type": "integer", "description": "The first number."}
    assert params["properties"]["b"]["description"] == "The second number, defaulting to one."
    assert params["additionalProperties"] is False
    assert "ctx" not in remember.spec.parameters["properties"]
    assert spec.to_openai()["function"]["name"] == "add"


def test_missing_docstring_or_hint_is_a_definition_error() -> None:
    with pytest.raises(TypeError, match="docstring"):
        wg.tool(lambda x: x)
    with pytest.raises(TypeError, match="type hint"):

        @wg.tool
        def untyped(x):  # type: ignore[no-untyped-def]
            """Doc."""


@pytest.mark.parametrize(
    "arguments, fragment",
    [
        ('{"a": "5"}', "valid integer"),
        ('{"a": true}', "valid integer"),
        ('{"a": 1, "c": 2}', "Extra inputs"),
        ("{}", "Field required"),
        ('{"a": 1', "not valid JSON"),
    ],
)
def test_invalid_arguments_come_back_as_tool_errors(arguments: str, fragment: str) -> None:
    result, sub = run(kit(add), wg.ToolCall(id="1", name="add", arguments=arguments))
    assert result.status == "invalid_arguments" and sub is None
    assert fragment in result.content and result.content.startswith("error:")


def test_valid_call_runs() -> None:
    result, _ = run(kit(add), call("add", a=2, b=3))
    assert result.status == "ok" and result.content == "5"


def test_unknown_tool_lists_the_real_ones() -> None:
    result, _ = run(kit(add), call("ad", a=1))
    assert result.status == "unknown_tool" and "available tools: add" in result.content


def test_exceptions_and_returned_errors_do_not_escape() -> None:
    result, _ = run(kit(boom), call("boom", x=1))
    assert result.status == "error" and "ValueError: kaput" in result.content
    result, _ = run(kit(polite_failure), call("polite_failure", x=1))
    assert result.status == "error" and result.content == "error: nothing found for that"


def test_timeouts_for_async_and_blocking_tools() -> None:
    for t in (slow_async, slow_blocking):
        result, _ = run(kit(t), call(t.name, x=1))
        assert result.status == "timeout" and "timed out after 0.05 s" in result.content
        assert result.elapsed_s < 0.25  # the agent gets its error without waiting for the tool


def test_output_is_capped_with_a_note() -> None:
    result, _ = run(kit(big), call("big", n=500))
    assert result.truncated and result.content.startswith("x" * 50)
    assert "[output truncated: 50 of 500 characters shown]" in result.content


def test_final_tool_returns_the_submission() -> None:
    _result, sub = run(kit(submit), call("submit", answer=7))
    assert sub is not None and sub.answer == 7
    _, sub = run(kit(submit), call("submit", answer="7"))
    assert sub is None  # an invalid submission does not end the episode


def test_state_is_per_toolkit() -> None:
    a, b = kit(remember, state={}), kit(remember, state={})
    run(a, call("remember", key="k", value="v"))
    result, _ = run(a, call("remember", key="k2", value="v"))
    assert result.content == "stored 2"
    result, _ = run(b, call("remember", key="k", value="v"))
    assert result.content == "stored 1"


def test_duplicate_tool_names_are_refused() -> None:
    with pytest.raises(ValueError, match="unique"):
        kit(add, add)


class Ticket(BaseModel):
    model_config = ConfigDict(extra="forbid")
    kind: Literal["bug", "task"]
    title: str


@wg.tool(final=True)
def file_ticket(ticket: Ticket) -> str:
    """File one ticket.

    Args:
        ticket: The ticket object.
    """
    return f"{ticket.kind}: {ticket.title}"


def test_a_one_object_tool_called_with_the_object_itself_runs() -> None:
    """Real models flatten `f(ticket={...})` into `f({...})` (the 1.5B did in every warehouse
    episode); the meaning is unambiguous, so the call runs. Anything else keeps its error."""
    flat = wg.ToolCall(id="1", name="file_ticket", arguments='{"kind": "bug", "title": "x"}')
    result, sub = run(kit(file_ticket), flat)
    assert result.status == "ok" and result.content == "bug: x" and sub is not None
    for arguments, fragment in (
        ('{"kind": "idea", "title": "x"}', "ticket.kind"),  # read as the ticket: its error
        ('{"ticket": {"kind": "bug"}}', "title"),  # named, so never re-read
        ("[1, 2]", "ticket"),
    ):
        bad = wg.ToolCall(id="2", name="file_ticket", arguments=arguments)
        result, sub = run(kit(file_ticket), bad)
        assert result.status == "invalid_arguments" and sub is None, arguments
        assert fragment in result.content
    # a tool of two parameters is never unwrapped
    two = wg.ToolCall(id="3", name="add", arguments='{"b": 1}')
    assert run(kit(add), two)[0].status == "invalid_arguments"
