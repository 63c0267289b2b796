"""Scoring function calls against BFCL's possible answers, with workgym's strict semantics.

BFCL stores, per expected call, each parameter's list of acceptable values ("" in the list means
the parameter may be left out). A reply is correct when its calls can be paired one-to-one with
the expected calls (any order) and each pair has:

1. the exact function name;
2. arguments valid against the function's JSON schema, strictly: "5" is not an integer, True is
   not 1, no argument the schema does not declare, every required argument present (this part is
   the tool-call verifier's schema check, `workgym.verifiers.calls_schema`);
3. no argument the expected call does not list, every omitted one optional ("" allowed);
4. each value equal to one acceptable value under the verifier's declared normalisers
   (`workgym.verifiers.calls_normalise`): numbers as numbers (an integer for a float parameter is
   the same JSON number), strings with case folding and white space collapsed (no punctuation
   stripping: "1.5" and "15" differ), anything else exactly; lists element by element in order,
   objects key by key;
5. an explicit null for an argument that is not required counts as leaving it out.

Where BFCL's own checker decides differently (it strips punctuation from strings, matches parallel
calls greedily, and accepts a value of the "variable" type its answer uses) is listed with
reasons in docs/certificate.md.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from itertools import permutations
from typing import Any

# BFCL's type names (Python flavour) as JSON-schema types, as BFCL's own OpenAI handler maps them.
TYPE_MAP = {
    "integer": "integer",
    "number": "number",
    "float": "number",
    "double": "number",
    "string": "string",
    "any": "string",
    "boolean": "boolean",
    "bool": "boolean",
    "array": "array",
    "list": "array",
    "tuple": "array",
    "dict": "object",
    "object": "object",
}

Call = tuple[str, dict[str, Any]]


def _schema(node: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in node.items() if k not in ("type", "properties", "items", "optional")}
    out["type"] = TYPE_MAP.get(str(node.get("type", "string")), "string")
    if isinstance(node.get("properties"), dict):
        out["properties"] = {k: _schema(v) for k, v in node["properties"].items()}
    if isinstance(node.get("items"), dict):
        out["items"] = _schema(node["items"])
    if out["type"] == "array" and "enum" in out:
        # BFCL writes an array's allowed item values on the array itself.
        items = dict(out.get("items") or {"type": "string"})
        items["enum"] = out.pop("enum")
        out["items"] = items
    return out


def to_json_schema(parameters: dict[str, Any]) -> dict[str, Any]:
    """BFCL's parameter block as a JSON schema: object at the top, no undeclared arguments."""
    schema = _schema(parameters)
    schema["type"] = "object"
    schema.setdefault("properties", {})
    schema["additionalProperties"] = False
    return schema


def schema_problems(arguments: dict[str, Any], schema: dict[str, Any]) -> list[str]:
    """Strict schema validation by the tool-call verifier (`workgym.verifiers.calls_schema`)."""
    from workgym.verifiers.calls_schema import validate

    return validate(arguments, schema)


def _is_number(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)


def matches(value: Any, accepted: Any) -> bool:
    """Does `value` equal one acceptable value (a scalar, a list, or a dict of key -> options)?"""
    if isinstance(accepted, dict):
        if not isinstance(value, dict):
            return False
        for key, v in value.items():
            if key not in accepted or not any_match(v, accepted[key]):
                return False
        return all(key in value or "" in opts for key, opts in accepted.items())
    if isinstance(accepted, list):
        return (
            isinstance(value, list)
            and len(value) == len(accepted)
            and all(matches(v, a) for v, a in zip(value, accepted, strict=True))
        )
    from workgym.verifiers.calls_normalise import matches as declared

    if _is_number(accepted):
        return _is_number(value) and declared("number", accepted, value)
    if isinstance(accepted, str):
        return isinstance(value, str) and declared("casefold", accepted, value)
    return declared("exact", accepted, value)


def any_match(value: Any, options: Any) -> bool:
    """`options` is BFCL's list of acceptable values; "" only means "may be omitted"."""
    if not isinstance(options, list):
        options = [options]
    return any(matches(value, o) for o in options if not (isinstance(o, str) and o == ""))


