"""Exact unconditional test and bound for a paired difference of 0/1 outcomes (decision 0100).

Why: Tango's score bound is asymptotic; as the non-inferiority gate at a true loss equal to the
margin it rejected up to 6.1% of the time (bench/stats_coverage.py, n = 64, p0 = 0.5), above the
5% it promises. This module keeps Tango's statistic only as the *ordering* of outcomes and takes
its p-value exactly, the way Chan (1998) and Berger & Boos (1994) do for paired binary data:

- data: ``x`` items only the candidate solved, ``y`` only the baseline, ``n`` pairs; the counts
  ``(x, y, n - x - y)`` are multinomial with rates ``(pi+, pi-, 1 - pi+ - pi-)``;
- ``H0: delta = pi+ - pi- <= delta0``; the p-value of an outcome is the largest, over the
  nuisance ``pi-`` on the boundary ``delta = delta0`` (``pi-`` from ``max(0, -delta0)`` to
  ``(1 - delta0) / 2``), of the exact probability of an outcome whose Tango Z at ``delta0`` is at
  least the observed one. Every outcome of the n pairs is enumerated (``(n+1)(n+2)/2`` of them),
  and the supremum is taken over a grid of ``NUISANCE_GRID`` nuisance values;
- the one-sided lower bound of ``delta`` inverts the test: the largest ``delta0`` it still
  rejects, by bisection to ``BOUND_TOL``.

With no discordant pair the supremum sits at (or, at some n, within a hair of) ``pi+ = 0``, so
the bound is within 1e-4 of the Clopper-Pearson one on the loss rate, ``-(1 - alpha^(1/n))``: 0 of
32 is -0.089 (not within a 0.05 margin; ``p = 0.95^32 = 0.194`` exactly), 0 of 64 is -0.046
(within). Size never exceeds alpha (up to the grid), at the price
of a little power against the asymptotic test.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import numpy.typing as npt
from scipy import special as _sp
from scipy import stats as _st

from workgym.stats.results import FloatArray
from workgym.stats.tango import tango_bounds, tango_z

NUISANCE_GRID = 400
BOUND_TOL = 1e-4


@lru_cache(maxsize=16)
def _outcomes(n: int) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Every outcome ``(x, y)`` of n pairs and its log multinomial coefficient."""
    xs, ys = np.meshgrid(np.arange(n + 1.0), np.arange(n + 1.0), indexing="ij")
    keep = xs + ys <= n
    x, y = xs[keep], ys[keep]
    logc = (
        _sp.gammaln(n + 1.0) - _sp.gammaln(x + 1) - _sp.gammaln(y + 1) - _sp.gammaln(n - x - y + 1)
    )
    return x, y, logc


def _tango_z(x: FloatArray, y: FloatArray, n: float, delta: float) -> FloatArray:
    return tango_z(x, y, np.full_like(x, n), np.full_like(x, delta))


def _check_n(n: int) -> int:
    if int(n) != n or n < 1:
        raise ValueError(f"n must be a positive integer, got {n}")
    return int(n)


@lru_cache(maxsize=64)
def _pvalue_table(n: int, delta0: float) -> npt.NDArray[np.float64]:
    """Exact p-value of every outcome for ``H0: delta <= delta0``, as an ``(n+1) x (n+1)`` table
    indexed ``[x, y]`` (NaN where ``x + y > n``)."""
    x, y, logc = _outcomes(n)
    z = np.round(_tango_z(x, y, float(n), delta0), 10)
    order = np.argsort(-z, kind="stable")
    zs = -z[order]
    # index of the last outcome whose Z ties with (or beats) each outcome's Z
    last = np.searchsorted(zs, -z, side="right") - 1
    best = np.zeros_like(x)
    rest = n - x - y
    for pm in _nuisance(delta0):
        pp = pm + delta0
        pt = max(0.0, 1.0 - pp - pm)
        logp = logc + _sp.xlogy(x, pp) + _sp.xlogy(y, pm) + _sp.xlogy(rest, pt)
        tail = np.cumsum(np.exp(logp)[order])
        np.maximum(best, tail[last], out=best)
    table = np.full((n + 1, n + 1), np.nan)
    table[x.astype(int), y.astype(int)] = np.minimum(best, 1.0)
    return table


def _key(delta0: float) -> float:
    return round(float(delta0), 12)


def _nuisance(delta0: float) -> FloatArray:
    """The grid of ``pi-`` on the boundary ``pi+ - pi- = delta0``."""
    return np.linspace(max(0.0, -delta0), (1.0 - delta0) / 2.0, NUISANCE_GRID)


