"""The certificate statistics against independent references (scipy, statsmodels, brute force)."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
import statsmodels.api as sm  # type: ignore[import-untyped]
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar  # type: ignore[import-untyped]

from workgym.stats.bootstrap import cluster_bootstrap_ci, paired_bootstrap, sign_flip_test
from workgym.stats.tests import (
    clustered_mean_ci,
    intersection_union,
    mcnemar_exact,
    mcnemar_test,
    mean_ci,
    minimum_detectable_effect,
    non_inferiority,
    non_inferiority_sample_size,
    paired_t_test,
    pass_at_k,
    pass_hat_k,
    pass_k_summary,
)

ALTS = ("greater", "less", "two-sided")


@pytest.fixture(scope="module")
def paired() -> tuple[np.ndarray, np.ndarray]:
    """40 items with K=4 epochs each: per-item mean scores, arms correlated through difficulty."""
    rng = np.random.default_rng(20240601)
    p = rng.uniform(0.05, 0.8, size=40)
    base = rng.binomial(4, p) / 4
    cand = rng.binomial(4, np.minimum(p + 0.08, 1.0)) / 4
    return cand, base


@pytest.fixture(scope="module")
def clustered() -> tuple[np.ndarray, np.ndarray]:
    """Scores in 15 families of unequal size (string labels), with a family effect."""
    rng = np.random.default_rng(7)
    sizes = rng.integers(2, 9, size=15)
    labels = np.repeat([f"fam{i:02d}" for i in range(15)], sizes)
    effect = np.repeat(rng.normal(0, 0.5, size=15), sizes)
    return 0.3 + effect + rng.normal(0, 1, size=labels.size), labels


def _ols_cluster(y: np.ndarray, groups: np.ndarray, correction: bool) -> tuple[float, np.ndarray]:
    _, codes = np.unique(groups, return_inverse=True)
    fit = sm.OLS(y, np.ones_like(y)).fit(
        cov_type="cluster", cov_kwds={"groups": codes, "use_correction": correction}, use_t=True
    )
    return float(fit.bse[0]), fit.conf_int(0.05)[0]


# --- means ---------------------------------------------------------------------------------------


def test_mean_ci_matches_ttest_1samp(paired: tuple[np.ndarray, np.ndarray]) -> None:
    s = paired[0]
    est = mean_ci(s)
    ref = stats.ttest_1samp(s, 0.0)
    assert est.mean == pytest.approx(s.mean())
    assert est.se == pytest.approx(s.mean() / ref.statistic)
    assert est.se == pytest.approx(stats.sem(s))
    ci = ref.confidence_interval(0.95)
    assert (est.lower, est.upper) == pytest.approx((ci.low, ci.high))
    assert est.n == s.size and est.n_clusters is None


def test_mean_ci_normal_is_the_clt_interval(paired: tuple[np.ndarray, np.ndarray]) -> None:
    s = paired[1]
    est = mean_ci(s, confidence=0.9, dist="normal")
    lo, hi = stats.norm.interval(0.9, loc=s.mean(), scale=stats.sem(s))
    assert (est.lower, est.upper) == pytest.approx((lo, hi))
    assert est.method == "clt_normal"


@pytest.mark.parametrize("correction", [True, False])
def test_clustered_se_matches_statsmodels(
    clustered: tuple[np.ndarray, np.ndarray], correction: bool
) -> None:
    y, g = clustered
    est = clustered_mean_ci(y, g, small_sample=correction)
    se_ref, ci_ref = _ols_cluster(y, g, correction)
    assert est.se == pytest.approx(se_ref, rel=1e-10)
    assert (est.lower, est.upper) == pytest.approx(tuple(ci_ref), rel=1e-10)
    assert est.n_clusters == 15


def test_clustered_se_is_the_design_formula(clustered: tuple[np.ndarray, np.ndarray]) -> None:
    y, g = clustered
    r = y - y.mean()
    se0 = math.sqrt(sum(r[g == c].sum() ** 2 for c in np.unique(g))) / y.size
    assert clustered_mean_ci(y, g, small_sample=False).se == pytest.approx(se0)
    assert clustered_mean_ci(y, g).se == pytest.approx(se0 * math.sqrt(15 / 14))


def test_singleton_clusters_reduce_to_the_plain_se(paired: tuple[np.ndarray, np.ndarray]) -> None:
    s = paired[0]
    assert clustered_mean_ci(s, np.arange(s.size)).se == pytest.approx(stats.sem(s))


def _scipy_cluster_bootstrap(
    y: np.ndarray, g: np.ndarray, seed: int, alternative: str = "two-sided"
) -> Any:
    _, codes = np.unique(g, return_inverse=True)
    sums, sizes = np.bincount(codes, weights=y), np.bincount(codes).astype(float)
    return stats.bootstrap(
        (sums, sizes),
        lambda s, m, axis=-1: s.sum(axis=axis) / m.sum(axis=axis),
        paired=True,
        vectorized=True,
        method="percentile",
        alternative=alternative,
        n_resamples=20_000,
        rng=np.random.default_rng(seed),
    )


def test_cluster_bootstrap_matches_scipy_bootstrap(
    clustered: tuple[np.ndarray, np.ndarray],
) -> None:
    y, g = clustered
    est = cluster_bootstrap_ci(y, g, n_resamples=20_000, seed=1)
    # Same generator, same draws (G cluster indices per resample): the same interval.
    same = _scipy_cluster_bootstrap(y, g, seed=1)
    assert (est.lower, est.upper) == pytest.approx(tuple(same.confidence_interval), rel=1e-12)
    assert est.se == pytest.approx(same.standard_error, rel=1e-12)
    # Another seed: agreement up to Monte Carlo error.
    other = _scipy_cluster_bootstrap(y, g, seed=2)
    tol = 0.05 * est.se
    assert est.lower == pytest.approx(other.confidence_interval.low, abs=tol)
    assert est.upper == pytest.approx(other.confidence_interval.high, abs=tol)
    # The bootstrap SE estimates the un-corrected sandwich SE (CR0).
    assert est.se == pytest.approx(clustered_mean_ci(y, g, small_sample=False).se, rel=0.05)
    assert est.mean == pytest.approx(y.mean()) and est.n_clusters == 15


def test_bootstrap_is_seeded(clustered: tuple[np.ndarray, np.ndarray]) -> None:
    y, g = clustered
    a = cluster_bootstrap_ci(y, g, n_resamples=500, seed=3)
    assert a == cluster_bootstrap_ci(y, g, n_resamples=500, seed=np.random.default_rng(3))
    assert a != cluster_bootstrap_ci(y, g, n_resamples=500, seed=4)


# --- paired tests --------------------------------------------------------------------------------


@pytest.mark.parametrize("alt", ALTS)
def test_paired_t_matches_ttest_rel(paired: tuple[np.ndarray, np.ndarray], alt: str) -> None:
    cand, base = paired
    res = paired_t_test(cand, base, alternative=alt)  # type: ignore[arg-type]
    ref = stats.ttest_rel(cand, base, alternative=alt)
    ci = ref.confidence_interval(0.95)
    assert res.statistic == pytest.approx(ref.statistic)
    assert res.p_value == pytest.approx(ref.pvalue, rel=1e-9)
    assert (res.lower, res.upper) == pytest.approx((ci.low, ci.high))
    assert res.diff == pytest.approx(np.mean(cand - base))
    assert res.se == pytest.approx(stats.sem(cand - base))
    assert res.correlation == pytest.approx(stats.pearsonr(cand, base).statistic)
    assert res.n == 40 and res.alternative == alt


def test_clustered_paired_t_matches_statsmodels(clustered: tuple[np.ndarray, np.ndarray]) -> None:
    y, g = clustered
    base = np.random.default_rng(11).normal(size=y.size)
    res = paired_t_test(base + y, base, alternative="two-sided", clusters=g)
    se_ref, ci_ref = _ols_cluster(y, g, True)
    assert res.se == pytest.approx(se_ref)
    assert (res.lower, res.upper) == pytest.approx(tuple(ci_ref))
    assert res.p_value == pytest.approx(2 * stats.t.sf(abs(y.mean() / se_ref), 14))
    assert res.method == "paired_t_clustered" and res.n_clusters == 15


def test_paired_t_constant_arm_has_nan_correlation() -> None:
    res = paired_t_test([1.0, 0.5, 1.0, 0.0], [0.0, 0.0, 0.0, 0.0])
    assert math.isnan(res.correlation)
    assert res.p_value == pytest.approx(
        stats.ttest_1samp([1.0, 0.5, 1.0, 0.0], 0.0, alternative="greater").pvalue
    )


@pytest.mark.parametrize(("b", "c"), [(0, 0), (0, 5), (3, 9), (12, 4), (7, 7), (30, 45), (1, 0)])
def test_mcnemar_exact_matches_binomtest(b: int, c: int) -> None:
    for alt in ALTS:
        p = mcnemar_exact(b, c, alternative=alt).p_value  # type: ignore[arg-type]
        ref = 1.0 if b + c == 0 else stats.binomtest(c, b + c, 0.5, alternative=alt).pvalue
        assert p == pytest.approx(ref, rel=1e-9, abs=1e-15)
    if b + c:
        table = [[10, b], [c, 20]]  # 2x2 table; the off-diagonal cells are discordant
        ref2 = sm_mcnemar(table, exact=True).pvalue
        assert mcnemar_exact(b, c, "two-sided").p_value == pytest.approx(ref2)


def test_mcnemar_from_binary_outcomes() -> None:
    base = np.array([1, 1, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0])
    cand = np.array([1, 0, 1, 1, 1, 1, 0, 1, 1, 1, 0, 1])
    res = mcnemar_test(cand, base)
    assert (res.b, res.c, res.n) == (1, 6, 12)
    assert res.diff == pytest.approx(cand.mean() - base.mean())
    assert res.p_value == pytest.approx(stats.binomtest(6, 7, 0.5, alternative="greater").pvalue)
    with pytest.raises(ValueError, match="binary"):
        mcnemar_test([0.5, 1.0], [0.0, 1.0])


@pytest.mark.parametrize("alt", ALTS)
def test_paired_bootstrap_matches_scipy(paired: tuple[np.ndarray, np.ndarray], alt: str) -> None:
    cand, base = paired
    res = paired_bootstrap(cand, base, alternative=alt, n_resamples=20_000, seed=5)  # type: ignore[arg-type]

    def ref(seed: int, d: np.ndarray) -> Any:
        return stats.bootstrap(
            (d,),
            np.mean,
            method="percentile",
            alternative=alt,
            n_resamples=20_000,
            rng=np.random.default_rng(seed),
        )

    # Same generator, same resampled indices: the same interval.
    same = ref(5, cand - base)
    assert (res.lower, res.upper) == pytest.approx(tuple(same.confidence_interval), rel=1e-12)
    assert res.se == pytest.approx(same.standard_error, rel=1e-12)
    # Another seed, on continuous data (rewards on a grid make quantiles jump): MC agreement.
    d = np.random.default_rng(13).normal(0.05, 0.2, size=40)
    mine = paired_bootstrap(d, np.zeros(40), alternative=alt, n_resamples=20_000, seed=5)  # type: ignore[arg-type]
    other = ref(6, d)
    tol = 0.05 * other.standard_error
    assert mine.lower == pytest.approx(other.confidence_interval.low, abs=tol)
    assert mine.upper == pytest.approx(other.confidence_interval.high, abs=tol)
    # p inverts the interval: rejecting at 5% one-sided <=> the 95% one-sided bound excludes 0.
    if alt == "greater":
        assert (res.p_value < 0.05) == (res.lower > 0)
        assert res.p_value == pytest.approx(paired_t_test(cand, base).p_value, abs=0.02)


@pytest.mark.parametrize("alt", ALTS)
def test_sign_flip_exact_matches_scipy(alt: str) -> None:
    rng = np.random.default_rng(8)
    cand = rng.integers(0, 5, size=14) / 4  # ties on purpose
    base = rng.integers(0, 4, size=14) / 4
    res = sign_flip_test(cand, base, alternative=alt)  # type: ignore[arg-type]
    ref = stats.permutation_test(
        (cand - base,),
        lambda d, axis=-1: np.mean(d, axis=axis),
        permutation_type="samples",
        vectorized=True,
        n_resamples=np.inf,
        alternative=alt,
    )
    assert res.exact and res.n_resamples == 2**14
    assert res.p_value == pytest.approx(ref.pvalue, rel=1e-12)


def test_sign_flip_monte_carlo_matches_exact() -> None:
    rng = np.random.default_rng(9)
    d = rng.normal(0.3, 1.0, size=16)
    exact = sign_flip_test(d, np.zeros(16))
    mc = sign_flip_test(d, np.zeros(16), max_exact_n=0, n_resamples=50_000, seed=1)
    assert not mc.exact and mc.n_resamples == 50_000
    assert mc.p_value == pytest.approx(exact.p_value, abs=4 * math.sqrt(0.25 / 50_000))
    big = rng.normal(0.2, 1.0, size=60)  # n > 20 goes Monte Carlo by default
    res = sign_flip_test(big, np.zeros(60), n_resamples=20_000)
    assert not res.exact
    assert res.p_value == pytest.approx(
        stats.ttest_1samp(big, 0, alternative="greater").pvalue, abs=0.02
    )


# --- non-inferiority and intersection-union ------------------------------------------------------


def test_non_inferiority_uses_the_one_sided_lower_bound(
    paired: tuple[np.ndarray, np.ndarray],
) -> None:
    cand, base = paired
    ref = stats.ttest_rel(cand, base, alternative="greater").confidence_interval(0.9)
    ni = non_inferiority(cand, base, margin=0.05, alpha=0.1)
    assert ni.lower == pytest.approx(ref.low)
    assert ni.passed == (ref.low > -0.05)
    assert (ni.margin, ni.alpha, ni.n, ni.method) == (0.05, 0.1, 40, "paired_t")
    # Swap the arms: the candidate is now worse; a tight margin below |lower| fails.
    worse = non_inferiority(base, cand, margin=0.01)
    assert not worse.passed and worse.lower < -0.01


def test_not_significant_is_not_non_inferior() -> None:
    base = np.linspace(0.1, 0.8, 8)
    cand = base + np.array([0.3, -0.4, 0.2, -0.1, 0.25, -0.3, 0.1, -0.05])  # mean diff 0
    assert stats.ttest_rel(cand, base).pvalue > 0.5  # "no significant difference" ...
    assert not non_inferiority(cand, base, margin=0.05).passed  # ... is not non-inferiority
    assert non_inferiority(cand, base, margin=0.2).passed  # a margin the data can support


def test_non_inferiority_bootstrap(paired: tuple[np.ndarray, np.ndarray]) -> None:
    cand, base = paired
    ni = non_inferiority(cand, base, margin=0.05, method="bootstrap", n_resamples=5_000)
    t = non_inferiority(cand, base, margin=0.05)
    assert ni.method == "paired_bootstrap" and ni.lower == pytest.approx(t.lower, abs=0.01)
    boot = paired_bootstrap(cand, base, confidence=0.95, n_resamples=5_000, seed=0)
    assert ni.lower == boot.lower


def test_intersection_union(paired: tuple[np.ndarray, np.ndarray]) -> None:
    cand, base = paired
    ok = non_inferiority(cand, base, margin=0.1)
    bad = non_inferiority(base, cand, margin=0.0)
    res = intersection_union({"reasoning": ok, "tools": bad, "ifeval": True})
    assert not res.passed and res.failed == ("tools",)
    assert res.suites == ("reasoning", "tools", "ifeval")
    assert intersection_union({"reasoning": ok}).passed
    with pytest.raises(ValueError, match="at least one suite"):
        intersection_union({})


# --- pass@k --------------------------------------------------------------------------------------


def _brute(n: int, c: int, k: int) -> tuple[Fraction, Fraction]:
    outcomes = [1] * c + [0] * (n - c)
    subsets = list(itertools.combinations(outcomes, k))
    any_ok = Fraction(sum(1 for s in subsets if any(s)), len(subsets))
    all_ok = Fraction(sum(1 for s in subsets if all(s)), len(subsets))
    return any_ok, all_ok


@pytest.mark.parametrize("n", [1, 2, 5, 8, 10])
def test_pass_k_against_enumeration(n: int) -> None:
    for c in range(n + 1):
        for k in range(1, n + 1):
            any_ok, all_ok = _brute(n, c, k)
            assert pass_at_k(n, c, k) == pytest.approx(float(any_ok), abs=1e-15)
            assert pass_hat_k(n, c, k) == pytest.approx(float(all_ok), abs=1e-15)


def test_pass_k_special_cases_and_summary() -> None:
    assert pass_at_k(10, 3, 1) == pytest.approx(0.3) and pass_hat_k(10, 3, 1) == pytest.approx(0.3)
    assert pass_at_k(200, 0, 50) == 0.0 and pass_hat_k(200, 200, 50) == 1.0
    assert pass_at_k(400, 1, 200) == pytest.approx(0.5)  # large n: exact integers, no overflow
    summ = pass_k_summary([5, 5, 8], [0, 5, 3], k=2)
    assert summ.per_task_pass_at_k == pytest.approx((0.0, 1.0, 1 - 10 / 28))
    assert summ.per_task_pass_hat_k == pytest.approx((0.0, 1.0, 3 / 28))
    assert summ.pass_at_k == pytest.approx((1 + 1 - 10 / 28) / 3)
    assert summ.pass_hat_k == pytest.approx((1 + 3 / 28) / 3)
    assert summ.n_tasks == 3 and summ.k == 2


# --- power ---------------------------------------------------------------------------------------


def test_mde_and_sample_size() -> None:
    assert minimum_detectable_effect(1.0, 1) == pytest.approx(2.486, abs=1e-3)  # the "2.49"
    assert minimum_detectable_effect(0.4, 100) == pytest.approx(
        (stats.norm.ppf(0.95) + stats.norm.ppf(0.8)) * 0.04
    )
    n = non_inferiority_sample_size(0.4, 0.05)
    exact = (stats.norm.ppf(0.95) + stats.norm.ppf(0.8)) ** 2 * 0.16 / 0.0025
    assert n == math.ceil(exact)
    assert minimum_detectable_effect(0.4, n) <= 0.05 < minimum_detectable_effect(0.4, n - 1)
    assert non_inferiority_sample_size(0.4, 0.05, power=0.95) > n


def test_mde_power_by_simulation() -> None:
    """At the MDE, a one-sided z test on n items rejects ~80% of the time."""
    rng = np.random.default_rng(12)
    n, sigma = 50, 0.5
    d = rng.normal(minimum_detectable_effect(sigma, n), sigma, size=(4000, n))
    power = np.mean(d.mean(axis=1) / (sigma / math.sqrt(n)) > stats.norm.ppf(0.95))
    assert 0.78 < power < 0.82


# --- bad input -----------------------------------------------------------------------------------


def test_bad_input_is_a_clear_value_error() -> None:
    with pytest.raises(ValueError, match="empty"):
        mean_ci([])
    with pytest.raises(ValueError, match="at least 2"):
        mean_ci([1.0])
    with pytest.raises(ValueError, match="NaN"):
        mean_ci([1.0, math.nan])
    with pytest.raises(ValueError, match="lengths 3 and 2 differ"):
        paired_t_test([1, 2, 3], [1, 2])
    with pytest.raises(ValueError, match="lengths"):
        sign_flip_test([1, 2, 3], [1, 2])
    with pytest.raises(ValueError, match="one label per score"):
        clustered_mean_ci([1, 2, 3], [0, 1])
    with pytest.raises(ValueError, match="at least 2 clusters"):
        cluster_bootstrap_ci([1, 2, 3], ["a", "a", "a"])
    with pytest.raises(ValueError, match="alternative"):
        paired_t_test([1, 2], [0, 1], alternative="bigger")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="confidence"):
        mean_ci([1, 2], confidence=95)
    with pytest.raises(ValueError, match="k <= n"):
        pass_at_k(5, 2, 6)
    with pytest.raises(ValueError, match="0 <= c <= n"):
        pass_hat_k(5, 6, 2)
    with pytest.raises(ValueError, match="k <= n"):
        pass_k_summary([5, 3], [1, 1], k=4)
    with pytest.raises(ValueError, match="integers"):
        pass_k_summary([5.5, 3], [1, 1], k=1)
    with pytest.raises(ValueError, match="equal length"):
        pass_k_summary([5, 3], [1], k=1)
    with pytest.raises(ValueError, match="margin"):
        non_inferiority([1, 2], [1, 2], margin=-0.1)
    with pytest.raises(ValueError, match="non-negative integers"):
        mcnemar_exact(-1, 3)
    with pytest.raises(ValueError, match="n_resamples"):
        paired_bootstrap([1, 2, 3], [0, 1, 1], n_resamples=10)


def test_results_are_frozen(paired: tuple[np.ndarray, np.ndarray]) -> None:
    res = non_inferiority(*paired, margin=0.05)
    with pytest.raises(AttributeError):
        res.passed = False  # type: ignore[misc]


# --- coverage by simulation ----------------------------------------------------------------------


def test_ci_coverage_by_simulation() -> None:
    """95% CIs of the mean and of the paired difference cover the truth 93-97% of 2,000 datasets.

    Data look like rewards: each of 60 items has a difficulty p ~ U(0, 0.8); each arm scores the
    mean of K=4 Bernoulli epochs, the candidate with success probability p + 0.1. The truth is
    E[score] = 0.4 for the baseline and a difference of exactly 0.1.
    """
    rng = np.random.default_rng(2024)
    reps, n = 2000, 60
    p = rng.uniform(0.0, 0.8, size=(reps, n))
    base = rng.binomial(4, p) / 4
    cand = rng.binomial(4, p + 0.1) / 4
    cover_mean = cover_diff = 0
    for b, c in zip(base, cand, strict=True):
        m = mean_ci(b)
        cover_mean += m.lower <= 0.4 <= m.upper
        t = paired_t_test(c, b, alternative="two-sided")
        cover_diff += t.lower <= 0.1 <= t.upper
    assert 0.93 <= cover_mean / reps <= 0.97
    assert 0.93 <= cover_diff / reps <= 0.97
