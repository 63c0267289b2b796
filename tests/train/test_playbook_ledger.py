from __future__ import annotations

import pytest

from workgym.train.playbook.ledger import BudgetExceeded, Ledger


def test_tokens_by_role_and_iteration() -> None:
    led = Ledger()
    led.charge("agent-train", 1, 100, 20, calls=3)
    led.charge("reflector", 1, 50, 10, calls=1)
    led.charge("agent-dev", 2, 30, 5)
    led.charge("agent-test", 2, 1000, 100)
    assert led.by_role() == {
        "agent-train": 120,
        "agent-dev": 35,
        "agent-test": 1100,
        "reflector": 60,
        "curator": 0,
    }
    assert led.by_iteration()[1]["reflector"] == 60 and led.by_iteration()[2]["agent-dev"] == 35
    assert led.training_tokens == 215  # test tokens never count against training
    assert led.iteration_tokens(2) == 35 and led.total() == 1315


def test_a_key_is_charged_once() -> None:
    led = Ledger()
    assert led.charge("agent-dev", 0, 10, 1, key="run:abc")
    assert not led.charge("agent-dev", 3, 10, 1, key="run:abc")
    assert led.training_tokens == 11 and len(led.charges) == 1


def test_budget_enforcement() -> None:
    led = Ledger(budget=100)
    assert led.allows() and led.allows(100) and not led.allows(101)
    led.charge("agent-train", 1, 60, 0)
    assert led.remaining == 40 and led.allows(40) and not led.allows(41)
    with pytest.raises(BudgetExceeded, match="budget 100 would be exceeded by gate B"):
        led.ensure(50, "gate B")
    led.charge("agent-test", 1, 500, 0)
    assert led.allows(40)  # test tokens are not training tokens
    led.charge("curator", 1, 40, 0)
    assert led.remaining == 0 and not led.allows(0)
    assert Ledger().allows(10**12) and Ledger().remaining is None


def test_bad_charges_are_refused() -> None:
    led = Ledger()
    with pytest.raises(ValueError, match="unknown ledger role"):
        led.charge("agent", 0, 1, 1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="negative"):
        led.charge("agent-dev", 0, -1, 1)
