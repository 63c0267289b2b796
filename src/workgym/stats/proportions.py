"""Intervals for a rate and bounds for a paired difference that respect the [0, 1] scale.

Why not ``mean ± t SE``: on 0/1 rewards the Wald interval leaves [0, 1] (2 of 32 gives
[-0.026, 0.151]) and, worse, collapses to a point when every outcome is the same (0 of 32 gives
[0, 0]), so "no variance" reads as "certain". The methods here never do either:

- one rate: Wilson's score interval (``wilson``) and the exact Clopper-Pearson interval
  (``clopper_pearson``), for binary rewards with one outcome per task;
- a paired difference ``mean(candidate - baseline)`` of 0/1 outcomes: the exact unconditional
  bound (:mod:`workgym.stats.exact_paired`, decision 0100) from the discordant pairs ``x``
  (candidate-only wins) and ``y`` (baseline-only), ordered by Tango's score statistic (Tango 1998);
  with no discordant pair in n items its one-sided bound is ``-(1 - alpha^(1/n))``, not 0 (Tango's
  asymptotic bound, ``-z^2 / (n + z^2)``, was slightly liberal as a gate: size up to 0.061);
- the same difference of graded rewards in [0, 1] (K epochs averaged, partial credit): Tango's
  interval with fractional discordance ``x = sum max(d_i, 0)``, ``y = sum max(-d_i, 0)``
  (``bounded_score``). It is conservative: its variance ``pi+ + pi- - delta^2`` is the largest a
  variable on [-1, 1] with those positive and negative parts can have (``d^2 <= |d|``), so it never
  collapses when all pairs tie.

Every function takes numpy arrays and works elementwise (the design simulation calls them on
thousands of data sets at once); the scalar wrappers return the typed results.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt
from scipy import stats as _st

from workgym.stats import exact_paired
from workgym.stats.results import (
    FloatArray,
    MeanEstimate,
    NonInferiority,
    as_pairs,
    check_confidence,
)
from workgym.stats.tango import tango_bounds


def _z(level: float) -> float:
    return float(_st.norm.ppf(level))


def wilson(k: int, n: int, confidence: float = 0.95) -> MeanEstimate:
    """Wilson score interval for ``k`` successes in ``n`` trials (two-sided).

    Inverts the score test ``|p_hat - p| <= z sqrt(p (1 - p) / n)``; stays inside [0, 1] and has a
    width even at 0 or n successes. ``se`` is the binomial ``sqrt(p_hat (1 - p_hat) / n)``.
    """
    lo, hi = wilson_bounds(np.asarray(k, float), np.asarray(n, float), confidence)
    p = k / n
    return MeanEstimate(
        float(p), math.sqrt(p * (1 - p) / n), float(lo), float(hi), confidence, int(n), "wilson"
    )


def wilson_bounds(
    k: npt.ArrayLike, n: npt.ArrayLike, confidence: float = 0.95
) -> tuple[FloatArray, FloatArray]:
    """Elementwise Wilson bounds (two-sided ``confidence``)."""
    conf = check_confidence(confidence)
    ks, ns = np.asarray(k, float), np.asarray(n, float)
    z = _z(0.5 + conf / 2.0)
    p = ks / ns
    centre = (p + z * z / (2 * ns)) / (1 + z * z / ns)
    half = z * np.sqrt(p * (1 - p) / ns + z * z / (4 * ns * ns)) / (1 + z * z / ns)
    return np.clip(centre - half, 0.0, 1.0), np.clip(centre + half, 0.0, 1.0)


def clopper_pearson(k: int, n: int, confidence: float = 0.95) -> MeanEstimate:
    """Exact (Clopper-Pearson) interval: beta quantiles; coverage at least ``confidence``."""
    lo, hi = clopper_pearson_bounds(np.asarray(k, float), np.asarray(n, float), confidence)
    p = k / n
    return MeanEstimate(
        float(p),
        math.sqrt(p * (1 - p) / n),
        float(lo),
        float(hi),
        confidence,
        int(n),
        "clopper_pearson",
    )


def clopper_pearson_bounds(
    k: npt.ArrayLike, n: npt.ArrayLike, confidence: float = 0.95, two_sided: bool = True
) -> tuple[FloatArray, FloatArray]:
    """Elementwise exact bounds; ``two_sided=False`` gives each bound at one-sided ``confidence``
    (e.g. the one-sided 95% upper bound of 0 in 32 is ``1 - 0.05^(1/32) = 0.089``)."""
    conf = check_confidence(confidence)
    tail = (1 - conf) / 2 if two_sided else 1 - conf
    ks, ns = np.asarray(k, float), np.asarray(n, float)
    with np.errstate(invalid="ignore"):
        lo = np.where(ks > 0, _st.beta.ppf(tail, ks, ns - ks + 1), 0.0)
        hi = np.where(ks < ns, _st.beta.ppf(1 - tail, ks + 1, ns - ks), 1.0)
    return np.asarray(lo, float), np.asarray(hi, float)


def discordance(d: npt.ArrayLike) -> tuple[FloatArray, FloatArray]:
    """Candidate-side and baseline-side discordance of paired differences along the last axis:
    ``sum max(d, 0)`` and ``sum max(-d, 0)`` (for 0/1 outcomes: the McNemar counts c and b)."""
    ds = np.asarray(d, float)
    return np.maximum(ds, 0.0).sum(axis=-1), np.maximum(-ds, 0.0).sum(axis=-1)


ScoreMethod = Literal["exact_unconditional", "bounded_score"]


@dataclass(frozen=True)
class PairedBound:
    """``diff = mean(candidate - baseline)`` with a score interval that cannot collapse.

    ``lower`` is the one-sided ``(1 - alpha)`` lower bound; ``ci95`` the two-sided 95% interval.
    ``x`` and ``y`` are the candidate-side and baseline-side discordance (counts when binary).
    """

    diff: float
    lower: float
    ci95: tuple[float, float]
    alpha: float
    x: float
    y: float
    n: int
    method: ScoreMethod


def is_binary(*arrays: npt.ArrayLike) -> bool:
    return all(bool(np.all(np.isin(np.asarray(a, float), (0.0, 1.0)))) for a in arrays)


def paired_bound(
    candidate: npt.ArrayLike, baseline: npt.ArrayLike, alpha: float = 0.05
) -> PairedBound:
    """Bound of the paired difference of rewards in [0, 1] (module docstring).

    Binary outcomes: the exact unconditional bounds (``exact_unconditional``; one-sided at alpha,
    and each side at 0.025 for the 95% interval). Graded ones: Tango's interval on fractional
    discordance (``bounded_score``), conservative by construction.
    """
    cand, base = as_pairs(candidate, baseline)
    if not 0.0 < alpha < 0.5:
        raise ValueError(f"alpha must be in (0, 0.5), got {alpha}")
    if np.any((cand < 0) | (cand > 1) | (base < 0) | (base > 1)):
        raise ValueError("score bounds need rewards in [0, 1]")
    x, y = discordance(cand - base)
    n = float(cand.size)
    method: ScoreMethod
    if is_binary(cand, base):
        xi, yi, ni = round(float(x)), round(float(y)), int(n)
        lo1 = exact_paired.lower_bound(xi, yi, ni, alpha)
        lo2 = exact_paired.lower_bound(xi, yi, ni, 0.025)
        hi2 = exact_paired.upper_bound(xi, yi, ni, 0.025)
        method = "exact_unconditional"
    else:
        lo1 = float(tango_bounds(x, y, n, _z(1.0 - alpha))[0])
        lo2a, hi2a = tango_bounds(x, y, n, _z(0.975))
        lo2, hi2 = float(lo2a), float(hi2a)
        method = "bounded_score"
    return PairedBound(
        float((x - y) / n),
        float(lo1),
        (float(lo2), float(hi2)),
        alpha,
        float(x),
        float(y),
        int(n),
        method,
    )


def tie_bound(n: int, alpha: float, binary: bool) -> float:
    """The one-sided lower bound when all n pairs tie: the exact one (binary; within 1e-4 of
    ``-(1 - alpha^(1/n))``, -0.089 at 32) or the bounded score one (graded, ``-z^2/(n + z^2)``)."""
    if binary:
        return exact_paired.lower_bound(0, 0, n, alpha)
    z = _z(1.0 - alpha)
    return -z * z / (n + z * z)


def items_to_show(margin: float, alpha: float, binary: bool) -> int:
    """Fewest items whose all-tie bound can clear ``-margin``: the exact test at ``-margin`` on 0
    discordant pairs (binary: 59 at margin 0.05), or ``n > z^2 (1 - m) / m`` (graded: 52)."""
    if not binary:
        z = _z(1.0 - alpha)
        return math.floor(z * z * (1.0 - margin) / margin) + 1
    n = max(1, exact_paired.cp_items_to_show(margin, alpha) - 2)
    while exact_paired.p_value(0, 0, n, -margin) > alpha:
        n += 1
    return n


def reward_interval(task_means: npt.ArrayLike, confidence: float = 0.95) -> MeanEstimate:
    """A run's mean reward with the interval its scale calls for; ``method`` says which.

    Every task mean 0 or 1 (binary rewards, one epoch): the exact Clopper-Pearson interval
    (``clopper_pearson``; Wilson's dips to ~0.92 coverage at n = 16, bench/stats_coverage.py,
    so the exact one is the default). Otherwise
    (partial credit, or K epochs averaged): the Student-t interval over task means
    (``t_over_task_means``), clipped to [0, 1]; with one task, or no spread, it is the point.
    Neither is clustered: the task is the unit.
    """
    means = np.asarray(task_means, float)
    n = int(means.size)
    if n == 0:
        raise ValueError("no task means")
    if is_binary(means):
        return clopper_pearson(int(means.sum()), n, confidence)
    from workgym.stats.tests import mean_ci

    if n < 2 or float(np.ptp(means)) == 0.0:
        m = float(means.mean())
        return MeanEstimate(m, 0.0, m, m, confidence, n, "t_over_task_means")
    est = mean_ci(means, confidence)
    return MeanEstimate(
        est.mean,
        est.se,
        max(0.0, est.lower),
        min(1.0, est.upper),
        confidence,
        n,
        "t_over_task_means",
    )


def non_inferior(
    candidate: npt.ArrayLike, baseline: npt.ArrayLike, margin: float, alpha: float = 0.05
) -> NonInferiority:
    """Non-inferiority within ``margin`` on rewards in [0, 1]: passed iff the bound of
    :func:`paired_bound` is above ``-margin`` (the certificate's suites, the playbook's "matched
    at X% of the tokens", the comparisons). Identical arms do not pass for free: with n tied
    binary pairs the bound is about ``-(1 - alpha^(1/n))``."""
    if not (math.isfinite(margin) and margin >= 0):
        raise ValueError(f"margin must be a finite number >= 0, got {margin}")
    b = paired_bound(candidate, baseline, alpha)
    return NonInferiority(b.diff, b.lower, float(margin), alpha, b.lower > -margin, b.method, b.n)
