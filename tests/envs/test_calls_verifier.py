"""The tool-call verifier's declared semantics (VERIFIERS.md, tool calls), one rule per test."""

from __future__ import annotations

import json
from typing import Any

import pytest

import workgym as wg
from workgym.verifiers.calls import (
    CallCriteria,
    CallRules,
    CriteriaError,
    criteria_of,
    verify_calls,
)
from workgym.verifiers.calls_normalise import matches, parse_date
from workgym.verifiers.calls_schema import validate


@wg.tool
def book_flight(origin: str, destination: str, date: str, seats: int = 1) -> str:
    """Book a flight.

    Args:
        origin: Airport code.
        destination: Airport code.
        date: Travel date.
        seats: Number of seats.
    """
    return "ok"


@wg.tool
def set_price(sku: str, price: float) -> str:
    """Set a price.

    Args:
        sku: The product.
        price: The new price.
    """
    return "ok"


@wg.tool
def lookup(query: str) -> str:
    """Look something up (read-only).

    Args:
        query: What to look up.
    """
    return "ok"


RULES = CallRules.from_tools(
    [book_flight, set_price, lookup],
    normalisers={
        "book_flight": {"date": "date", "origin": "upper"},
        "set_price": {"price": "number"},
    },
    free=frozenset({"lookup"}),
)
FLIGHT = {
    "name": "book_flight",
    "arguments": {"origin": "LHR", "destination": "JFK", "date": "2024-03-03"},
}


def c(name: str, args: Any, i: int = 0) -> wg.ToolCall:
    text = args if isinstance(args, str) else json.dumps(args)
    return wg.ToolCall(id=f"c{i}", name=name, arguments=text)


def judge(criteria: dict[str, Any], *calls: wg.ToolCall) -> wg.Verdict:
    return verify_calls(criteria_of(criteria), RULES, list(calls))


def flight(**changes: Any) -> wg.ToolCall:
    return c("book_flight", FLIGHT["arguments"] | changes)


def test_a_task_with_no_criteria_is_a_build_time_error() -> None:
    with pytest.raises(CriteriaError, match="no criteria"):
        criteria_of({})
    with pytest.raises(CriteriaError, match="no call"):
        criteria_of({"calls": [FLIGHT], "no_call": True})
    with pytest.raises(CriteriaError, match="must be an object"):
        criteria_of(None)


def test_the_exact_call_passes_and_near_misses_fail() -> None:
    crit = {"calls": [FLIGHT]}
    assert judge(crit, flight()).success
    assert not judge(crit, c("book_flights", FLIGHT["arguments"])).success  # near-duplicate name
    assert not judge(crit, flight(seats="1")).success  # "1" is not 1
    assert not judge(crit, flight(seats=True)).success  # True is not 1
    assert not judge(crit, flight(seats=1.0)).success  # 1.0 is not an integer argument
    assert not judge(crit, flight(class_="economy")).success  # hallucinated extra argument
    missing = dict(FLIGHT["arguments"])
    del missing["destination"]
    assert not judge(crit, c("book_flight", missing)).success


def test_optional_arguments_must_be_absent_or_default() -> None:
    crit = {"calls": [FLIGHT]}
    assert judge(crit, flight(seats=1)).success  # the declared default is the same call
    verdict = judge(crit, flight(seats=2))
    assert not verdict.success and "asks for none" in str(verdict.evidence)


def test_each_parameter_uses_its_declared_normaliser() -> None:
    crit = {"calls": [FLIGHT]}
    assert judge(crit, flight(date="3 March 2024")).success  # parsed, not string-compared
    assert judge(crit, flight(date="March 3, 2024")).success
    assert judge(crit, flight(origin=" lhr ")).success  # declared `upper`
    assert not judge(crit, flight(date="20240303")).success  # punctuation is not stripped
    assert not judge(crit, flight(date="03/03/2024")).success  # ambiguous day/month: refused
    assert not judge(crit, flight(destination="jfk")).success  # undeclared: exact
    price = {"calls": [{"name": "set_price", "arguments": {"sku": "A-1", "price": 1.5}}]}
    assert judge(price, c("set_price", {"sku": "A-1", "price": 1.5 + 1e-12})).success
    assert not judge(price, c("set_price", {"sku": "A-1", "price": 15})).success
    assert not judge(price, c("set_price", {"sku": "A1", "price": 1.5})).success


