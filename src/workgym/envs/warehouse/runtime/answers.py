"""Typed answers for warehouse tasks, and the verifier of every kind except SQL and conclusions.

An agent ends a warehouse episode with `submit_answer(answer=...)`, where `answer` is one of the
models below, chosen by its `kind`. Each task declares the kind it wants (and states it in the
question) plus the semantics of the comparison in an `AnswerSpec`. The semantics are declared so
they can be attacked (docs/guards.md) and explained:

- integer: exact equality; "5" is not 5 and true is not 1 (the tool validates strictly).
- number: both sides rounded to the stated decimal places (half away from zero), then equal;
  with no stated rounding, |a-b| <= max(1e-9, 1e-6 max(|a|,|b|)). Never an absolute 1e-2.
- keys: a set of key values as text, exactly as stored (case and spaces count); each key once;
  an empty list is a valid answer when the question says the set may be empty.
- top_k: an ordered list of key values as text, exactly k of them, in the stated order.
- column: `table.column`, compared case-insensitively with surrounding spaces and double quotes
  removed (the one declared normaliser); only the declared columns are accepted.
- abstain: the task is unanswerable from the warehouse; the reason code must match.
- sql: a query whose result is compared with the gold query's on the real snapshot and on the
  fuzzed test suite (`workgym.verifiers.sql.verify_sql`, see docs/warehouse.md).
- conclusion: an investigation conclusion (F9); its schema is `conclusion_answer`, its verifier
  the F9 family's (`investigate.conclusion.verify_conclusion`, reached through `family_plug`).
"""

from __future__ import annotations

import math
from datetime import date, datetime, time, timedelta
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, RootModel, TypeAdapter, ValidationError

from workgym.core.verdict import Status, Verdict

# The conclusion schema sits in this stage, below its verifier (F9, in `investigate`): one schema
# for the tool and the verifier, and the tool never imports the stage above.
from workgym.envs.warehouse.runtime.conclusion_answer import ConclusionAnswer

AnswerKind = Literal["integer", "number", "keys", "top_k", "column", "abstain", "sql", "conclusion"]
AbstainReason = Literal["missing_data", "out_of_range"]
ABSTAIN_REASONS: dict[str, str] = {
    "missing_data": "no table or column of the warehouse holds what the question needs",
    "out_of_range": "the question asks about a period the warehouse does not cover",
}

_STRICT = ConfigDict(strict=True, extra="forbid", frozen=True)


class IntegerAnswer(BaseModel):
    """A whole number, e.g. a count."""

    model_config = _STRICT
    kind: Literal["integer"]
    value: int


class NumberAnswer(BaseModel):
    """A number; rounded as the question states."""

    model_config = _STRICT
    kind: Literal["number"]
    value: float


class KeysAnswer(BaseModel):
    """A set of key values (as text), in any order; empty when the question allows it."""

    model_config = _STRICT
    kind: Literal["keys"]
    values: list[str]


class TopKAnswer(BaseModel):
    """An ordered list of key values (as text), best first."""

    model_config = _STRICT
    kind: Literal["top_k"]
    values: list[str]


class ColumnAnswer(BaseModel):
    """A column, written as table.column."""

    model_config = _STRICT
    kind: Literal["column"]
    value: str


class AbstainAnswer(BaseModel):
    """The warehouse cannot answer the question; say why with a reason code."""

    model_config = _STRICT
    kind: Literal["abstain"]
    reason: AbstainReason
    detail: str = ""


class SqlAnswer(BaseModel):
    """One read-only SELECT whose result is the answer."""

    model_config = _STRICT
    kind: Literal["sql"]
    sql: str


Answer = Annotated[
    IntegerAnswer
    | NumberAnswer
    | KeysAnswer
    | TopKAnswer
    | ColumnAnswer
    | AbstainAnswer
    | SqlAnswer
    | ConclusionAnswer,
    Field(discriminator="kind"),
]
_ANSWER: TypeAdapter[Any] = TypeAdapter(Answer)


