"""The probes can fail: each deliberately weak verifier is caught by at least one probe, and the
same probes pass against the correct twin (same tasks and tools, a robust comparison)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import guards_fixtures as F
import guards_sqlfixture as S
import pytest

import workgym as wg
from workgym.guards.attack import attack_async
from workgym.guards.attack_report import AttackReport
from workgym.guards.catalog import by_name

Make = Callable[[Path], wg.Environment]


def attack(env: wg.Environment, names: list[str], per_family: int = 2) -> AttackReport:
    return asyncio.run(attack_async(env, per_family=per_family, probes=by_name(names)))


def failed(report: AttackReport) -> set[str]:
    return {c.probe for c in report.failures()}


CASES: list[tuple[str, Make, Make, list[str]]] = [
    ("substring match", lambda p: F.QuizSubstring(), lambda p: F.Quiz(), ["two-answers"]),
    (
        'judge accepting "Solution"',
        lambda p: F.QuizJudgeMasterKey(),
        lambda p: F.Quiz(),
        ["master-key-solution", "master-key-colon"],
    ),
    (
        "judge obeying injection",
        lambda p: F.QuizJudgeInjection(),
        lambda p: F.Quiz(),
        ["judge-injection"],
    ),
    (
        "unicode normalising compare",
        lambda p: F.QuizNormalising(),
        lambda p: F.Quiz(),
        ["zero-width"],
    ),
    ("lenient JSON repair", lambda p: F.JsonQuizLenient(), lambda p: F.JsonQuiz(), ["broken-json"]),
    (
        "absolute 1e-2 tolerance",
        lambda p: F.RatiosAbsTolerance(),
        lambda p: F.Ratios(),
        ["number-off-0.5pct"],
    ),
    (
        "set instead of bag",
        lambda p: S.OrdersSet(p),
        lambda p: S.Orders(p),
        ["sql-distinct", "sql-duplicate-row"],
    ),
    (
        "per-column sorting",
        lambda p: S.OrdersPerColumn(p),
        lambda p: S.Orders(p),
        ["sql-misaligned-rows"],
    ),
    (
        "no fuzzed test databases",
        lambda p: S.OrdersSqlNoSuite(p),
        lambda p: S.OrdersSql(p),
        ["sql-gold-literals", "sql-neighbour"],
    ),
]


@pytest.mark.parametrize(("label", "weak", "correct", "catchers"), CASES, ids=[c[0] for c in CASES])
def test_weak_verifier_is_caught_and_the_correct_one_is_not(
    label: str, weak: Make, correct: Make, catchers: list[str], tmp_path: Path
) -> None:
    caught = attack(weak(tmp_path), catchers)
    assert set(catchers) <= failed(caught), (label, [(c.probe, c.got) for c in caught.cells])
    # The catching cells say the weak verifier passed an answer it must fail.
    assert all(c.got.startswith(("pass", "changed")) for c in caught.failures())
    clean = attack(correct(tmp_path), catchers)
    assert clean.passed and {c.probe for c in clean.cells} == set(catchers), label


def test_sql_probes_see_through_the_channel(tmp_path: Path) -> None:
    """Misaligned rows are caught whether they arrive as rows or as SQL over the gold query."""
    rows = attack(S.OrdersPerColumn(tmp_path), ["sql-misaligned-rows"], per_family=1)
    sql = attack(S.OrdersSql(tmp_path), ["sql-misaligned-rows"], per_family=1)
    assert rows.failures() and sql.passed and len(sql.cells) == len(rows.cells) == 5


@pytest.mark.parametrize(
    "make",
    [lambda p: F.Quiz(), lambda p: F.JsonQuiz(), lambda p: F.Ratios(), S.Orders, S.OrdersSql],
    ids=["quiz", "json-quiz", "ratios", "orders-rows", "orders-sql"],
)
def test_correct_fixtures_pass_the_whole_catalog(make: Make, tmp_path: Path) -> None:
    """No false alarms: every applicable probe, FN ones included, passes on a robust verifier."""
    env = make(tmp_path)
    report = asyncio.run(attack_async(env, per_family=1))
    assert report.passed, [(c.probe, c.family, c.got) for c in report.failures()]
    ran = {c.probe for c in report.cells}
    if isinstance(env, S.OrdersSql):
        assert {"sql-write", "sql-escape", "sql-gold-literals", "sql-cartesian"} <= ran
        assert {"sql-shuffled-rows", "sql-columns-reordered", "sql-off-1e-12"} <= ran
    if isinstance(env, F.Ratios):
        assert "number-off-1e-12" in ran


def test_an_environment_declaring_sql_answer_without_a_surface_fails_loudly() -> None:
    class Bare(F.Quiz):
        id = "test/bare-sql"
        guard_tags = frozenset({"sql_answer"})

    report = attack(Bare(), ["sql-distinct"], per_family=1)
    assert not report.passed and all(c.got == "not attackable" for c in report.cells)
    assert "gold_result" in report.cells[0].detail
