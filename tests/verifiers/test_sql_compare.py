"""Result-set comparison: each VERIFIERS.md rule, the FN cases that must pass, and the weak
verifiers from published scorers whose false passes must fail here."""

from __future__ import annotations

import datetime as dt
import time
from decimal import Decimal
from typing import Any

import pytest

from workgym.verifiers.sql import resolve_order_keys
from workgym.verifiers.sql_compare import SqlAnswerSpec, bags_equal, compare_results, norm_cell

UNORDERED = SqlAnswerSpec()
ORDERED = SqlAnswerSpec(ordered=True)


def same(
    gold: list[tuple[Any, ...]],
    cand: list[tuple[Any, ...]],
    spec: SqlAnswerSpec = UNORDERED,
    gold_cols: list[str] | None = None,
    cand_cols: list[str] | None = None,
    order_keys: list[int] | None = None,
) -> bool:
    gold_cols = gold_cols or [f"g{i}" for i in range(len(gold[0]) if gold else 1)]
    cand_cols = cand_cols or [f"c{i}" for i in range(len(cand[0]) if cand else len(gold_cols))]
    return compare_results(gold_cols, gold, cand_cols, cand, spec, order_keys).match


GOLD = [(1, "UA", 10.5), (2, "AA", None), (2, "AA", None), (3, "DL", 0.0)]


# --- rule 1: bags, order only when declared -------------------------------------------------


def test_shuffled_rows_pass_on_an_unordered_task() -> None:  # FN probe
    assert same(GOLD, [GOLD[3], GOLD[1], GOLD[0], GOLD[2]])


def test_duplicates_count() -> None:
    assert not same(GOLD, [GOLD[0], GOLD[1], GOLD[3]])  # DISTINCT where gold keeps duplicates
    assert not same(GOLD, [GOLD[0], GOLD[1], GOLD[3], GOLD[3]])  # same size, wrong multiplicity


def test_weak_set_comparison_would_pass_what_we_fail() -> None:
    cand = [GOLD[0], GOLD[1], GOLD[3]]
    assert set(GOLD) == set(cand)  # a set-based scorer says "correct"
    assert not same(GOLD, cand)


def test_wrong_order_fails_on_an_ordered_task_and_passes_unordered() -> None:
    gold = [("UA", 30), ("AA", 20), ("DL", 10)]
    cand = [("AA", 20), ("UA", 30), ("DL", 10)]
    assert not same(gold, cand, ORDERED)
    assert same(gold, cand, UNORDERED)
    assert same(gold, list(gold), ORDERED)


def test_rows_tied_on_the_sort_keys_are_a_bag() -> None:
    gold = [("UA", 30), ("AA", 20), ("B6", 20), ("DL", 10)]
    swapped_tie = [("UA", 30), ("B6", 20), ("AA", 20), ("DL", 10)]
    assert same(gold, swapped_tie, ORDERED, order_keys=[1])  # ordered by count only
    assert not same(gold, swapped_tie, ORDERED, order_keys=[1, 0])  # count, then carrier
    crossing_tie = [("UA", 30), ("AA", 20), ("DL", 10), ("B6", 20)]
    assert not same(gold, crossing_tie, ORDERED, order_keys=[1])


def test_order_keys_come_from_the_gold_order_by() -> None:
    cols = ["carrier", "n"]
    sql = "SELECT carrier, count(*) AS n FROM f GROUP BY 1 ORDER BY n DESC, carrier"
    assert resolve_order_keys(ORDERED, cols, sql) == [1, 0]
    assert resolve_order_keys(ORDERED, cols, "SELECT carrier, count(*) n FROM f ORDER BY 2") == [1]
    sql = "SELECT carrier, count(*) AS n FROM f GROUP BY 1 ORDER BY count(*) DESC"
    assert resolve_order_keys(ORDERED, cols, sql) == [1]
    # A key that is not an output column: strict positional order from there on.
    sql = "SELECT carrier FROM f GROUP BY 1 ORDER BY max(delay), carrier"
    assert resolve_order_keys(ORDERED, ["carrier"], sql) == []
    declared = SqlAnswerSpec(ordered=True, order_keys=["N"])
    assert resolve_order_keys(declared, cols, sql) == [1]
    assert resolve_order_keys(UNORDERED, cols, sql) == []
    with pytest.raises(ValueError, match="not a gold column"):
        resolve_order_keys(SqlAnswerSpec(ordered=True, order_keys=["nope"]), cols, sql)


# --- rule 2: one column permutation for the whole table -------------------------------------


def test_right_columns_in_another_order_pass() -> None:  # FN probe
    cand = [(r[2], r[0], r[1]) for r in GOLD]
    assert same(GOLD, cand)
    result = compare_results(["a", "b", "c"], GOLD, ["c", "a", "b"], cand, UNORDERED)
    assert result.mapping == [1, 2, 0]


def test_right_values_per_column_but_misaligned_rows_fail() -> None:
    gold = [(1, "UA"), (2, "AA"), (3, "DL")]
    cand = [(1, "AA"), (2, "DL"), (3, "UA")]
    # A per-column scorer (sort each column, compare) says "correct".
    assert all(
        sorted(g) == sorted(c)
        for g, c in zip(zip(*gold, strict=True), zip(*cand, strict=True), strict=True)
    )
    assert not same(gold, cand)


