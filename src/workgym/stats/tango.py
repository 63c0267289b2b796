"""Tango's score statistic for a paired difference of 0/1 outcomes, and its asymptotic interval.

Tango (1998): the score test of ``H0: pi+ - pi- = delta`` from the discordant pairs ``x``
(candidate-only) and ``y`` (baseline-only) of ``n``, with ``pi-`` at its restricted maximum
likelihood. The exact test (:mod:`workgym.stats.exact_paired`) uses the statistic to order
outcomes; the graded non-inferiority bound (:mod:`workgym.stats.proportions`) uses the interval on
fractional discordance. Its own module so both can import it without a cycle.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from workgym.stats.results import FloatArray

_BISECT_STEPS = 60


def tango_z(x: FloatArray, y: FloatArray, n: FloatArray, delta: FloatArray) -> FloatArray:
    """Tango's score statistic for ``H0: pi+ - pi- = delta`` (elementwise).

    ``pi-`` is its maximum-likelihood value under H0 (the root of
    ``2n q^2 + (-(x+y) + (2n - x + y) delta) q - y delta (1 - delta) = 0``), and
    ``Z = (x - y - n delta) / sqrt(n (2 q + delta - delta^2))``; decreasing in ``delta``.
    """
    a = 2.0 * n
    b = -(x + y) + (2.0 * n - x + y) * delta
    c = -y * delta * (1.0 - delta)
    q = (-b + np.sqrt(np.maximum(b * b - 4.0 * a * c, 0.0))) / (2.0 * a)
    var = n * (2.0 * q + delta - delta * delta)
    num = x - y - n * delta
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(var > 1e-15, num / np.sqrt(np.maximum(var, 1e-300)), np.sign(num) * np.inf)
    return np.asarray(z, float)


def tango_bounds(
    x: npt.ArrayLike, y: npt.ArrayLike, n: npt.ArrayLike, z: float
) -> tuple[FloatArray, FloatArray]:
    """The ``delta`` where Tango's Z equals ``+z`` (lower bound) and ``-z`` (upper), by bisection.

    For a one-sided ``(1 - alpha)`` bound pass ``z = z_{1-alpha}``; for a two-sided
    ``confidence`` interval ``z = z_{(1+confidence)/2}``.
    """
    xs, ys, ns = (np.asarray(v, float) for v in (x, y, n))
    xs, ys, ns = np.broadcast_arrays(xs, ys, ns)
    est = (xs - ys) / ns

    def solve(lo: FloatArray, hi: FloatArray, target: float) -> FloatArray:
        # invariant: Z(lo) >= target >= Z(hi)
        for _ in range(_BISECT_STEPS):
            mid = (lo + hi) / 2.0
            above = tango_z(xs, ys, ns, mid) >= target
            lo, hi = np.where(above, mid, lo), np.where(above, hi, mid)
        return (lo + hi) / 2.0

    lower = solve(np.full_like(est, -1.0), est.copy(), z)
    upper = solve(est.copy(), np.full_like(est, 1.0), -z)
    return np.clip(lower, -1.0, est), np.clip(upper, est, 1.0)
