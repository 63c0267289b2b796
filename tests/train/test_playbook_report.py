from __future__ import annotations

import math
from pathlib import Path

import pytest

from workgym.stats.proportions import non_inferior, tie_bound
from workgym.train.playbook.report import (
    amortised_ratio,
    break_even,
    plot_learning_curve,
    token_efficiency,
)


def test_break_even_and_amortised_cost() -> None:
    assert break_even(80, 100, 10_000) == 500  # 20 tokens saved a task pay back 10k in 500 tasks
    assert break_even(80, 100, 10_001) == 501
    assert break_even(100, 100, 5) is None and break_even(120, 100, 5) is None
    assert amortised_ratio(80, 100, 10_000, 500) == pytest.approx(1.0)
    assert amortised_ratio(80, 100, 10_000, 1000) == pytest.approx(0.9)
    assert amortised_ratio(80, 0, 1, 10) == math.inf


def test_matched_statement_is_a_non_inferiority_test() -> None:
    # 64 tasks, the candidate within a hair of the baseline on each: the score bound shows it
    cand = [0.9, 0.8, 1.0, 0.7, 0.95, 0.85, 0.9, 0.8] * 8
    base = [0.88, 0.79, 0.97, 0.71, 0.93, 0.84, 0.9, 0.78] * 8
    eff = token_efficiency(
        candidate="trained",
        baseline="untrained",
        candidate_scores=cand,
        baseline_scores=base,
        candidate_tpt=60,
        baseline_tpt=100,
        training_tokens=8_000,
        margin=0.05,
    )
    ni = non_inferior(cand, base, 0.05)
    assert eff.non_inferior == ni.passed and eff.lower == ni.lower and eff.diff == ni.diff
    assert ni.passed and ni.method == "bounded_score"
    assert eff.ratio == pytest.approx(0.6) and eff.break_even_tasks == 200
    assert eff.statement.startswith("trained matches untrained at 60% of its tokens per task")
    assert "breaks even after 200 tasks" in eff.statement and "at 1,000 tasks: 68%" in eff.statement


def test_identical_arms_on_few_tasks_do_not_match() -> None:
    """Issue 33: an empty playbook tying the baseline on 8 tasks showed "matches ... lower bound
    +0.000"; with 8 tied pairs the bound is -z^2/(8 + z^2) = -0.25, so nothing is matched."""
    same = [1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 0.0, 1.0]
    eff = token_efficiency(
        candidate="empty playbook",
        baseline="untrained",
        candidate_scores=same,
        baseline_scores=same,
        candidate_tpt=100,
        baseline_tpt=100,
        training_tokens=0,
        margin=0.05,
    )
    assert not eff.non_inferior and eff.lower == pytest.approx(tie_bound(8, 0.05, binary=True))
    assert "does NOT match" in eff.statement


def test_no_match_is_said_plainly() -> None:
    eff = token_efficiency(
        candidate="trained",
        baseline="untrained",
        candidate_scores=[0, 1, 0, 0, 1, 0],
        baseline_scores=[1, 1, 1, 0, 1, 1],
        candidate_tpt=50,
        baseline_tpt=100,
        training_tokens=1,
        margin=0.05,
        where="held-out",
    )
    assert not eff.non_inferior and "does NOT match untrained" in eff.statement
    assert "held-out" in eff.statement


def test_tasks_are_the_unit_whatever_the_families() -> None:
    kw = dict(
        candidate="c",
        baseline="b",
        candidate_tpt=1.0,
        baseline_tpt=1.0,
        training_tokens=0,
        margin=0.1,
    )
    scores = ([1, 0, 1, 1, 0, 1], [1, 0, 0, 1, 0, 1])
    clustered = token_efficiency(
        candidate_scores=scores[0],
        baseline_scores=scores[1],
        clusters=["a", "a", "b", "b", "c", "c"],
        **kw,
    )  # type: ignore[arg-type]
    one = token_efficiency(
        candidate_scores=scores[0], baseline_scores=scores[1], clusters=["a"] * 6, **kw
    )  # type: ignore[arg-type]
    # the clustered t with few families was degenerate (decision 0070): both use Tango's bound
    assert clustered.method == one.method == "exact_unconditional" and clustered.lower == one.lower


def test_learning_curve_plot_is_written(tmp_path: Path) -> None:
    cps = [
        {"iteration": 0, "reward": 0.1, "se": 0.05, "tokens_per_task": 100},
        {"iteration": 2, "reward": 0.7, "se": 0.08, "tokens_per_task": 130},
    ]
    bases = [{"name": "untrained", "reward": 0.1, "tokens_per_task": 100}]
    path = plot_learning_curve(cps, bases, tmp_path / "curve.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 5_000
