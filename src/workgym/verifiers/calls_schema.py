"""Strict JSON-schema validation of recorded tool-call arguments.

The toolkit already refuses bad calls before they run, but a verifier judges what the agent
*wrote*, from the transcript, against the schema the agent was shown. Lenient validators are a
documented false-pass path: "5" passes as an integer after coercion, True passes as 1 because
bool subclasses int in Python, and extra arguments slip through. This validator covers the subset
of JSON Schema that `@tool` (pydantic) emits and is strict on every one of those points.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from typing import Any

_TYPE_NAMES = ("string", "integer", "number", "boolean", "array", "object", "null")


def _is_type(value: Any, name: str) -> bool:
    if name == "string":
        return isinstance(value, str)
    if name == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if name == "number":
        return (
            isinstance(value, int | float)
            and not isinstance(value, bool)
            and not (isinstance(value, float) and not math.isfinite(value))
        )
    if name == "boolean":
        return isinstance(value, bool)
    if name == "array":
        return isinstance(value, list)
    if name == "object":
        return isinstance(value, dict)
    if name == "null":
        return value is None
    raise ValueError(f"schema uses unknown type {name!r}; expected one of {_TYPE_NAMES}")


def _resolve(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    if ref is None:
        return schema
    prefix = "#/$defs/"
    if not isinstance(ref, str) or not ref.startswith(prefix):
        raise ValueError(f"schema $ref {ref!r} is not a local #/$defs/ reference")
    target = root.get("$defs", {}).get(ref[len(prefix) :])
    if target is None:
        raise ValueError(f"schema $ref {ref!r} points at nothing")
    return _resolve(target, root)


def _check_format(value: str, fmt: str) -> str | None:
    try:
        if fmt == "date":
            if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
                raise ValueError(value)
            dt.date.fromisoformat(value)
        elif fmt == "date-time":
            dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return f"is not a valid {fmt} (ISO 8601)"
    return None


def validate(value: Any, schema: dict[str, Any], root: dict[str, Any] | None = None) -> list[str]:
    """Every way `value` breaks `schema`, as `path: problem` lines; empty when it conforms."""
    return _validate(value, schema, root if root is not None else schema, "arguments")


def _validate(value: Any, schema: dict[str, Any], root: dict[str, Any], path: str) -> list[str]:
    schema = _resolve(schema, root)
    for key in ("anyOf", "oneOf"):
        if key in schema:
            options = [_validate(value, s, root, path) for s in schema[key]]
            fits = sum(1 for o in options if not o)
            if fits == 0 or (key == "oneOf" and fits > 1):
                best = min(options, key=len)
                return best or [f"{path}: matches {fits} alternatives of oneOf, expected one"]
    if "allOf" in schema:
        problems = [p for s in schema["allOf"] for p in _validate(value, s, root, path)]
        if problems:
            return problems
    if "const" in schema and not _same(value, schema["const"]):
        return [f"{path}: must be {schema['const']!r}, got {value!r}"]
    if "enum" in schema and not any(_same(value, e) for e in schema["enum"]):
        return [f"{path}: must be one of {schema['enum']!r}, got {value!r}"]
    types = schema.get("type")
    if types is not None:
        names = [types] if isinstance(types, str) else list(types)
        if not any(_is_type(value, n) for n in names):
            return [f"{path}: must be {' or '.join(names)}, got {_kind(value)} {value!r}"[:200]]
    if isinstance(value, str):
        return _string(value, schema, path)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return _number(value, schema, path)
    if isinstance(value, list):
        return _array(value, schema, root, path)
    if isinstance(value, dict):
        return _object(value, schema, root, path)
    return []


def _kind(value: Any) -> str:
    for name in ("boolean", "integer", "number", "string", "array", "object", "null"):
        if _is_type(value, name):
            return name
    return type(value).__name__


def _same(a: Any, b: Any) -> bool:
    """Equality without Python's True == 1: JSON kinds must agree (integer and number may mix)."""
    ka, kb = _kind(a), _kind(b)
    numeric = {"integer", "number"}
    if ka in numeric and kb in numeric:
        return bool(a == b)
    return ka == kb and bool(a == b)


def _string(value: str, schema: dict[str, Any], path: str) -> list[str]:
    out = []
    if "minLength" in schema and len(value) < schema["minLength"]:
        out.append(f"{path}: shorter than {schema['minLength']} characters")
    if "maxLength" in schema and len(value) > schema["maxLength"]:
        out.append(f"{path}: longer than {schema['maxLength']} characters")
    if "pattern" in schema and not re.search(schema["pattern"], value):
        out.append(f"{path}: does not match pattern {schema['pattern']!r}")
    if "format" in schema:
        problem = _check_format(value, schema["format"])
        if problem:
            out.append(f"{path}: {problem}")
    return out


def _number(value: float, schema: dict[str, Any], path: str) -> list[str]:
    out = []
    if "minimum" in schema and value < schema["minimum"]:
        out.append(f"{path}: below the minimum {schema['minimum']}")
    if "maximum" in schema and value > schema["maximum"]:
        out.append(f"{path}: above the maximum {schema['maximum']}")
    if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
        out.append(f"{path}: must be greater than {schema['exclusiveMinimum']}")
    if "exclusiveMaximum" in schema and value >= schema["exclusiveMaximum"]:
        out.append(f"{path}: must be less than {schema['exclusiveMaximum']}")
    return out


def _array(value: list[Any], schema: dict[str, Any], root: dict[str, Any], path: str) -> list[str]:
    out = []
    if "minItems" in schema and len(value) < schema["minItems"]:
        out.append(f"{path}: fewer than {schema['minItems']} items")
    if "maxItems" in schema and len(value) > schema["maxItems"]:
        out.append(f"{path}: more than {schema['maxItems']} items")
    items = schema.get("items")
    if isinstance(items, dict):
        for i, item in enumerate(value):
            out.extend(_validate(item, items, root, f"{path}[{i}]"))
    return out


def _object(
    value: dict[str, Any], schema: dict[str, Any], root: dict[str, Any], path: str
) -> list[str]:
    out = []
    props: dict[str, Any] = schema.get("properties", {})
    for name in schema.get("required", []):
        if name not in value:
            out.append(f"{path}.{name}: required argument is missing")
    extra = schema.get("additionalProperties", True)
    for name, item in value.items():
        where = f"{path}.{name}"
        if name in props:
            out.extend(_validate(item, props[name], root, where))
        elif extra is False:
            out.append(f"{where}: not a declared argument")
        elif isinstance(extra, dict):
            out.extend(_validate(item, extra, root, where))
    return out