def check_call(
    call: Call, expected: dict[str, dict[str, Any]], schemas: dict[str, dict[str, Any]]
) -> str | None:
    """None when `call` satisfies the expected call, else the first reason it does not."""
    name, args = call
    ((exp_name, exp_args),) = expected.items()
    if name != exp_name:
        return f"function {name!r} is not {exp_name!r}"
    schema = schemas.get(name)
    if schema is None:
        return f"function {name!r} is not among the tools offered"
    args = without_null_optionals(args, schema)
    problems = schema_problems(args, schema)
    if problems:
        return problems[0]
    for param, value in args.items():
        if param not in exp_args:
            return f"argument {param!r} is not expected in this call"
        if not any_match(value, exp_args[param]):
            return f"argument {param!r}={json.dumps(value)[:80]} is not an accepted value"
    for param, options in exp_args.items():
        opts = options if isinstance(options, list) else [options]
        if param not in args and "" not in opts and None not in opts:
            return f"argument {param!r} is missing"
    return None


def without_null_optionals(args: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """An explicit null for an argument that is not required means "left out" (the default)."""
    required = set(schema.get("required", []))
    return {k: v for k, v in args.items() if v is not None or k in required}


def value_fits(param: str, value: Any, schema: dict[str, Any]) -> bool:
    """Does one argument value fit its declared schema (on its own)?"""
    return not schema_problems({param: value}, {**schema, "required": []})


def check_calls(
    calls: Sequence[Call],
    expected: Sequence[dict[str, dict[str, Any]]],
    schemas: dict[str, dict[str, Any]],
) -> str | None:
    """None when the calls pair one-to-one with the expected calls (in any order)."""
    if len(calls) != len(expected):
        return f"{len(calls)} calls, expected {len(expected)}"
    reasons = [[check_call(c, e, schemas) for e in expected] for c in calls]
    if len(calls) <= 7:
        for order in permutations(range(len(expected))):
            if all(reasons[i][j] is None for i, j in enumerate(order)):
                return None
    elif _bipartite(reasons):
        return None
    return _explain(calls, expected, reasons)


def _explain(
    calls: Sequence[Call],
    expected: Sequence[dict[str, dict[str, Any]]],
    reasons: list[list[str | None]],
) -> str:
    """The most telling reason: a call with no acceptable partner, judged against an expected
    call of the same function when there is one."""
    for i, row in enumerate(reasons):
        if all(r is not None for r in row):
            same = [r for r, e in zip(row, expected, strict=True) if calls[i][0] in e]
            why = (same or row)[0] or ""
            return why if len(calls) == 1 else f"call {i + 1} ({calls[i][0]}): {why}"
    return "the calls cannot be paired one-to-one with the expected calls"


def _bipartite(reasons: list[list[str | None]]) -> bool:
    """Perfect matching by augmenting paths (for many parallel calls)."""
    n = len(reasons)
    owner: list[int | None] = [None] * n

    def augment(i: int, seen: set[int]) -> bool:
        for j in range(n):
            if reasons[i][j] is None and j not in seen:
                seen.add(j)
                o = owner[j]
                if o is None or augment(o, seen):
                    owner[j] = i
                    return True
        return False

    return all(augment(i, set()) for i in range(n))


def decode(tool_calls: Sequence[Any], names: dict[str, str]) -> list[Call] | str:
    """The calls of one assistant turn as (BFCL name, arguments); a string says why not."""
    out: list[Call] = []
    for call in tool_calls:
        try:
            args = json.loads(call.arguments or "{}")
        except json.JSONDecodeError as exc:
            return f"arguments of {call.name!r} are not valid JSON ({exc.msg})"
        if not isinstance(args, dict):
            return f"arguments of {call.name!r} are not a JSON object"
        out.append((names.get(call.name, call.name), args))
    return out


def safe_name(name: str, taken: set[str]) -> str:
    """A tool name OpenAI-compatible servers accept (^[a-zA-Z0-9_-]{1,64}$), unique here."""
    base = re.sub(r"[^A-Za-z0-9_-]", "_", name)[:60] or "f"
    out, i = base, 2
    while out in taken:
        out, i = f"{base}_{i}", i + 1
    taken.add(out)
    return out
