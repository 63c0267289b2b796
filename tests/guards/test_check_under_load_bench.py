"""bench/check_under_load.py's selection and comparison, without running a check (the bench
itself, every built-in quiet and under a CPU hog, is run by hand; the CI test for docstore is
test_check_under_load.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fakes.toy_rules_agent import load_bench

bench = load_bench("check_under_load.py")


def _report(passed: bool, cells: list[tuple[str, str, bool]]) -> dict[str, Any]:
    return {
        "passed": passed,
        "items": [{"name": "oracle solves every task", "passed": True}],
        "attack": {"cells": [{"probe": p, "family": f, "passed": ok} for p, f, ok in cells]},
    }


def test_the_builtins_are_workgyms_own_environment_entry_points_suites_included() -> None:
    builtin = bench.builtin_envs()
    assert "workgym/toy-shop" in builtin and "workgym/docstore" in builtin
    assert "suites/ifeval" in builtin
    assert "workgym/warehouse" not in builtin  # a saved-only class: no id of its own


def test_envs_selects_and_an_unknown_id_is_a_one_line_error(tmp_path: Path) -> None:
    builtin = ["workgym/docstore", "workgym/toy-shop"]
    assert bench.select(None, builtin, []) == builtin
    assert bench.select(" workgym/toy-shop ,", builtin, []) == ["workgym/toy-shop"]
    assert bench.select("", builtin, [str(tmp_path)]) == [str(tmp_path.resolve())]
    with pytest.raises(SystemExit, match="not a built-in environment: workgym/toyshop"):
        bench.select("workgym/toyshop", builtin, [])
    with pytest.raises(SystemExit, match="no such directory"):
        bench.select("", builtin, [str(tmp_path / "absent")])
    with pytest.raises(SystemExit, match="nothing to check"):
        bench.select("", builtin, [])


def test_options_default_to_one_hog_per_core_and_reject_none() -> None:
    args = bench.parse_args(["--envs", "workgym/toy-shop"])
    assert args.hog_procs >= 1 and args.out is None and args.warehouse == []
    with pytest.raises(SystemExit):
        bench.parse_args(["--hog-procs", "0"])


def test_the_comparison_names_each_cell_whose_verdict_differs_or_is_missing() -> None:
    quiet = _report(True, [("sleep-forever", "a", True), ("empty-answer", "a", True)])
    loaded = _report(False, [("sleep-forever", "a", False), ("empty-answer", "b", True)])
    result = bench.compare(quiet, loaded)
    assert result.compared == 5  # the check, one item, three distinct cells
    assert result.differ == [
        "cell empty-answer x a",
        "cell empty-answer x b",
        "cell sleep-forever x a",
        "check",
    ]
    assert bench.compare(quiet, quiet).differ == []
