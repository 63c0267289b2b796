"""Known answers for the certificate's exact and score statistics (issue 33, decision 0070)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize
from scipy import stats as st
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
from statsmodels.stats.proportion import proportion_confint

from workgym.certify.comparison import gain, non_inferiority
from workgym.certify.plan import make_plan, refusal, resolve_estimand
from workgym.certify.schema import ArmItem, ItemScore
from workgym.core.errors import ConfigError
from workgym.stats import exact_paired, families, proportions
from workgym.stats import power as sim
from workgym.stats.tests import mcnemar_exact

Z95 = float(st.norm.ppf(0.95))


@pytest.mark.parametrize(("k", "n"), [(0, 32), (2, 32), (16, 32), (32, 32), (7, 400)])
def test_wilson_and_clopper_pearson_match_statsmodels(k: int, n: int) -> None:
    w = proportions.wilson(k, n)
    assert (w.lower, w.upper) == pytest.approx(proportion_confint(k, n, method="wilson"))
    cp = proportions.clopper_pearson(k, n)
    assert (cp.lower, cp.upper) == pytest.approx(proportion_confint(k, n, method="beta"))


def test_two_of_32_is_no_longer_below_zero() -> None:
    est = proportions.reward_interval([1.0] * 2 + [0.0] * 30)
    assert est.method == "clopper_pearson" and est.lower > 0 and est.upper < 0.21


def test_one_sided_exact_bound_of_zero_in_32() -> None:
    _, hi = proportions.clopper_pearson_bounds(0, 32, 0.95, two_sided=False)
    assert float(hi) == pytest.approx(1 - 0.05 ** (1 / 32))  # 0.089, the number


@pytest.mark.parametrize(("b", "c"), [(0, 5), (3, 9), (10, 4), (0, 0), (12, 12)])
def test_mcnemar_matches_statsmodels_and_binomtest(b: int, c: int) -> None:
    two = mcnemar_exact(b, c, "two-sided").p_value
    expected = sm_mcnemar([[10, b], [c, 10]], exact=True).pvalue if b + c else 1.0
    assert two == pytest.approx(min(1.0, expected))
    one = sim.mcnemar_p(b, c)
    ref = st.binomtest(c, b + c, 0.5, alternative="greater").pvalue if b + c else 1.0
    assert float(one) == pytest.approx(ref)


def _tango_by_scipy(x: int, y: int, n: int, delta: float) -> float:
    """Tango's Z with the restricted MLE found by a numerical optimizer, not the closed form."""

    def nll(q: float) -> float:
        cells = [q + delta, q, 1 - 2 * q - delta]
        counts = [x, y, n - x - y]
        return -sum(k * math.log(max(p, 1e-300)) for k, p in zip(counts, cells, strict=True))

    lo, hi = max(0.0, -delta) + 1e-12, (1 - delta) / 2 - 1e-12
    q = optimize.minimize_scalar(nll, bounds=(lo, hi), method="bounded", options={"xatol": 1e-12})
    var = n * (2 * q.x + delta - delta * delta)
    return (x - y - n * delta) / math.sqrt(var)


@pytest.mark.parametrize(("x", "y", "n"), [(5, 2, 40), (0, 4, 40), (3, 3, 40), (12, 1, 50)])
def test_tango_interval_inverts_the_score_test(x: int, y: int, n: int) -> None:
    lo, hi = proportions.tango_bounds(x, y, n, 1.959963984540054)
    assert _tango_by_scipy(x, y, n, float(lo)) == pytest.approx(1.959963984540054, abs=1e-4)
    assert _tango_by_scipy(x, y, n, float(hi)) == pytest.approx(-1.959963984540054, abs=1e-4)


def _items(base: list[float], cand: list[float], fams: list[str] | None = None) -> list[ItemScore]:
    fams = fams or ["f"] * len(base)

    def arm(r: float) -> ArmItem:
        return ArmItem(rewards=[r], successes=[r == 1.0], tokens=[10], failures=["ok"])

    return [
        ItemScore(id=str(i), family=f, baseline=arm(b), candidate=arm(c), d=c - b)
        for i, (b, c, f) in enumerate(zip(base, cand, fams, strict=True))
    ]


