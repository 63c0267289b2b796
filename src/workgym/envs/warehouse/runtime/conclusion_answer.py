"""The structured conclusion an investigator submits (the `conclusion` answer kind).

One conclusion names one cause: its type from the closed vocabulary (`vocab`, aliases allowed),
the predicate that selects the affected rows ([{column, op, value}], AND-ed), the window it acted
in ([start, end) as ISO dates or timestamps, UTC), the direction it moved the metric, its
magnitude (its relative effect on the window's value, e.g. -0.12), and the queries it rests
on. Evidence is a query, or a query with a number it returned (`{"sql": ..., "value": ...}`);
the verifier re-runs every query and checks the number. Prose is kept and never scored.

When nothing was planted the conclusion is a single `normal_variation`. Naming several types in
one conclusion ("duplication, volume_drop", "a or b") is not a vocabulary term and fails: an
investigator must commit to exactly as many causes as there are.

This module holds only the schema (pydantic, no SQL), so the warehouse answer union can import it
without pulling in the investigation machinery. The gold answer of a task has the same shape
plus the hidden `manifest`, which a submission may not set (it is ignored and never read).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.json_schema import SkipJsonSchema

Op = Literal["=", "!=", "<", "<=", ">", ">=", "in", "not in", "is null", "is not null"]
Direction = Literal["up", "down", "none"]
MAX_EVIDENCE = 20
MAX_TERMS = 10


class PredicateTerm(BaseModel):
    """One condition of the affected slice, e.g. {"column": "carrier", "op": "=", "value": "UA"}.

    `column` is a column of the investigated table (optionally `table.column`), or a column of a
    table its foreign keys reach (`airlines.name`).
    """

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    column: str = Field(max_length=200)
    op: Op = "="
    value: str | int | float | bool | list[str] | list[int] | list[float] | None = None


class EvidenceQuery(BaseModel):
    """A query the conclusion rests on, optionally with a number it returned."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    sql: str = Field(max_length=20_000)
    value: float | None = None


SCORED_FIELDS = {"kind", "cause_type", "predicate", "window", "direction", "magnitude"}


class ConclusionAnswer(BaseModel):
    """An investigation conclusion: one cause, its slice, window, direction and evidence."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    kind: Literal["conclusion"]
    cause_type: str = Field(max_length=200)
    predicate: list[PredicateTerm] = Field(default_factory=list, max_length=MAX_TERMS)
    window: list[str] = Field(default_factory=list, max_length=2)
    direction: Direction = "none"
    magnitude: float | None = None
    evidence: list[str | EvidenceQuery] = Field(default_factory=list, max_length=MAX_EVIDENCE)
    prose: str = Field(default="", max_length=20_000)
    # The gold answer's hidden manifest; never part of a submission (ignored, not in the schema).
    manifest: SkipJsonSchema[dict[str, Any] | None] = None

    def queries(self) -> list[EvidenceQuery]:
        return [EvidenceQuery(sql=e) if isinstance(e, str) else e for e in self.evidence]

    def scored(self) -> dict[str, Any]:
        """The fields the verifier compares with the gold: the cause, slice, window, direction
        and size. Evidence is re-run, not compared, and the prose is not scored."""
        return self.model_dump(mode="json", include=SCORED_FIELDS)

    def submission(self) -> dict[str, Any]:
        """The answer as an agent submits it (no manifest)."""
        return self.model_dump(mode="json", exclude={"manifest"})


def parse_conclusion(value: Any) -> ConclusionAnswer:
    """Validate a submitted conclusion; ValueError with the first problem on bad input."""
    try:
        return ConclusionAnswer.model_validate(value)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in first["loc"]) or "answer"
        raise ValueError(f"not a valid conclusion ({where}: {first['msg']})") from None
