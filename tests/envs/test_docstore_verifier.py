"""Conclusions from documents (verifiers.conclusion_docs): closed vocabulary with aliases, exactly
as many causes as planted, matched component/window/direction, observed and relevant evidence."""

from __future__ import annotations

from typing import Any

import pytest

import workgym as wg
from workgym.envs.docstore.causes import VOCABULARY
from workgym.verifiers.conclusion_docs import CauseVocabulary, parse_time, verify_conclusion

PLANTED = {
    "cause_type": "deploy_regression",
    "component": "auth-service",
    "window_start": "2024-05-14T14:02:00Z",
    "window_end": "2024-05-14T14:50:00Z",
    "direction": "up",
    "evidence": ["CHG-1111", "LOG-2222"],
}
OBSERVED = {"CHG-1111", "LOG-2222", "INC-3333", "RB-4444"}


def judge(
    submitted: Any, planted: list[dict[str, Any]] | None = None, observed: set[str] = OBSERVED
) -> wg.Verdict:
    return verify_conclusion(planted or [PLANTED], submitted, VOCABULARY, observed)


def but(**changes: Any) -> dict[str, Any]:
    return PLANTED | changes


def test_the_planted_cause_passes() -> None:
    verdict = judge([PLANTED])
    assert verdict.success and verdict.reward == 1.0 and verdict.flags == []
    assert judge([but(evidence=["LOG-2222", "INC-3333"])]).success  # one supporting doc suffices
    assert judge(
        [but(window_start="2024-05-14 14:10", window_end="2024-05-14T15:30:00+00:00")]
    ).success


def test_declared_aliases_pass_and_other_spellings_do_not() -> None:
    assert judge([but(cause_type="bad deploy")]).success  # FN guard: an alias is the same type
    assert judge([but(cause_type="Deploy-Regression")]).success  # case and separators unify
    assert judge([but(component="Auth Service")]).success
    for wrong in ("deploy.regression", "deploy", "regression in deploy", "deploy_regressions"):
        assert not judge([but(cause_type=wrong)]).success, wrong


def test_wrong_type_component_direction_or_window_fail() -> None:
    assert not judge([but(cause_type="config_change")]).success
    assert not judge([but(component="checkout-api")]).success  # the downstream symptom
    assert not judge([but(component=None)]).success
    assert not judge([but(direction="down")]).success
    assert not judge(
        [but(window_start="2024-05-14T16:00:00Z", window_end="2024-05-14T17:00:00Z")]
    ).success
    assert not judge(
        [but(window_start="2024-05-14T00:00:00Z", window_end="2024-05-14T23:59:00Z")]
    ).success
    assert not judge([but(window_start="May 14", window_end="later")]).success


def test_enumerating_or_hedging_fails() -> None:
    other = but(cause_type="config_change")
    enumerated = judge([PLANTED, other])
    assert not enumerated.success and "2 cause(s) submitted, 1 planted" in str(enumerated.evidence)
    assert not judge([but(cause_type="deploy_regression or config_change")]).success
    assert not judge([]).success


def test_evidence_must_be_observed_and_relevant() -> None:
    unseen = judge([but(evidence=["CHG-1111", "LOG-9999"])])
    assert not unseen.success and "evidence_unobserved" in unseen.flags
    assert not judge([PLANTED], observed=set()).success
    irrelevant = judge([but(evidence=["RB-4444"])])  # a runbook names causes; it shows none
    assert not irrelevant.success and "no cited document shows" in str(irrelevant.evidence)
    assert not judge([but(evidence=[])]).success


def test_normal_variation_needs_no_component_but_evidence() -> None:
    normal = {
        "cause_type": "normal_variation",
        "component": None,
        "window_start": None,
        "window_end": None,
        "direction": None,
        "evidence": ["INC-3333"],
    }
    assert judge([normal], planted=[normal]).success
    assert judge([normal | {"cause_type": "noise", "component": "x"}], planted=[normal]).success
    assert not judge([PLANTED], planted=[normal]).success


def test_two_planted_causes_match_in_any_order() -> None:
    second = {
        "cause_type": "dependency_outage",
        "component": "stripe",
        "window_start": "2024-05-14T17:00:00Z",
        "window_end": "2024-05-14T17:40:00Z",
        "direction": "down",
        "evidence": ["INC-3333"],
    }
    assert judge([second, PLANTED], planted=[PLANTED, second]).success
    assert not judge([PLANTED], planted=[PLANTED, second]).success  # one missing
    swapped = [second | {"component": "auth-service"}, PLANTED | {"component": "stripe"}]
    assert not judge(swapped, planted=[PLANTED, second]).success


def test_unparseable_conclusions_are_parse_errors() -> None:
    assert judge("deploy_regression").status == wg.Status.parse_error
    assert judge([{"cause": "x"}]).status == wg.Status.parse_error
    assert judge([PLANTED | {"extra": 1}]).status == wg.Status.parse_error
    assert judge([PLANTED | {"evidence": "CHG-1111"}]).status == wg.Status.parse_error


def test_vocabulary_aliases_cannot_name_two_causes() -> None:
    with pytest.raises(ValueError, match="names both"):
        CauseVocabulary(causes={"a": ["x"], "b": ["X"]})
    assert parse_time("2024-05-14T14:02:00") == parse_time("2024-05-14T14:02:00Z")
    assert parse_time("14:02") is None
