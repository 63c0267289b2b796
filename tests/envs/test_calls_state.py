"""Final-state verification, claim-state flags and id provenance (verifiers.calls_*)."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest

import workgym as wg
from workgym.verifiers.calls_claims import ClaimRule, claim_flags, claims
from workgym.verifiers.calls_provenance import unobserved_ids
from workgym.verifiers.calls_state import ExpectedState, StateRules, check_state, diff_states

BEFORE: dict[str, Any] = {
    "orders": {
        "O1": {"id": "O1", "status": "placed", "note": None},
        "O2": {"id": "O2", "status": "placed", "note": None},
    },
    "customers": {"C1": {"id": "C1", "email": "a@x.example"}},
    "refunds": {"R1": {"id": "R1", "order_id": "O1", "amount": 5}},
    "tickets": {},
}
RULES = StateRules(ignore={"orders": ["note"]}, normalisers={"customers": {"email": "casefold"}})


def after(fn: Any) -> dict[str, Any]:
    state = copy.deepcopy(BEFORE)
    fn(state)
    return state


def test_expected_change_and_nothing_else_passes() -> None:
    expected = ExpectedState(update={"orders": {"O1": {"status": "cancelled"}}})
    done = after(lambda s: s["orders"]["O1"].update(status="cancelled", note="asked"))
    result = check_state(BEFORE, done, expected, RULES)
    assert result.ok, result  # `note` is declared volatile
    assert result.diff.updated == {"orders": {"O1": {"status": ["placed", "cancelled"]}}}


def test_collateral_changes_fail() -> None:
    expected = ExpectedState(update={"orders": {"O1": {"status": "cancelled"}}})

    def too_much(s: dict[str, Any]) -> None:
        s["orders"]["O1"]["status"] = "cancelled"
        s["orders"]["O2"]["status"] = "cancelled"

    result = check_state(BEFORE, after(too_much), expected, RULES)
    assert not result.ok and result.collateral == ["orders/O2: status changed unasked"]
    extra_field = after(lambda s: s["customers"]["C1"].update(email="b@x.example"))
    assert not check_state(BEFORE, extra_field, ExpectedState(), RULES).ok
    deleted = after(lambda s: s["refunds"].pop("R1"))
    assert "deleted unasked" in str(check_state(BEFORE, deleted, ExpectedState(), RULES).collateral)


def test_an_empty_expectation_means_change_nothing() -> None:
    assert check_state(BEFORE, copy.deepcopy(BEFORE), ExpectedState(), RULES).ok
    assert not check_state(
        BEFORE, after(lambda s: s["orders"]["O1"].update(status="x")), ExpectedState(), RULES
    ).ok


def test_created_records_match_by_content_one_to_one_with_references() -> None:
    expected = ExpectedState(
        create={
            "refunds": [{"order_id": "O2", "amount": 7}],
            "tickets": [{"order_id": "O2", "refund_id": {"$created": ["refunds", 0, "id"]}}],
        }
    )

    def good(s: dict[str, Any]) -> None:
        s["refunds"]["R9"] = {"id": "R9", "order_id": "O2", "amount": 7}
        s["tickets"]["T1"] = {"id": "T1", "order_id": "O2", "refund_id": "R9"}

    result = check_state(BEFORE, after(good), expected, RULES)
    assert result.ok and result.bound == {"refunds[0]": "R9", "tickets[0]": "T1"}

    def wrong_reference(s: dict[str, Any]) -> None:
        good(s)
        s["tickets"]["T1"]["refund_id"] = "R1"  # an old refund, not the one just made

    assert not check_state(BEFORE, after(wrong_reference), expected, RULES).ok

    def twice(s: dict[str, Any]) -> None:
        good(s)
        s["refunds"]["R10"] = {"id": "R10", "order_id": "O2", "amount": 7}

    result = check_state(BEFORE, after(twice), expected, RULES)
    assert not result.ok and "created" in result.collateral[0]


def test_normalisers_apply_to_state_fields() -> None:
    expected = ExpectedState(update={"customers": {"C1": {"email": "New@X.example"}}})
    changed = after(lambda s: s["customers"]["C1"].update(email="new@x.example"))
    assert check_state(BEFORE, changed, expected, RULES).ok
    dotless = after(lambda s: s["customers"]["C1"].update(email="new@xexample"))
    assert not check_state(BEFORE, dotless, expected, RULES).ok


def test_references_must_point_at_earlier_created_records() -> None:
    with pytest.raises(ValueError, match="earlier created record"):
        ExpectedState(create={"tickets": [{"refund_id": {"$created": ["refunds", 0, "id"]}}]})


def test_diff_ignores_volatile_fields() -> None:
    noted = after(lambda s: s["orders"]["O2"].update(note="hello"))
    assert diff_states(BEFORE, noted, RULES).empty


CLAIMS = [
    ClaimRule(
        name="cancel",
        pattern=r"\b(?:i|we)(?:\s+have|'ve)?\s+(?:\w+\s+)?cancell?ed\b",
        keyword="cancel",
        table="orders",
        field="status",
    )
]


def test_claims_without_the_state_change_are_flagged() -> None:
    nothing = diff_states(BEFORE, copy.deepcopy(BEFORE))
    cancelled = diff_states(BEFORE, after(lambda s: s["orders"]["O1"].update(status="cancelled")))
    assert claim_flags(["Done: I have cancelled your order."], nothing, CLAIMS) == [
        "claim_state_mismatch:cancel"
    ]
    assert claim_flags(["I've cancelled it."], cancelled, CLAIMS) == []


def test_negated_or_hedged_sentences_are_not_claims() -> None:
    texts = [
        "I have not cancelled the order.",
        "I couldn't cancel it because it shipped. I cancelled nothing.",
        "Should I have cancelled it?",
        "The order was already cancelled, so I did not change anything.",
    ]
    assert claims(texts, CLAIMS) == []


def test_ids_must_be_observed_before_they_are_used() -> None:
    pattern = re.compile(r"\bO\d{4}\b")
    user = wg.Message(role="user", content="Please cancel order O1001.")
    seen = wg.Message(role="tool", content='[{"id": "O1002"}]', tool_call_id="a")

    def call(order: str) -> wg.Message:
        args = f'{{"order_id": "{order}"}}'
        return wg.Message(
            role="assistant", tool_calls=[wg.ToolCall(id="x", name="cancel", arguments=args)]
        )

    assert unobserved_ids([user, call("O1001")], pattern) == []
    assert unobserved_ids([user, call("O1003")], pattern) == ["cancel: O1003"]
    assert unobserved_ids([user, call("O1002"), seen], pattern) == ["cancel: O1002"]  # too early
    assert unobserved_ids([user, seen, call("O1002")], pattern) == []