@pytest.mark.parametrize(("n", "shown", "bound"), [(32, False, -0.0894), (64, True, -0.0457)])
def test_zero_discordant_pairs_is_not_a_free_pass(n: int, shown: bool, bound: float) -> None:
    half = [1.0, 0.0] * (n // 2)
    ni = non_inferiority(_items(half, half), 0.05, 0.05)
    # the exact bound with no discordant pair is the Clopper-Pearson one on the loss rate,
    # -(1 - 0.05^(1/n)): the issue's 0.089 at 32, 0.046 at 64 (bisection tolerance 1e-4)
    assert ni.lower == pytest.approx(-(1 - 0.05 ** (1 / n)), abs=2e-4)
    assert ni.lower == pytest.approx(bound, abs=1e-4)
    assert ni.passed is shown and ni.status == ("shown" if shown else "not shown")


def test_identical_arms_at_32_items_do_not_certify_no_regression() -> None:
    """The issue's reproduction: the oracle against itself on 32 suite items, every pair tied."""
    both = [1.0] * 20 + [0.0] * 12
    ni = non_inferiority(_items(both, both), 0.05, 0.05)
    assert ni.method == "exact_unconditional" and not ni.passed and ni.status == "not shown"


def _exact_p_by_scipy(x: int, y: int, n: int, delta0: float) -> float:
    """The exact unconditional p computed independently: scipy's multinomial pmf over every
    outcome whose Tango Z (restricted MLE by a numerical optimizer) is at least the observed one,
    maximised over the nuisance by a bounded scalar optimizer from several starts."""
    outcomes = [(a, b) for a in range(n + 1) for b in range(n + 1 - a)]
    z = {o: _tango_by_scipy(o[0], o[1], n, delta0) for o in outcomes}
    worse = [o for o in outcomes if z[o] >= z[(x, y)] - 1e-9]

    def tail(pm: float) -> float:
        pp = pm + delta0
        cells = [pp, pm, max(0.0, 1 - pp - pm)]
        return float(sum(st.multinomial.pmf([a, b, n - a - b], n, cells) for a, b in worse))

    lo, hi = max(0.0, -delta0), (1 - delta0) / 2
    grid = np.linspace(lo, hi, 201)
    best = max(tail(float(g)) for g in grid)
    for i in range(200):
        res = optimize.minimize_scalar(
            lambda v: -tail(v), bounds=(grid[i], grid[i + 1]), method="bounded"
        )
        best = max(best, -float(res.fun))
    return best


@pytest.mark.parametrize(
    ("x", "y", "n", "delta0"), [(0, 0, 12, -0.05), (3, 1, 12, -0.1), (2, 4, 10, -0.2)]
)
def test_exact_unconditional_p_matches_an_independent_computation(
    x: int, y: int, n: int, delta0: float
) -> None:
    ref = _exact_p_by_scipy(x, y, n, delta0)
    assert exact_paired.p_value(x, y, n, delta0) == pytest.approx(ref, rel=2e-3)


def test_exact_p_with_no_discordant_pair_by_hand() -> None:
    """0 of 32 discordant at margin 0.05: the worst case is pi+ = 0, pi- = 0.05, and the outcomes
    as extreme as (0, 0) are those with no baseline-only pair: p = 0.95^32 = 0.194 > 0.05."""
    assert exact_paired.p_value(0, 0, 32, -0.05) == pytest.approx(0.95**32, rel=1e-9)
    assert exact_paired.p_value(0, 0, 64, -0.05) < 0.05  # 0 of 64: non-inferior
    assert (
        proportions.items_to_show(0.05, 0.05, binary=True) == 59
    )  # 0.95^59 = 0.0485, 0.95^58 = 0.051


@pytest.mark.parametrize("n", [16, 32, 64])
def test_exact_gate_size_is_at_most_alpha_on_the_whole_null_boundary(n: int) -> None:
    """Summed over every outcome, never simulated: the chance of passing at a true loss of
    exactly the margin is at most alpha wherever the nuisance sits (Tango's reached 0.063-0.073)."""
    from scipy import special

    x, y, logc = exact_paired._outcomes(n)
    rej = exact_paired.rejects(x, y, n, -0.05, 0.05)
    worst = 0.0
    for pm in np.linspace(0.05, 0.525, 601):
        pp, rest = pm - 0.05, max(0.0, 1 - 2 * pm + 0.05)
        logp = logc + special.xlogy(x, pp) + special.xlogy(y, pm) + special.xlogy(n - x - y, rest)
        worst = max(worst, float(np.exp(logp)[rej].sum()))
    assert 0.04 < worst <= 0.05


@pytest.mark.parametrize(("x", "y", "n"), [(5, 2, 40), (0, 4, 40), (3, 3, 40), (12, 1, 50)])
def test_exact_bound_inverts_the_exact_test(x: int, y: int, n: int) -> None:
    lo = exact_paired.lower_bound(x, y, n, 0.05)
    assert exact_paired.p_value(x, y, n, lo) <= 0.05 < exact_paired.p_value(x, y, n, lo + 2e-4)
    tango, _ = proportions.tango_bounds(x, y, n, Z95)
    assert lo <= float(tango) + 0.02  # exact is a little wider than the asymptotic bound


def test_floor_and_ceiling_suites_cannot_show() -> None:
    floor = non_inferiority(_items([0.0] * 100, [0.0] * 100), 0.05, 0.05)
    ceiling = non_inferiority(_items([1.0] * 100, [1.0] * 100), 0.05, 0.05)
    for ni in (floor, ceiling):
        assert ni.status == "cannot show" and not ni.passed


def test_graded_ties_do_not_collapse() -> None:
    base = [0.25, 0.5, 0.75] * 20
    ni = non_inferiority(_items(base, base), 0.05, 0.05)
    assert ni.method == "bounded_score" and ni.lower == pytest.approx(-(Z95**2) / (60 + Z95**2))


def test_effect_in_one_of_four_families() -> None:
    """The family gate cannot pass (smallest p 1/16); the item gate can (5 of 5 discordant)."""
    fams = [f"f{g}" for g in range(4) for _ in range(5)]
    base = [0.0] * 5 + [1.0, 0.0, 1.0, 0.0, 1.0] * 3
    cand = [1.0] * 5 + [1.0, 0.0, 1.0, 0.0, 1.0] * 3
    fam_level = gain(_items(base, cand, fams), 0.05, 1, 2000, 0, "families")
    assert not fam_level.passable and not fam_level.significant
    assert fam_level.smallest_p == 1 / 16
    item_level = gain(_items(base, cand, fams), 0.05, 1, 2000, 0, "items")
    assert item_level.significant and item_level.p_value == pytest.approx(1 / 32)
    auto = gain(_items(base, cand, fams), 0.05, 1, 2000, 0)
    assert auto.estimand == "items" and "0.062 > alpha" in auto.estimand_reason


def test_family_sign_flip_matches_scipy_permutation_test() -> None:
    rng = np.random.default_rng(3)
    means = rng.normal(0.1, 0.2, size=8)
    p, exact = families.sign_flip_p(means)
    ref = st.permutation_test(
        (means,), np.sum, permutation_type="samples", alternative="greater", n_resamples=np.inf
    )
    assert exact and float(p[0]) == pytest.approx(ref.pvalue)
    lo, _ = families.sign_flip_bounds(means, 0.05)
    # the inverted bound is where the test at mu0 stops rejecting
    assert float(families.sign_flip_p(means - (lo - 1e-9))[0][0]) <= 0.05
    assert float(families.sign_flip_p(means - (lo + 1e-9))[0][0]) > 0.05


def test_estimand_the_split_cannot_support_is_refused() -> None:
    with pytest.raises(ConfigError, match="needs at least 5 test families"):
        resolve_estimand("families", 4, 0.05)
    assert resolve_estimand("auto", 5, 0.05)[0] == "families"
    plan = make_plan(
        env_id="e",
        family_sizes=[8, 8, 8, 8],
        epochs=1,
        alpha=0.05,
        estimand="items",
        reason="",
        suites={"s": (32, 0.05)},
        rates=None,
        rates_from="",
    )
    why = refusal(plan)
    assert why is not None and "59 items" in why


@pytest.mark.parametrize(
    "design",
    [
        sim.Design((8, 8, 8, 8), 1, (0.3,), "items"),
        sim.Design((8,) * 8, 1, (0.1, 0.3, 0.5, 0.2), "families"),
    ],
)
def test_plan_matches_an_independent_simulation(design: sim.Design) -> None:
    """The plan's detectable gain is where a fresh simulation (other seed) crosses 80% power,
    to within 0.02."""
    mde = sim.detectable_gain(design, 0.8, 400, seed=0)
    assert mde is not None
    assert (
        sim.power(design, mde - 0.02, 1000, seed=11)
        < 0.8
        < sim.power(design, mde + 0.02, 1000, seed=11)
    )


def test_vectorised_sign_flip_agrees_with_the_scalar_test() -> None:
    from workgym.stats.bootstrap import sign_flip_test

    rng = np.random.default_rng(1)
    for n in (12, 40):
        d = rng.normal(0.05, 0.3, n)
        p, exact = families.sign_flip_p(d, 5000, 0)
        ref = sign_flip_test(d, np.zeros(n), "greater", 5000, 0)
        assert exact == ref.exact and float(p[0]) == pytest.approx(ref.p_value)


def test_epochs_needed_is_the_first_k_that_reaches_power() -> None:
    """Items fixed (16 in 4 families, rate 0.5), the epochs search returns the smallest K whose
    simulated power reaches 0.8 (the same simulation the plan prints), and K - 1 does not."""
    from dataclasses import replace

    design = sim.Design((4, 4, 4, 4), 1, (0.5,), "items")
    k = sim.epochs_needed(design, 0.3, 0.8, 200, 0)
    assert k is not None and k > 1
    assert sim.power(replace(design, epochs=k), 0.3, 200, 0) >= 0.8
    assert sim.power(replace(design, epochs=k - 1), 0.3, 200, 0) < 0.8
    # a family-level gate that cannot reach alpha gets no number, whatever K
    assert sim.epochs_needed(replace(design, estimand="families"), 0.3, 0.8, 200, 0) is None


def test_one_size_search_serves_items_families_and_epochs() -> None:
    """`needed` and `epochs_needed` share `smallest_size`: doubling, then bisection (exact below
    100, to 2% above), each size simulated once, None when the cap itself fails."""
    for threshold in (1, 2, 3, 37, 64, 700):
        calls: list[int] = []

        def ok(n: int, t: int = threshold, seen: list[int] = calls) -> bool:
            seen.append(n)
            return n >= t

        got = sim.smallest_size(ok, 1, 4096)
        assert got is not None and threshold <= got <= threshold * 1.02
        assert len(calls) == len(set(calls))
    assert sim.smallest_size(lambda n: n >= 37, 2, 4096) == 37
    assert sim.smallest_size(lambda n: n >= 100, 2, 64) is None
    assert sim.smallest_size(lambda n: True, 5, 64) == 5
