"""Capability tags: which verifier semantics an environment has, so probes know where they apply.

A probe attacks a *kind* of verifier (a single final answer, a result set, tool calls, a state
diff, a structured conclusion, an LLM judge), not a particular environment. Two tags are inferred
from the tools; the rest are declared by the environment in its `guard_tags`
(workgym.guards.hooks), so an environment built later (warehouse, ops API, document store) is
attacked by every probe that fits without the guards knowing it exists.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from workgym.guards.hooks import Submits, guard_tags, satisfies

if TYPE_CHECKING:
    from workgym.core.environment import Environment

FINAL_ANSWER = "final_answer"  # the episode ends with one answer value (final tool or text)
FINAL_TOOL = "final_tool"  # that answer arrives through a final tool (inferred)
TEXT_ANSWER = "text_answer"  # no final tool: the last text reply is the answer (inferred)
TOOLS = "tools"  # the agent has tools besides the final one (inferred)
SQL_ANSWER = "sql_answer"  # the answer is a result set, compared as docs/warehouse.md says
TOOL_CALLS = "tool_calls"  # the verifier judges the calls the agent made
STATE = "state"  # the verifier compares the tools' final state with the expected one
CONCLUSION = "conclusion"  # a structured conclusion (cause, slice, window, evidence)
JUDGE = "judge"  # an LLM judge scores part of the answer

DECLARABLE = frozenset({SQL_ANSWER, TOOL_CALLS, STATE, CONCLUSION, JUDGE, FINAL_ANSWER})


def capabilities(env: Environment) -> frozenset[str]:
    """Inferred tags plus the declared ones; an unknown declared tag is an error, not a no-op."""
    declared = guard_tags(env)
    unknown = declared - DECLARABLE
    if unknown:
        raise ValueError(
            f"{type(env).__name__}.guard_tags has unknown tag(s) {sorted(unknown)}; "
            f"use any of {sorted(DECLARABLE)}"
        )
    tags = set(declared)
    final = env.final_tool
    if final is None:
        tags |= {FINAL_ANSWER, TEXT_ANSWER}
    else:
        tags.add(FINAL_TOOL)
        if len(final.params) == 1 or satisfies(env, Submits):
            tags.add(FINAL_ANSWER)
    if any(not t.final for t in env.tools):
        tags.add(TOOLS)
    return frozenset(tags)