def test_column_count_must_match_unless_extra_columns_are_allowed() -> None:
    gold = [(1, "UA"), (2, "AA")]
    star = [(1, "UA", 9.0, "x"), (2, "AA", 8.0, "y")]
    result = compare_results(["n", "c"], gold, ["n", "c", "d", "e"], star, UNORDERED)
    assert not result.match and "select only the asked columns" in result.reason
    assert same(gold, star, SqlAnswerSpec(allow_extra_columns=True))
    assert not same(gold, [(1,), (2,)], SqlAnswerSpec(allow_extra_columns=True))


def test_one_permutation_is_searched_when_columns_are_ambiguous() -> None:
    # Columns a and b hold the same multiset, so both are candidates for each gold column;
    # only one assignment aligns whole rows.
    gold = [(1, 2, "x"), (2, 1, "y")]
    cand = [("x", 2, 1), ("y", 1, 2)]
    result = compare_results(["a", "b", "s"], gold, ["s", "b2", "a2"], cand, UNORDERED)
    assert result.match and result.mapping == [2, 1, 0]


def test_permutation_search_stays_fast_with_many_identical_columns() -> None:
    width = 9
    gold = [tuple([i] * width) for i in range(300)]
    cand = [tuple([i] * width) for i in reversed(range(300))]
    start = time.perf_counter()
    assert same(gold, cand)
    assert not same(gold, [(*r[:-1], r[-1] + 1) for r in cand])
    assert time.perf_counter() - start < 2.0


# --- rule 3: numbers ------------------------------------------------------------------------


def test_int_float_and_decimal_compare_numerically() -> None:
    assert same([(1, 2.5)], [(1.0, Decimal("2.5"))])
    assert same([(10**12,)], [(float(10**12),)])


def test_off_by_1e12_passes_and_half_a_percent_fails() -> None:
    assert same([(1234.5678,)], [(1234.5678 + 1e-12,)])  # FN probe
    assert same([(0.0,)], [(1e-12,)])
    assert not same([(200.0,)], [(201.0,)])  # off by 0.5%


def test_weak_absolute_tolerance_would_pass_what_we_fail() -> None:
    gold, cand = 0.001, 0.009  # an absolute 1e-2 tolerance calls these equal
    assert abs(gold - cand) <= 1e-2
    assert not same([(gold,)], [(cand,)])


def test_declared_rounding_rounds_both_sides() -> None:
    spec = SqlAnswerSpec(rounding=2)
    assert same([(3.14159,)], [(3.14,)], spec)
    assert same([(2.675,)], [(2.68,)], spec)  # half up on the written value
    assert not same([(3.14159,)], [(3.14,)])
    assert not same([(3.14159,)], [(3.15,)], spec)


# --- rule 4: NULL, NaN, strings, booleans ---------------------------------------------------


def test_null_equals_null_and_nan_equals_nan() -> None:  # FN probes
    assert same([(None, float("nan"))], [(None, float("nan"))])
    assert same([(Decimal("NaN"),)], [(float("nan"),)])


@pytest.mark.parametrize(("a", "b"), [(None, 0), (None, ""), (0, ""), (None, "NULL"), (1, True)])
def test_null_zero_empty_and_bool_all_differ(a: Any, b: Any) -> None:
    assert not same([(a,)], [(b,)])


def test_numeric_strings_are_numbers_only_when_declared() -> None:
    assert not same([(42,)], [("42",)])
    assert same([(42,)], [(" 42.0",)], SqlAnswerSpec(numeric_strings=True))
    assert not same([(42,)], [("42 flights",)], SqlAnswerSpec(numeric_strings=True))


def test_strings_are_compared_exactly() -> None:
    assert not same([("United Air Lines Inc.",)], [("united air lines inc",)])
    assert not same([("UA",)], [("UA ",)])


def test_timestamps_compare_as_utc_instants() -> None:
    aware = dt.datetime(2013, 1, 1, 5, tzinfo=dt.UTC)
    naive = dt.datetime(2013, 1, 1, 5)
    assert same([(aware,)], [(naive,)])
    assert not same([(dt.date(2013, 1, 1),)], [(naive,)])


def test_nested_values_compare_with_the_same_rules() -> None:
    assert same([([1, 2.0], {"a": None})], [([1.0, 2 + 1e-13], {"a": None})])
    assert not same([([1, 2],)], [([2, 1],)])


# --- shape edge cases -----------------------------------------------------------------------


def test_empty_results() -> None:
    assert compare_results(["a"], [], ["b"], [], UNORDERED).match
    assert not compare_results(["a"], [], ["b"], [(1,)], UNORDERED).match
    assert not compare_results(["a", "b"], [], ["b"], [], UNORDERED).match


def test_tolerant_bag_matching_needs_a_true_matching() -> None:
    # Pairing rows in sorted order fails here (1.0 would meet 1.0000001 with 3.0 against 5.0);
    # an exact matching under the tolerance finds the assignment that exists.
    gold = [(1.0, 5.0), (1.0000009, 3.0)]
    cand = [(1.0000005, 5.0), (1.0000001, 3.0)]
    pairs = zip(sorted(gold), sorted(cand), strict=True)
    assert any(g[1] != c[1] for g, c in pairs)
    rows = [tuple(map(norm_cell, r)) for r in gold], [tuple(map(norm_cell, r)) for r in cand]
    assert bags_equal(*rows)
    assert same(gold, cand)
    assert not same([(1.0,), (1.0,)], [(1.0,), (1.1,)])


def test_large_results_compare_quickly() -> None:
    gold = [(i, f"k{i % 97}", i * 0.5) for i in range(20_000)]
    cand = [(r[2], r[0], r[1]) for r in reversed(gold)]
    start = time.perf_counter()
    assert same(gold, cand)
    assert time.perf_counter() - start < 3.0
