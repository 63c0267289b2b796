"""An episode record shaped for reading: steps, tool calls joined to their results, flags placed
at the step that raised them, and a short "why" list that leads with the cause of a failure.

All of this is plain data; the page renders it as text (never as HTML), so whatever the agent
wrote is shown, not executed.
"""

from __future__ import annotations

import json
import re
from typing import Any

from workgym.core.episode import upgrade_record
from workgym.guards.review import episode_flags

STATUS_MEANING = {
    "ok": "the verifier judged the submitted answer",
    "no_answer": "the agent never submitted an answer",
    "parse_error": "the submitted answer could not be parsed as the expected type",
    "timeout": "the episode ran out of time before an answer",
    "agent_error": "the agent's output broke the protocol",
    "forbidden_action": "the agent did something the environment forbids",
    "verifier_error": "the verifier crashed: this episode is masked out of training",
    "error": "the episode errored before it could be scored",
}

# Evidence keys under which a verifier may record where a flag was raised (message index, step or
# call id); the audit's own sites are the record's `audit.sites`.
_PLACEMENT_KEYS = ("audit", "flag_steps", "flags")


def _pretty_args(raw: str) -> str:
    try:
        return json.dumps(json.loads(raw), indent=2, ensure_ascii=False)
    except (TypeError, ValueError):
        return raw  # malformed JSON is shown exactly as the model wrote it


def build_steps(record: dict[str, Any]) -> list[dict[str, Any]]:
    """Messages in order; each assistant message numbered as a step, with its calls' results."""
    results = {r.get("call_id"): r for r in record.get("tool_calls") or []}
    answered: set[str] = set()
    steps: list[dict[str, Any]] = []
    step_no = 0
    for index, message in enumerate(record.get("messages") or []):
        role = message.get("role", "")
        if role == "tool" and message.get("tool_call_id") in answered:
            continue  # already shown under the call that produced it
        item: dict[str, Any] = {
            "index": index,
            "role": role,
            "content": message.get("content") or "",
            "name": message.get("name"),
            "step": None,
            "calls": [],
        }
        if role == "assistant":
            step_no += 1
            item["step"] = step_no
            for call in message.get("tool_calls") or []:
                result = results.get(call.get("id"))
                item["calls"].append(
                    {
                        "id": call.get("id"),
                        "name": call.get("name"),
                        "arguments": _pretty_args(call.get("arguments", "")),
                        "result": None
                        if result is None
                        else {
                            "content": result.get("content", ""),
                            "status": result.get("status", "ok"),
                            "truncated": bool(result.get("truncated")),
                            "elapsed_s": result.get("elapsed_s", 0.0),
                        },
                    }
                )
                if result is not None:
                    answered.add(str(call.get("id")))
        steps.append(item)
    return steps


def _placements(
    record: dict[str, Any], audit: dict[str, Any], steps: list[dict[str, Any]]
) -> dict[str, list[int]]:
    """flag -> message indexes where it was raised: the audit's sites, plus any sites a
    verifier recorded in its evidence (by message index, call id or step number)."""
    found: dict[str, list[int]] = {}
    sites = audit.get("sites")
    if isinstance(sites, dict):
        for flag, where in sites.items():
            if isinstance(where, list):
                found[str(flag)] = [i for i in where if isinstance(i, int)]
    verdict = record.get("verdict") or {}
    evidence = verdict.get("evidence") or {}
    by_call = {c["id"]: s["index"] for s in steps for c in s["calls"]}
    by_step = {s["step"]: s["index"] for s in steps if s["step"] is not None}
    for source in [evidence.get(k) for k in _PLACEMENT_KEYS]:
        if not isinstance(source, list):
            continue
        for entry in source:
            if not isinstance(entry, dict) or "flag" not in entry:
                continue
            at: int | None = None
            if isinstance(entry.get("message_index"), int):
                at = entry["message_index"]
            elif entry.get("call_id") in by_call:
                at = by_call[entry["call_id"]]
            elif isinstance(entry.get("step"), int):
                at = by_step.get(entry["step"])
            if at is not None and at not in found.setdefault(str(entry["flag"]), []):
                found[str(entry["flag"])].append(at)
    return {flag: sorted(at) for flag, at in found.items() if at}


def flag_view(record: dict[str, Any], steps: list[dict[str, Any]]) -> dict[str, Any]:
    """All flags of the episode, where each one sits in the transcript, and why it was raised,
    as far as the audit recorded these."""
    names = episode_flags(record)
    audit = upgrade_record(record).get("audit")  # once: an old line keeps its flags flat
    audit = audit if isinstance(audit, dict) else {}
    placed = _placements(record, audit, steps)
    details = audit.get("details")
    why = details if isinstance(details, dict) else {}
    return {
        "names": names,
        "at": {n: placed[n] for n in names if n in placed},
        "unplaced": [n for n in names if n not in placed],
        "why": {n: str(why[n]) for n in names if n in why},
    }


