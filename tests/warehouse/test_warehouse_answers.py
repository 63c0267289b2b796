"""Typed answers: each kind is compared exactly per its declared semantics."""

from __future__ import annotations

import json
from typing import Any

import pytest

from workgym.core.verdict import Status
from workgym.envs.warehouse.runtime.answers import (
    AnswerSpec,
    numbers_equal,
    round_half_up,
    verify_typed,
)
from workgym.envs.warehouse.runtime.tools import submit_answer


def score(spec: AnswerSpec, gold: Any, got: Any) -> tuple[bool, str]:
    v = verify_typed(spec, gold, got)
    return v.success, str(v.status)


def test_integer_is_exact() -> None:
    spec, gold = AnswerSpec(kind="integer"), {"kind": "integer", "value": 890}
    assert score(spec, gold, {"kind": "integer", "value": 890}) == (True, "ok")
    assert score(spec, gold, {"kind": "integer", "value": 891}) == (False, "ok")
    assert score(spec, gold, {"kind": "integer", "value": "890"}) == (False, "parse_error")
    assert score(spec, gold, {"kind": "integer", "value": True}) == (False, "parse_error")
    assert score(spec, gold, None) == (False, "no_answer")


def test_number_rounds_both_sides_half_away_from_zero() -> None:
    spec, gold = AnswerSpec(kind="number", decimals=2), {"kind": "number", "value": 2.68}
    assert score(spec, gold, {"kind": "number", "value": 2.675})[0]  # 2.675 -> 2.68 (half up)
    assert score(spec, gold, {"kind": "number", "value": 2.6849})[0]
    assert not score(spec, gold, {"kind": "number", "value": 2.685})[0]  # -> 2.69
    assert not score(spec, gold, {"kind": "number", "value": 2.67})[0]
    assert score(spec, gold, {"kind": "number", "value": 3})[0] is False
    assert round_half_up(-1.005, 2) is not None and str(round_half_up(-1.005, 2)) == "-1.01"
    # no stated rounding: relative tolerance only, never an absolute 1e-2
    assert numbers_equal(100.0, 100.0 * (1 + 1e-9), None)
    assert not numbers_equal(0.001, 0.009, None)


def test_keys_are_a_set_of_exact_text() -> None:
    spec = AnswerSpec(kind="keys", may_be_empty=True)
    gold = {"kind": "keys", "values": ["AS", "F9", "YV"]}
    assert score(spec, gold, {"kind": "keys", "values": ["YV", "AS", "F9"]})[0]
    assert not score(spec, gold, {"kind": "keys", "values": ["AS", "F9"]})[0]
    assert not score(spec, gold, {"kind": "keys", "values": ["AS", "F9", "YV", "UA"]})[0]
    assert not score(spec, gold, {"kind": "keys", "values": ["AS", "AS", "F9", "YV"]})[0]
    assert not score(spec, gold, {"kind": "keys", "values": ["as", "f9", "yv"]})[0]
    assert not score(spec, gold, {"kind": "keys", "values": ["АS", "F9", "YV"]})[0]  # Cyrillic А
    empty = {"kind": "keys", "values": []}
    assert score(spec, empty, {"kind": "keys", "values": []})[0]
    assert not score(spec, empty, {"kind": "keys", "values": ["UA"]})[0]


def test_top_k_order_matters() -> None:
    spec, gold = AnswerSpec(kind="top_k", k=3), {"kind": "top_k", "values": ["UA", "B6", "EV"]}
    assert score(spec, gold, {"kind": "top_k", "values": ["UA", "B6", "EV"]})[0]
    assert not score(spec, gold, {"kind": "top_k", "values": ["B6", "UA", "EV"]})[0]
    assert not score(spec, gold, {"kind": "top_k", "values": ["UA", "B6"]})[0]
    assert not score(spec, gold, {"kind": "top_k", "values": ["UA", "B6", "EV", "DL"]})[0]


def test_column_has_one_declared_normaliser() -> None:
    spec = AnswerSpec(kind="column", columns=["planes.year"])
    gold = {"kind": "column", "value": "planes.year"}
    for ok in ("planes.year", ' "PLANES"."year" ', "Planes.Year"):
        assert score(spec, gold, {"kind": "column", "value": ok})[0], ok
    for bad in ("flights.year", "year", "planes.years", "planes_year"):
        assert not score(spec, gold, {"kind": "column", "value": bad})[0], bad


def test_abstain_needs_the_right_reason_and_never_passes_an_answerable_task() -> None:
    spec, gold = AnswerSpec(kind="abstain"), {"kind": "abstain", "reason": "missing_data"}
    assert score(spec, gold, {"kind": "abstain", "reason": "missing_data", "detail": "no fares"})[0]
    assert not score(spec, gold, {"kind": "abstain", "reason": "out_of_range"})[0]
    assert not score(spec, gold, {"kind": "number", "value": 0.0})[0]
    answerable = AnswerSpec(kind="integer")
    got = {"kind": "abstain", "reason": "missing_data"}
    assert score(answerable, {"kind": "integer", "value": 3}, got) == (False, "ok")


def test_malformed_answers_are_parse_errors() -> None:
    spec, gold = AnswerSpec(kind="integer"), {"kind": "integer", "value": 1}
    for bad in ("1", 1, [1], {"kind": "integer"}, {"kind": "nope", "value": 1}):
        assert score(spec, gold, bad) == (False, str(Status.parse_error)), bad


def test_submit_answer_tool_validates_strictly() -> None:
    model = submit_answer.args_model

    def parses(answer: Any) -> bool:
        try:
            model.model_validate_json(json.dumps({"answer": answer}))
        except ValueError:
            return False
        return True

    assert parses({"kind": "integer", "value": 5})
    assert parses({"kind": "number", "value": 5})  # an int is a valid number
    assert not parses({"kind": "integer", "value": "5"})
    assert not parses({"kind": "integer", "value": True})
    assert not parses({"kind": "integer", "value": 5, "extra": 1})
    assert not parses({"kind": "keys", "values": "UA, B6"})
    assert not parses({"kind": "abstain", "reason": "too hard"})
    assert "oneOf" in json.dumps(submit_answer.spec.parameters)
    with pytest.raises(ValueError):
        model.model_validate_json('{"answer": {"kind": "integer", "value": 1.5}}')
