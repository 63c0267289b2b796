"""Reference-query results as answers: how a result becomes the gold submission, and hashes.

Shared by validation and the awkward-variant check, so the gold answer and the naive answer are
derived by exactly the same rules, and compared under the verifier's semantics.
"""

from __future__ import annotations

import hashlib
import json
from decimal import Decimal
from typing import Any

from workgym.envs.warehouse.generate.families.draft import Draft
from workgym.envs.warehouse.runtime.answers import numbers_equal, plain, round_half_up
from workgym.verifiers.sql_exec import SqlResult


class Rejected(Exception):
    """A draft that is not a good task; the message says why (counted in the report)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def result_hash(rows: list[tuple[Any, ...]], ordered: bool) -> str:
    body = [json.dumps([plain(v) for v in r], default=str) for r in rows]
    if not ordered:
        body.sort()
    return hashlib.sha256("\n".join(body).encode()).hexdigest()[:16]


def key_text(value: Any) -> str:
    """How a key value is written in keys/top_k answers: DuckDB's text form."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(plain(value))


def _scalar(result: SqlResult) -> Any:
    if len(result.rows) != 1 or len(result.rows[0]) != 1:
        raise Rejected(f"expected one value, got {len(result.rows)} rows")
    return result.rows[0][0]


def answer_of(draft: Draft, result: SqlResult) -> dict[str, Any]:
    """The gold submission a result implies for the draft's answer kind."""
    kind = draft.kind
    if kind == "integer":
        value = _scalar(result)
        if isinstance(value, Decimal) and value == value.to_integral_value():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            raise Rejected(f"expected an integer, got {type(value).__name__}")
        return {"kind": "integer", "value": value}
    if kind == "number":
        value = _scalar(result)
        if isinstance(value, bool) or not isinstance(value, int | float | Decimal):
            raise Rejected(f"expected a number, got {type(value).__name__}")
        number = float(value)
        if draft.decimals is None:
            raise Rejected("a number task must state its rounding")
        rounded = round_half_up(number, draft.decimals)
        if rounded is None:
            raise Rejected("the number is not finite")
        return {"kind": "number", "value": float(rounded)}
    if kind in ("keys", "top_k"):
        values = [r[0] for r in result.rows]
        if any(v is None for v in values):
            raise Rejected("a key in the result is NULL")
        texts = [key_text(v) for v in values]
        if len(set(texts)) != len(texts):
            raise Rejected("the key column repeats a value")
        return {"kind": kind, "values": sorted(texts) if kind == "keys" else texts}
    raise Rejected(f"no answer derivation for kind {kind}")


def same_answer(draft: Draft, a: dict[str, Any], b: dict[str, Any]) -> bool:
    if draft.kind == "number":
        return numbers_equal(a["value"], b["value"], draft.decimals)
    if draft.kind == "keys":
        return set(a["values"]) == set(b["values"])
    return a == b


def summary(rows: list[tuple[Any, ...]], limit: int = 5) -> dict[str, Any]:
    """A short, JSON-safe record of a result (row count and the first rows)."""
    return {"rows": len(rows), "head": [[plain(v) for v in r] for r in rows[:limit]]}