# A root model rather than the bare annotated union: tool signatures are read with
# `get_type_hints`, which drops the `Annotated` discriminator; the root model keeps it, so a wrong
# value gets one precise error instead of one per answer kind. (Its docstring is shown to agents.)
class SubmittedAnswer(RootModel[Answer]):  # type: ignore[type-arg]
    """One answer object; its "kind" says which form it takes."""


class SqlSpec(BaseModel):
    """How an SQL answer's result is compared (mirrors verifiers.sql_compare.SqlAnswerSpec)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    ordered: bool = False
    rounding: int | None = None
    allow_extra_columns: bool = False


class AnswerSpec(BaseModel):
    """What a task declares about its answer; stated in the question, enforced by `check`."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    kind: AnswerKind
    decimals: int | None = None  # number: stated rounding
    k: int | None = None  # top_k: list length
    may_be_empty: bool = False  # keys
    columns: list[str] = Field(default_factory=list)  # column: every accepted table.column
    sql: SqlSpec | None = None  # sql: result comparison
    gold_sql: str | None = None  # sql: the reference query


def parse_answer(value: Any) -> Any:
    """Validate a submitted answer (already a dict from the tool); raise ValueError on bad input."""
    try:
        return _ANSWER.validate_python(value)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ValueError(f"not a valid answer ({where}: {first['msg']})") from None


def round_half_up(x: float, places: int) -> Decimal | None:
    """`x` rounded half away from zero, computed on its shortest decimal repr (deterministic)."""
    if math.isnan(x) or math.isinf(x):
        return None
    try:
        return Decimal(repr(x)).quantize(Decimal(1).scaleb(-places), ROUND_HALF_UP)
    except InvalidOperation:
        return None


def plain(value: Any) -> Any:
    """A JSON-safe, comparable form of one result value."""
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, float):
        return None if math.isnan(value) else float(f"{value:.12g}")
    if isinstance(value, datetime | date | time):
        return value.isoformat(sep=" ") if isinstance(value, datetime) else value.isoformat()
    if isinstance(value, timedelta):
        return value.total_seconds()
    if isinstance(value, bytes | bytearray):
        return value.hex()
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


def numbers_equal(got: float, gold: float, decimals: int | None) -> bool:
    if decimals is not None:
        a, b = round_half_up(got, decimals), round_half_up(gold, decimals)
        return a is not None and a == b
    if math.isnan(got) or math.isnan(gold) or math.isinf(got) or math.isinf(gold):
        return got == gold
    return abs(got - gold) <= max(1e-9, 1e-6 * max(abs(got), abs(gold)))


def normalise_column(text: str) -> str:
    """The declared normaliser for table.column answers: case, spaces and double quotes."""
    return text.replace('"', "").strip().lower().replace(" ", "")


def verify_typed(spec: AnswerSpec, gold: Any, submitted: Any) -> Verdict:
    """Score a typed (non-SQL, non-conclusion) answer against the gold submission form."""
    if submitted is None:
        return Verdict.wrong(Status.no_answer)
    try:
        got = parse_answer(submitted)
    except ValueError as exc:
        return Verdict.wrong(Status.parse_error, reason=str(exc))
    want = parse_answer(gold)
    if got.kind != spec.kind:  # well formed, but not what the question asks for: wrong
        return Verdict.wrong(reason=f"the question asks for a {spec.kind} answer, got {got.kind}")
    if isinstance(got, IntegerAnswer):
        ok = got.value == want.value
    elif isinstance(got, NumberAnswer):
        ok = numbers_equal(got.value, want.value, spec.decimals)
    elif isinstance(got, KeysAnswer):
        if len(set(got.values)) != len(got.values):
            return Verdict.wrong(reason="a key is listed more than once")
        ok = set(got.values) == set(want.values)
    elif isinstance(got, TopKAnswer):
        ok = got.values == want.values
    elif isinstance(got, ColumnAnswer):
        accepted = {normalise_column(c) for c in (spec.columns or [want.value])}
        ok = normalise_column(got.value) in accepted
    elif isinstance(got, AbstainAnswer):
        ok = got.reason == want.reason
    else:
        raise ValueError(f"verify_typed cannot score {got.kind} answers")
    if ok:
        return Verdict.correct()
    return Verdict.wrong(reason=f"{spec.kind} answer does not match")