def p_value(x: int, y: int, n: int, delta0: float) -> float:
    """Exact unconditional one-sided p for ``H0: pi+ - pi- <= delta0`` (candidate better than
    ``delta0``) from ``x`` candidate-only and ``y`` baseline-only pairs of ``n``. Equal to the
    table :func:`rejects` reads, computed for one outcome only."""
    n = _check_n(n)
    if not (x >= 0 and y >= 0 and x + y <= n and int(x) == x and int(y) == y):
        raise ValueError(f"need integers 0 <= x, y with x + y <= n, got x={x}, y={y}, n={n}")
    if not -1.0 < delta0 < 1.0:
        raise ValueError(f"delta0 must be in (-1, 1), got {delta0}")
    delta0 = _key(delta0)
    xa, ya, logc = _outcomes(n)
    z = np.round(_tango_z(xa, ya, float(n), delta0), 10)
    z_obs = z[int(x) * (n + 1) - int(x) * (int(x) - 1) // 2 + int(y)]
    keep = z >= z_obs
    pm = _nuisance(delta0)[:, None]
    pp = pm + delta0
    # Fast path: for each count y' of baseline-only pairs, the outcomes as extreme as the
    # observed one are x' >= t(y') (Tango's Z grows with x'), so the tail is
    # sum_y' P(Y = y') P(X >= t(y') | Y = y'), two binomials: O(n) per nuisance value, not O(n^2).
    grid = np.zeros((n + 1, n + 1), bool)
    grid[xa.astype(int), ya.astype(int)] = keep
    counts = grid.sum(axis=0)
    first = np.argmax(grid, axis=0)
    cols = np.flatnonzero(counts)
    if np.array_equal(counts[cols], n - cols - first[cols] + 1):
        ycol, tx = cols[None, :].astype(float), first[cols][None, :].astype(float)
        with np.errstate(divide="ignore", invalid="ignore"):
            cond = np.clip(np.where(pm < 1.0, pp / (1.0 - pm), 0.0), 0.0, 1.0)
        tail = _st.binom.pmf(ycol, n, pm) * _st.binom.sf(tx - 1.0, n - ycol, cond)
        return float(min(1.0, tail.sum(axis=1).max()))
    xs, ys, lc = xa[keep], ya[keep], logc[keep]
    pt = np.maximum(0.0, 1.0 - 2.0 * pm - delta0)
    logp = lc + _sp.xlogy(xs, pp) + _sp.xlogy(ys, pm) + _sp.xlogy(n - xs - ys, pt)
    return float(min(1.0, np.exp(logp).sum(axis=1).max()))


def rejects(
    x: npt.ArrayLike, y: npt.ArrayLike, n: int, delta0: float, alpha: float
) -> npt.NDArray[np.bool_]:
    """Elementwise: does the exact test reject ``H0: delta <= delta0`` at ``alpha``? (One table
    per ``(n, delta0)``, cached, so thousands of simulated data sets cost one computation.)"""
    n = _check_n(n)
    table = _pvalue_table(n, _key(delta0))
    xi, yi = np.rint(np.asarray(x, float)).astype(int), np.rint(np.asarray(y, float)).astype(int)
    return np.asarray(table[xi, yi] <= alpha)


def lower_bound(x: int, y: int, n: int, alpha: float = 0.05) -> float:
    """One-sided ``(1 - alpha)`` exact lower bound of ``pi+ - pi-``: the largest ``delta0`` the
    exact test still rejects, by bisection to ``BOUND_TOL`` (the bracket starts around Tango's
    asymptotic bound and widens until it holds); -1 when it rejects none."""
    n = _check_n(n)
    if not 0.0 < alpha < 0.5:
        raise ValueError(f"alpha must be in (0, 0.5), got {alpha}")
    est = (x - y) / n
    tango = float(tango_bounds(x, y, n, float(_st.norm.ppf(1.0 - alpha)))[0])

    def rej(d: float) -> bool:
        return d <= -1.0 or (d < 1.0 and p_value(x, y, n, d) <= alpha)

    lo, hi = max(-1.0, tango - 0.02), min(est, tango + 0.01)
    while not rej(lo):
        lo = max(-1.0, lo - 0.1)
    while hi < est and rej(hi):
        hi = min(est, hi + 0.05)
    if rej(hi):  # rejects even at the estimate
        return hi
    while hi - lo > BOUND_TOL:
        mid = (lo + hi) / 2.0
        lo, hi = (mid, hi) if rej(mid) else (lo, mid)
    return lo


def upper_bound(x: int, y: int, n: int, alpha: float = 0.05) -> float:
    """One-sided ``(1 - alpha)`` exact upper bound of ``pi+ - pi-`` (the lower bound of the
    arms swapped)."""
    return -lower_bound(y, x, n, alpha)


def cp_items_to_show(margin: float, alpha: float = 0.05) -> int:
    """Fewest items whose Clopper-Pearson all-tie bound ``-(1 - alpha^(1/n))`` is above
    ``-margin``: ``n > ln(alpha) / ln(1 - m)`` (59 at margin 0.05, alpha 0.05). The exact count
    (:func:`workgym.stats.proportions.items_to_show`) is searched from here."""
    if not 0.0 < margin < 1.0:
        raise ValueError(f"margin must be in (0, 1), got {margin}")
    return math.floor(math.log(alpha) / math.log(1.0 - margin)) + 1