def _short(value: Any, limit: int = 200) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _value_pattern(value: Any) -> re.Pattern[str] | None:
    """How a scalar answer would appear in tool output (a whole number, not part of one)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return re.compile(rf"(?<![\w.]){re.escape(str(value))}(?![\w]|\.\d)")
    if isinstance(value, str) and len(value.strip()) >= 3:
        return re.compile(re.escape(value.strip()), re.IGNORECASE)
    return None


def _where_seen(value: Any, steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Tool results (in order) whose text contains the expected value."""
    pattern = _value_pattern(value)
    if pattern is None:
        return []
    seen = []
    for step in steps:
        for call in step["calls"]:
            result = call.get("result") or {}
            if pattern.search(str(result.get("content", ""))):
                seen.append({"index": step["index"], "step": step["step"], "tool": call["name"]})
    return seen


def findings(
    record: dict[str, Any],
    truth: dict[str, Any],
    steps: list[dict[str, Any]],
    flags: dict[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """The causes a reader needs first, most decisive first: each {"kind", "text", "at"?}.

    `at` is a message index to jump to. Everything here is a plain fact read off the record; the
    reader draws the conclusion. `flags` is the record's `flag_view` when the caller has it
    already (the episode page does), so the record is not read for it twice.
    """
    out: list[dict[str, Any]] = []
    verdict = record.get("verdict") or {}
    status = verdict.get("status", "error") if verdict else "error"
    if record.get("outcome") == "error":
        out.append({"kind": "error", "text": f"episode errored: {record.get('error') or '?'}"})
    if record.get("truncation"):
        out.append(
            {
                "kind": "truncated",
                "text": f"truncated by {record['truncation']} after {record.get('turns', 0)} turns",
            }
        )
    if status != "ok":
        out.append({"kind": "status", "text": f"{status}: {STATUS_MEANING.get(status, '')}"})
    expected = truth.get("answer") if truth.get("available") else None
    if record.get("submitted"):
        answer = _short(record.get("answer"))
        if truth.get("available"):
            same = answer == _short(expected)
            out.append(
                {
                    "kind": "answer-match" if same else "answer",
                    "text": f"answered {answer}; expected {_short(expected)}",
                }
            )
        else:
            out.append({"kind": "answer", "text": f"answered {answer} (expected: unavailable)"})
    elif record.get("outcome") != "error" and status == "ok":
        out.append({"kind": "answer", "text": "no answer was submitted"})
    if truth.get("available"):
        seen = _where_seen(expected, steps)
        if seen:
            first = seen[0]
            out.append(
                {
                    "kind": "evidence",
                    "text": f"the expected value {_short(expected, 60)} appears in the result of "
                    f"{first['tool']} at step {first['step']}"
                    + (f" (and {len(seen) - 1} more)" if len(seen) > 1 else ""),
                    "at": first["index"],
                }
            )
        elif _value_pattern(expected) is not None:
            out.append(
                {
                    "kind": "evidence",
                    "text": f"the expected value {_short(expected, 60)} appears in no tool result",
                }
            )
    failed = [
        (s, c)
        for s in steps
        for c in s["calls"]
        if (c.get("result") or {}).get("status", "ok") != "ok"
    ]
    if failed:
        step, call = failed[0]
        result = call["result"]
        out.append(
            {
                "kind": "tools",
                "text": f"{len(failed)} tool call(s) failed; first at step {step['step']}: "
                f"{call['name']} ({result['status']}): {_short(result.get('content', ''), 160)}",
                "at": step["index"],
            }
        )
    flags = flags if flags is not None else flag_view(record, steps)
    if flags["names"]:
        step_of = {s["index"]: s["step"] for s in steps}
        placed: dict[str, list[int]] = flags["at"]
        earliest = min((at[0] for at in placed.values()), default=None)
        named = [
            f"{n} at step {step_of.get(placed[n][0])}" if n in placed else n for n in flags["names"]
        ]
        text = "audit flags: " + ", ".join(named)
        if verdict.get("success"):
            text += " (on a success: not counted until reviewed)"
        kind = "flag-success" if verdict.get("success") else "flag"
        item: dict[str, Any] = {"kind": kind, "text": text}
        if earliest is not None:
            item["at"] = earliest
        out.append(item)
    return out
