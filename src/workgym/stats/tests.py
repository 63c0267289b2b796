"""Closed-form statistics of the certificate (docs/certificate.md).

Conventions: ``d_i = candidate_i - baseline_i`` (pairs matched by position);
``alternative="greater"`` means "the candidate is better". Intervals follow the alternative: a
one-sided test gets the one-sided interval (one infinite end), so the test rejects at
``alpha = 1 - confidence`` exactly when the interval excludes 0. Resampling methods (bootstrap,
sign-flip) live in :mod:`workgym.stats.bootstrap`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Literal

import numpy as np
import numpy.typing as npt
from scipy import stats as _st

from workgym.stats import bootstrap as _boot
from workgym.stats.results import (
    Alternative,
    FloatArray,
    IntersectionUnion,
    McNemarResult,
    MeanEstimate,
    NonInferiority,
    PairedTest,
    PassK,
    as_pairs,
    as_scores,
    check_alternative,
    check_confidence,
    cluster_codes,
    correlation,
    interval,
    wald_p_value,
)

Dist = Literal["t", "normal"]


def _df(dist: Dist, df: int) -> float:
    if dist not in ("t", "normal"):
        raise ValueError(f"dist must be 't' or 'normal', got {dist!r}")
    return float(df) if dist == "t" else math.inf


def se_mean(scores: FloatArray) -> float:
    """SE of a mean: ``sqrt(sum (s_i - mean)^2 / (n (n-1)))``, i.e. ``sd / sqrt(n)``."""
    return float(np.std(scores, ddof=1) / math.sqrt(scores.size))


def se_clustered(scores: FloatArray, codes: npt.NDArray[np.intp], small_sample: bool) -> float:
    """Cluster-robust SE of a mean: ``(1/n) sqrt(sum_c (sum_{i in c} (s_i - mean))^2)``.

    Items of one cluster (task family) share difficulty, so their errors are correlated and the
    plain SE is too small; summing residuals within a cluster first lets that correlation count.
    ``small_sample`` multiplies the variance by ``G/(G-1)`` (CR1, the Stata/statsmodels default),
    which offsets the downward bias of the sandwich with few clusters.
    """
    resid_sums = np.bincount(codes, weights=scores - scores.mean())
    se = math.sqrt(float(np.sum(resid_sums**2))) / scores.size
    n_clusters = resid_sums.size
    return se * math.sqrt(n_clusters / (n_clusters - 1)) if small_sample else se


def mean_ci(scores: npt.ArrayLike, confidence: float = 0.95, dist: Dist = "t") -> MeanEstimate:
    """Mean, CLT standard error ``sd/sqrt(n)`` and two-sided interval ``mean ± q SE``.

    By the central limit theorem the mean is approximately normal whatever the score distribution,
    so a Wald interval is valid for moderate n. ``dist="t"`` (default) uses the Student-t quantile
    with ``n-1`` df: identical to the normal one for large n, and wider (the honest choice) for
    small n, where the SE itself is estimated. ``dist="normal"`` gives the textbook z interval.
    """
    s = as_scores(scores, min_n=2)
    conf = check_confidence(confidence)
    mean, se = float(s.mean()), se_mean(s)
    lo, hi = interval(mean, se, _df(dist, s.size - 1), conf, "two-sided")
    return MeanEstimate(mean, se, lo, hi, conf, int(s.size), f"clt_{dist}")


def clustered_mean_ci(
    scores: npt.ArrayLike,
    clusters: npt.ArrayLike,
    confidence: float = 0.95,
    small_sample: bool = True,
    dist: Dist = "t",
) -> MeanEstimate:
    """Mean with the cluster-robust SE (see :func:`se_clustered`) and ``mean ± q SE``.

    Default ``small_sample=True`` (the ``G/(G-1)`` correction) and ``dist="t"`` with ``G-1`` df,
    because the effective sample size is the number of clusters G, not n; together they match
    statsmodels ``OLS(...).fit(cov_type="cluster", use_t=True)``. ``small_sample=False`` is the
    plain formula of the design note; with a normal quantile it under-covers when clusters are few
    (``bench/stats_coverage.py``: ~0.89 at G=10, ~0.91 at G=20, vs ~0.94 for the default).
    """
    s = as_scores(scores, min_n=2)
    conf = check_confidence(confidence)
    codes, n_clusters = cluster_codes(clusters, s.size)
    mean, se = float(s.mean()), se_clustered(s, codes, small_sample)
    lo, hi = interval(mean, se, _df(dist, n_clusters - 1), conf, "two-sided")
    method = f"clustered_{'cr1' if small_sample else 'cr0'}_{dist}"
    return MeanEstimate(mean, se, lo, hi, conf, int(s.size), method, n_clusters)


def paired_t_test(
    candidate: npt.ArrayLike,
    baseline: npt.ArrayLike,
    alternative: Alternative = "greater",
    confidence: float = 0.95,
    clusters: npt.ArrayLike | None = None,
    small_sample: bool = True,
) -> PairedTest:
    """Paired t test on ``d_i = candidate_i - baseline_i``: ``t = mean(d) / SE_d``.

    Both arms ran on the same items, so item difficulty cancels in ``d``; ``SE_d`` shrinks with the
    correlation of the arms (``var d = var c + var b - 2 cov``), which is why pairing beats two
    independent samples. With ``clusters`` (task families) ``SE_d`` is the cluster-robust SE and
    df = G-1 (see :func:`clustered_mean_ci`); otherwise df = n-1 as in ``scipy.stats.ttest_rel``.
    """
    cand, base = as_pairs(candidate, baseline, min_n=2)
    alt, conf = check_alternative(alternative), check_confidence(confidence)
    d = cand - base
    diff = float(d.mean())
    n_clusters: int | None = None
    if clusters is None:
        se, df, method = se_mean(d), float(d.size - 1), "paired_t"
    else:
        codes, n_clusters = cluster_codes(clusters, d.size)
        se, df, method = (
            se_clustered(d, codes, small_sample),
            float(n_clusters - 1),
            "paired_t_clustered",
        )
    stat = diff / se if se > 0 else (math.copysign(math.inf, diff) if diff != 0 else math.nan)
    lo, hi = interval(diff, se, df, conf, alt)
    p = wald_p_value(stat, df, alt)
    r = correlation(cand, base)
    return PairedTest(diff, se, lo, hi, p, alt, conf, r, int(d.size), method, stat, n_clusters)


def mcnemar_exact(b: int, c: int, alternative: Alternative = "greater") -> McNemarResult:
    """Exact McNemar test from the discordant pairs of binary outcomes.

    ``b`` = items only the baseline solved, ``c`` = items only the candidate solved. Concordant
    pairs carry no information about which arm is better; under H0 each discordant pair is a fair
    coin, so ``c ~ Binomial(b + c, 1/2)``. ``greater``: ``p = P(X >= c)``; ``less``: ``P(X <= c)``;
    two-sided: ``min(1, 2 min(P(X <= c), P(X >= c)))`` (the null is symmetric). No discordant pairs
    gives ``p = 1``.
    """
    alt = check_alternative(alternative)
    if int(b) != b or int(c) != c or b < 0 or c < 0:
        raise ValueError(f"b and c must be non-negative integers, got b={b}, c={c}")
    b, c = int(b), int(c)
    m = b + c
    if m == 0:
        return McNemarResult(b, c, 1.0, alt)
    p_ge, p_le = float(_st.binom.sf(c - 1, m, 0.5)), float(_st.binom.cdf(c, m, 0.5))
    p = {"greater": p_ge, "less": p_le, "two-sided": min(1.0, 2.0 * min(p_ge, p_le))}[alt]
    return McNemarResult(b, c, p, alt)


def mcnemar_test(
    candidate: npt.ArrayLike, baseline: npt.ArrayLike, alternative: Alternative = "greater"
) -> McNemarResult:
    """Exact McNemar from paired 0/1 outcomes (K=1, binary reward); adds ``n`` and ``diff``."""
    cand, base = as_pairs(candidate, baseline)
    if not (np.all(np.isin(cand, (0.0, 1.0))) and np.all(np.isin(base, (0.0, 1.0)))):
        raise ValueError("McNemar needs binary (0/1) outcomes in both arms")
    b = int(np.sum((base == 1) & (cand == 0)))
    c = int(np.sum((cand == 1) & (base == 0)))
    res = mcnemar_exact(b, c, alternative)
    return McNemarResult(b, c, res.p_value, res.alternative, int(cand.size), (c - b) / cand.size)


def non_inferiority(
    candidate: npt.ArrayLike,
    baseline: npt.ArrayLike,
    margin: float,
    alpha: float = 0.05,
    method: Literal["t", "bootstrap"] = "t",
    clusters: npt.ArrayLike | None = None,
    n_resamples: int = 10_000,
    seed: int | np.random.Generator = 0,
) -> NonInferiority:
    """Non-inferiority within ``margin`` (a positive number fixed before the run).

    H0: ``diff <= -margin`` (the candidate lost more than the margin). Passed iff the lower bound of
    the one-sided ``(1 - alpha)`` interval of ``diff`` is above ``-margin``. This puts the burden of
    proof on the candidate: a noisy, small suite fails, where "not significantly different" would
    wrongly pass. ``method="t"``: paired t (cluster-robust with ``clusters``); ``"bootstrap"``:
    paired (cluster) bootstrap percentile bound, seeded.
    """
    if not (math.isfinite(margin) and margin >= 0):
        raise ValueError(f"margin must be a finite number >= 0, got {margin}")
    if not 0.0 < alpha < 0.5:
        raise ValueError(f"alpha must be in (0, 0.5), got {alpha}")
    if method == "t":
        res = paired_t_test(candidate, baseline, "greater", 1.0 - alpha, clusters)
    elif method == "bootstrap":
        res = _boot.paired_bootstrap(
            candidate, baseline, "greater", 1.0 - alpha, n_resamples, seed, clusters
        )
    else:
        raise ValueError(f"method must be 't' or 'bootstrap', got {method!r}")
    passed = bool(res.lower > -margin)
    return NonInferiority(res.diff, res.lower, float(margin), alpha, passed, res.method, res.n)


def intersection_union(results: Mapping[str, NonInferiority | bool]) -> IntersectionUnion:
    """Overall pass iff every suite passed, and which failed.

    Intersection-union test: the claim "no suite regressed" is the intersection of the per-suite
    claims, so it holds at level alpha with each suite tested at alpha and no multiplicity
    correction; the price is power (each suite needs ~0.93-0.96 for ~0.8 overall). An empty set of
    suites is an error, not a vacuous pass.
    """
    if not results:
        raise ValueError("intersection_union needs at least one suite")
    ok = {name: r if isinstance(r, bool) else r.passed for name, r in results.items()}
    failed = tuple(name for name, p in ok.items() if not p)
    return IntersectionUnion(not failed, failed, tuple(ok))


def _check_nck(n: int, c: int, k: int) -> None:
    if any(int(v) != v for v in (n, c, k)):
        raise ValueError(f"n, c, k must be integers, got n={n}, c={c}, k={k}")
    if n < 1 or not 0 <= c <= n:
        raise ValueError(f"need n >= 1 and 0 <= c <= n, got n={n}, c={c}")
    if not 1 <= k <= n:
        raise ValueError(f"need 1 <= k <= n, got k={k} with n={n}")


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k of one task from ``c`` successes in ``n`` attempts: ``1 - C(n-c,k)/C(n,k)``.

    The chance that at least one of k attempts drawn without replacement from the n succeeds;
    unbiased for the true pass@k, unlike ``1 - (1 - c/n)^k``. Exact integer binomials.
    """
    _check_nck(n, c, k)
    return 1.0 - math.comb(int(n) - int(c), int(k)) / math.comb(int(n), int(k))


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Unbiased pass^k (all k attempts succeed) of one task: ``C(c,k)/C(n,k)``.

    Reliability rather than luck: the chance that k attempts drawn without replacement from the n
    all succeed, unbiased for ``p^k``.
    """
    _check_nck(n, c, k)
    return math.comb(int(c), int(k)) / math.comb(int(n), int(k))


def pass_k_summary(n: npt.ArrayLike, c: npt.ArrayLike, k: int) -> PassK:
    """pass@k and pass^k per task (``n[j]`` attempts, ``c[j]`` successes) and their task average."""
    ns, cs = np.atleast_1d(np.asarray(n)), np.atleast_1d(np.asarray(c))
    if ns.ndim != 1 or ns.size == 0 or ns.shape != cs.shape:
        raise ValueError(
            f"n and c must be non-empty 1-D of equal length, got {ns.shape}, {cs.shape}"
        )
    pairs = list(zip(ns.tolist(), cs.tolist(), strict=True))
    at = tuple(pass_at_k(a, b, k) for a, b in pairs)
    hat = tuple(pass_hat_k(a, b, k) for a, b in pairs)
    return PassK(int(k), float(np.mean(at)), float(np.mean(hat)), at, hat, len(at))


def _z_sum(alpha: float, power: float) -> float:
    if not (0.0 < alpha < 1.0 and 0.0 < power < 1.0):
        raise ValueError(f"alpha and power must be in (0, 1), got {alpha}, {power}")
    return float(_st.norm.ppf(1.0 - alpha) + _st.norm.ppf(power))


def minimum_detectable_effect(
    sigma_d: float, n: int, alpha: float = 0.05, power: float = 0.8
) -> float:
    """Smallest true mean difference a one-sided level-alpha paired test finds with ``power``.

    ``MDE = (z_{1-alpha} + z_{power}) sigma_d / sqrt(n)`` (2.49 sigma_d / sqrt(n) at 0.05/0.8): the
    test rejects when ``mean(d) > z_{1-alpha} SE``, and that happens with probability ``power``
    when the truth sits ``z_{power} SE`` further out. A claimed gain below the MDE is underpowered.
    """
    if not (math.isfinite(sigma_d) and sigma_d >= 0):
        raise ValueError(f"sigma_d must be finite and >= 0, got {sigma_d}")
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    return _z_sum(alpha, power) * sigma_d / math.sqrt(n)


def non_inferiority_sample_size(
    sigma_d: float, margin: float, alpha: float = 0.05, power: float = 0.8
) -> int:
    """Items needed for a non-inferiority test: ``ceil((z_{1-a} + z_{power})^2 sigma_d^2 / m^2)``.

    The MDE formula solved for n with ``MDE = margin``, assuming the true difference is 0; if the
    candidate is truly a little worse, more items are needed.
    """
    if not (math.isfinite(sigma_d) and sigma_d >= 0):
        raise ValueError(f"sigma_d must be finite and >= 0, got {sigma_d}")
    if not (math.isfinite(margin) and margin > 0):
        raise ValueError(f"margin must be finite and > 0, got {margin}")
    n = (_z_sum(alpha, power) * sigma_d / margin) ** 2
    return max(1, math.ceil(n - 1e-9))