def test_normalisers_never_fold_invisible_or_look_alike_characters() -> None:
    assert matches("casefold", "Grace.Novak@Mail.example", "grace.novak@mail.example")
    assert not matches("casefold", "grace", "gr\u200bace")  # zero-width space
    assert not matches("casefold", "grace", "grаce")  # Cyrillic a
    assert not matches("exact", 1, True) and not matches("exact", "5", 5)
    assert parse_date("3rd March 2024") == parse_date("2024-03-03")
    with pytest.raises(ValueError, match="unknown normaliser"):
        matches("fuzzy", "a", "a")  # type: ignore[arg-type]


def test_calls_match_one_to_one_in_order_when_ordered() -> None:
    two = [FLIGHT, {"name": "set_price", "arguments": {"sku": "A-1", "price": 2.0}}]
    price = c("set_price", {"sku": "A-1", "price": 2.0}, 1)
    assert judge({"calls": two}, price, flight()).success  # unordered: any order
    assert not judge({"calls": two, "ordered": True}, price, flight()).success
    assert judge({"calls": two, "ordered": True}, flight(), price).success
    assert not judge({"calls": two}, flight(), flight(), price).success  # a duplicate call
    assert not judge({"calls": two}).success  # abstaining


def test_calling_every_plausible_tool_fails_but_free_lookups_do_not_count() -> None:
    shotgun = [flight(), c("set_price", {"sku": "x", "price": 1.0}, 1)]
    assert not judge({"calls": [FLIGHT]}, *shotgun).success
    assert judge({"calls": [FLIGHT]}, c("lookup", {"query": "LHR"}), flight()).success


def test_irrelevance_items_pass_only_without_judged_calls() -> None:
    crit = {"no_call": True}
    assert judge(crit).success
    assert judge(crit, c("lookup", {"query": "weather"})).success
    assert not judge(crit, flight()).success
    broken = judge(crit, c("book_flight", "{not json"))
    assert broken.status == wg.Status.parse_error and not broken.success  # never "no call"


def test_unparseable_output_is_a_parse_error_not_a_pass() -> None:
    verdict = judge({"calls": [FLIGHT]}, c("book_flight", '{"origin": "LHR",'))
    assert verdict.status == wg.Status.parse_error and verdict.reward == 0.0
    assert judge({"calls": [FLIGHT]}, c("book_flight", "[1, 2]")).status == wg.Status.parse_error


def test_allowed_tools_may_be_retried_but_others_fail() -> None:
    crit = {"state": {}, "allowed": ["book_flight"]}
    same = {"flights": {}}
    ok = verify_calls(criteria_of(crit), RULES, [flight(), flight()], before=same, after=same)
    assert ok.success
    other = verify_calls(
        criteria_of(crit),
        RULES,
        [c("set_price", {"sku": "x", "price": 1})],
        before=same,
        after=same,
    )
    assert not other.success and "set_price" in str(other.evidence)


def test_normaliser_declarations_are_checked() -> None:
    with pytest.raises(CriteriaError, match="unknown parameter"):
        CallRules.from_tools([book_flight], normalisers={"book_flight": {"when": "date"}})
    with pytest.raises(CriteriaError, match="unknown tool"):
        CallRules.from_tools([book_flight], normalisers={"nope": {"x": "date"}})


def test_strict_schema_validation() -> None:
    schema = book_flight.spec.parameters
    assert validate({"origin": "a", "destination": "b", "date": "d"}, schema) == []
    problems = validate({"origin": 1, "destination": "b", "date": "d", "x": 1}, schema)
    assert any("must be string" in p for p in problems)
    assert any("not a declared argument" in p for p in problems)
    nested = {
        "type": "object",
        "properties": {"items": {"type": "array", "items": {"$ref": "#/$defs/Item"}}},
        "$defs": {
            "Item": {
                "type": "object",
                "properties": {
                    "n": {"type": "integer", "minimum": 1},
                    "note": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                },
                "required": ["n"],
                "additionalProperties": False,
            }
        },
    }
    assert validate({"items": [{"n": 2, "note": None}]}, nested) == []
    assert validate({"items": [{"n": 0}]}, nested) == ["arguments.items[0].n: below the minimum 1"]
    assert validate({"items": [{"n": True}]}, nested)  # bool is not an integer
    assert validate({"items": [{"n": 1, "extra": 1}]}, nested)
    assert validate(float("nan"), {"type": "number"})
    assert validate("2024-13-01", {"type": "string", "format": "date"})


def test_criteria_round_trip_through_json() -> None:
    crit = criteria_of({"calls": [FLIGHT], "ordered": True})
    again = CallCriteria.model_validate_json(crit.model_dump_json())
    assert again == crit
