"""The family-level test: a sign-flip randomization test over family mean differences.

A claim about *new families* of a job has the family as its unit, so the evidence is G numbers,
one mean difference per held-out family, however many items each has. With few families the
cluster-robust t is degenerate (at G = 4 with the effect in one family CR1's t is exactly 1
whatever the effect), so the test here is exact: under "the arms are exchangeable" each family's
mean difference is as likely to have the other sign, and the p-value counts the ``2^G`` sign
patterns whose sum is at least the observed one. Its smallest attainable one-sided p is
``2^-G`` (1/16 at G = 4): a family gate with ``2^-G > alpha`` cannot pass on any data, and says so.

The interval inverts the same test (Hartigan's subset means): the one-sided ``(1 - alpha)`` lower
bound is the ``floor(alpha 2^G)``-th smallest mean over the ``2^G - 1`` non-empty subsets of
family means; it assumes the family effects are symmetric about their mean. Exact for
``G <= MAX_EXACT``; seeded Monte Carlo above (random sign patterns / subsets).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from workgym.stats.results import FloatArray

MAX_EXACT = 16


def smallest_p(n_families: int) -> float:
    """Smallest one-sided p a sign-flip test over ``n_families`` means can give: ``2^-G``."""
    return 2.0 ** -int(n_families)


def families_needed(alpha: float) -> int:
    """Fewest families whose smallest attainable p is at most ``alpha``."""
    return max(1, math.ceil(-math.log2(alpha) - 1e-12))


def family_means(d: npt.ArrayLike, families: Sequence[str]) -> tuple[list[str], FloatArray]:
    """Each family's mean of ``d``, families sorted by name."""
    ds = np.asarray(d, float)
    labels, codes = np.unique(np.asarray(list(families)), return_inverse=True)
    sums = np.bincount(codes, weights=ds)
    counts = np.bincount(codes)
    return [str(x) for x in labels], sums / counts


def _patterns(g: int) -> FloatArray:
    """All ``2^g`` sign patterns as rows of +-1 (the first row all +1)."""
    idx = np.arange(2**g)[:, None]
    bits = (idx >> np.arange(g)[None, :]) & 1
    return np.asarray(1.0 - 2.0 * bits, float)


def _signs(g: int, n_resamples: int, rng: np.random.Generator) -> tuple[FloatArray, bool]:
    if g <= MAX_EXACT:
        return _patterns(g), True
    return np.asarray(rng.integers(0, 2, size=(n_resamples, g)) * 2.0 - 1.0, float), False


def sign_flip_p(
    means: npt.ArrayLike, n_resamples: int = 20_000, seed: int | np.random.Generator = 0
) -> tuple[FloatArray, bool]:
    """One-sided (candidate better) p of the sign-flip test, for each row of ``means``.

    Exact: ``#{s: s.m >= sum m} / 2^G``; Monte Carlo: ``(1 + #) / (B + 1)``, the random sign
    patterns drawn in chunks so memory stays bounded whatever B and G.
    """
    m = np.atleast_2d(np.asarray(means, float))
    rows, g = m.shape
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    exact = g <= MAX_EXACT
    total = 2**g if exact else int(n_resamples)
    obs = m.sum(axis=1)
    tol = 1e-9 * np.maximum(1.0, np.abs(m).sum(axis=1))
    count = np.zeros(rows)
    step = max(1, 4_000_000 // max(g, rows))
    for start in range(0, total, step):
        stop = min(total, start + step)
        if exact:
            idx = np.arange(start, stop)[:, None]
            signs = 1.0 - 2.0 * ((idx >> np.arange(g)[None, :]) & 1)
        else:
            signs = rng.integers(0, 2, size=(stop - start, g)) * 2.0 - 1.0
        count += (signs @ m.T >= obs - tol).sum(axis=0)
    p = count / total if exact else (count + 1.0) / (total + 1.0)
    return np.asarray(p, float), exact


def _subset_means(means: FloatArray, signs: FloatArray) -> FloatArray:
    """Means over the flipped set of each sign pattern (the all-+1 pattern excluded)."""
    flipped = signs < 0
    k = flipped.sum(axis=1)
    keep = k > 0
    return np.asarray((flipped[keep] @ means) / k[keep], float)


def sign_flip_bounds(
    means: npt.ArrayLike,
    alpha: float,
    n_resamples: int = 20_000,
    seed: int | np.random.Generator = 0,
) -> tuple[float, float]:
    """Lower and upper one-sided ``(1 - alpha)`` bounds of the mean of family means, each the
    inversion of the sign-flip test; ``-inf``/``inf`` when ``alpha 2^G < 1``."""
    m = np.asarray(means, float)
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    signs, _ = _signs(m.size, min(int(n_resamples), 20_000), rng)
    subs = np.sort(_subset_means(m, signs))
    j = math.floor(alpha * (subs.size + 1) + 1e-9)
    if j < 1:
        return -math.inf, math.inf
    return float(subs[j - 1]), float(subs[subs.size - j])


@dataclass(frozen=True)
class FamilyTest:
    """The family-level result: mean over families of the per-family mean difference."""

    diff: float
    p_value: float
    lower: float
    ci95: tuple[float, float]
    alpha: float
    n_families: int
    smallest_p: float
    passable: bool
    exact: bool
    family_diffs: tuple[float, ...]
    method: str = "sign_flip_families"


def family_test(
    d: npt.ArrayLike,
    families: Sequence[str],
    alpha: float = 0.05,
    n_resamples: int = 20_000,
    seed: int | np.random.Generator = 0,
) -> FamilyTest:
    """Sign-flip test and interval over family means of ``d`` (module docstring)."""
    if not 0.0 < alpha < 0.5:
        raise ValueError(f"alpha must be in (0, 0.5), got {alpha}")
    _, means = family_means(d, families)
    g = int(means.size)
    if g < 2:
        raise ValueError(f"a family-level test needs at least 2 families, got {g}")
    p, exact = sign_flip_p(means, n_resamples, seed)
    lower, _ = sign_flip_bounds(means, alpha, n_resamples, seed)
    lo95, hi95 = sign_flip_bounds(means, 0.025, n_resamples, seed)
    return FamilyTest(
        diff=float(means.mean()),
        p_value=float(p[0]),
        lower=lower,
        ci95=(lo95, hi95),
        alpha=alpha,
        n_families=g,
        smallest_p=smallest_p(g),
        passable=smallest_p(g) <= alpha,
        exact=exact,
        family_diffs=tuple(float(x) for x in means),
    )
