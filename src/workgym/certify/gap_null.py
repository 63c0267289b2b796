"""A test of the imitation gap that could fail: Bland-Altman, and a null built from the same data.

The old headline regressed y = tf - f (teacher-forced per-step rate minus free success) on
x = 1 - f over (family, model) cells. f enters both with a minus sign, so slope(y on x) is
identically 1 - slope(tf on f): positive for any imperfect metric, and pushed up further by
noise in f alone (cells of one or two binary tasks). A positive slope is what no overstatement
at all produces, so it cannot decide the claim.

Two things here can decide it:

- **Bland-Altman**: the difference d = tf - f against the mean of the two measures, m = (tf +
  f) / 2, the standard way to compare two measures of one quantity. Its mean difference (the
  bias) is the overstatement, with limits of agreement; its slope asks whether the gap grows with
  the level. Neither has the -f in both axes.
- **The same-data null**: a parametric bootstrap in which both measures of a cell have the same
  expectation p = (tf + f) / 2 (no overstatement anywhere) and the cell's own sizes (its tasks'
  gold step counts, its free episodes): steps and episodes are drawn Bernoulli(p) and every
  statistic (the old slope, the Bland-Altman slope and bias) is recomputed per draw. An observed
  value inside the null's range is what equal measures give; the old slope's null range shows
  how far from 0 it sits with nothing to find.

Intervals use scipy directly (a t interval on the Bland-Altman slope, n - 2 df): the statistics
package is being reworked for few-cluster methods, and cells of one family across models are
not independent, so the t interval is descriptive; the null is the test.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel
from scipy import stats as st

DRAWS = 2000
SEED = 0


@dataclass(frozen=True)
class Measures:
    """One cell as the null needs it: both rates and the sizes they were measured on."""

    tf: float
    """Teacher-forced per-step rate (mean over tasks of the task's matched share)."""
    free: float
    """Free-running success rate."""
    gold_steps: tuple[int, ...]
    """Gold steps of each task in the cell."""
    episodes: int
    """Free-running episodes in the cell."""


class AgreementFit(BaseModel):
    """Bland-Altman: d = tf - f against m = (tf + f) / 2 over every cell."""

    n_points: int
    bias: float | None
    """Mean difference: the average overstatement."""
    lower_limit: float | None
    upper_limit: float | None
    """Limits of agreement, bias -/+ 1.96 SD of the differences."""
    slope: float | None
    """OLS slope of d on m: does the gap grow with the level?"""
    slope_lower: float | None
    slope_upper: float | None
    """95% t interval on the slope (n - 2 df; descriptive, see the module docstring)."""
    intercept: float | None


class NullStat(BaseModel):
    """One statistic, observed and under the same-data null."""

    observed: float | None
    null_lower: float | None
    null_upper: float | None
    """The null's central 95% range."""
    p_two_sided: float | None
    """Share of null draws at least as far out as the observed value, doubled (max 1)."""


class NullReport(BaseModel):
    """The parametric bootstrap with equal expectations per cell."""

    draws: int
    seed: int
    estimable_draws: int
    """Draws in which every slope was estimable (some spread in f and in m)."""
    old_slope: NullStat
    """gap on (1 - f): the old headline; its null range is where no overstatement puts it."""
    agreement_slope: NullStat
    """Bland-Altman slope of d on m."""
    bias: NullStat
    """Mean of d = tf - f."""


def _none(value: float) -> float | None:
    return value if math.isfinite(value) else None


def slopes(x: npt.NDArray[np.float64], y: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """OLS slope of y on x along the last axis; nan where x has no spread."""
    dx = x - x.mean(axis=-1, keepdims=True)
    dy = y - y.mean(axis=-1, keepdims=True)
    sxx = (dx * dx).sum(axis=-1)
    sxy = (dx * dy).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        out: npt.NDArray[np.float64] = np.where(
            sxx > 1e-12, sxy / np.where(sxx > 0, sxx, 1), np.nan
        )
    return out


def old_slope(
    tf: npt.NDArray[np.float64], free: npt.NDArray[np.float64]
) -> npt.NDArray[np.float64]:
    """Slope of (tf - f) on (1 - f): the old headline, for one data set or a stack of draws."""
    return slopes(1.0 - free, tf - free)


def agreement_slope(
    tf: npt.NDArray[np.float64], free: npt.NDArray[np.float64]
) -> npt.NDArray[np.float64]:
    """Slope of (tf - f) on (tf + f) / 2."""
    return slopes((tf + free) / 2.0, tf - free)


def bland_altman(cells: list[Measures]) -> AgreementFit:
    n = len(cells)
    nan = math.nan
    if n == 0:
        return AgreementFit(
            n_points=0, bias=None, lower_limit=None, upper_limit=None, slope=None,
            slope_lower=None, slope_upper=None, intercept=None,
        )  # fmt: skip
    tf = np.array([c.tf for c in cells])
    free = np.array([c.free for c in cells])
    d, m = tf - free, (tf + free) / 2.0
    bias = float(d.mean())
    sd = float(d.std(ddof=1)) if n > 1 else nan
    slope = lower = upper = intercept = nan
    if n >= 2 and float(np.ptp(m)) > 0:
        fit = st.linregress(m, d)
        slope, intercept = float(fit.slope), float(fit.intercept)
        if n >= 3:
            q = float(st.t.ppf(0.975, n - 2))
            lower, upper = slope - q * float(fit.stderr), slope + q * float(fit.stderr)
    return AgreementFit(
        n_points=n,
        bias=bias,
        lower_limit=_none(bias - 1.96 * sd),
        upper_limit=_none(bias + 1.96 * sd),
        slope=_none(slope),
        slope_lower=_none(lower),
        slope_upper=_none(upper),
        intercept=_none(intercept),
    )


def expectations(cells: list[Measures]) -> npt.NDArray[np.float64]:
    """Each cell's common expectation: the mean of its two rates, shrunk towards the mean over
    cells so that the spread across cells is the spread of the true rates, not of the noisy
    estimates (method of moments: the estimates' variance less their mean sampling variance).
    Without shrinking, a small cell's 0 or 1 would enter the null as a certainty and the null
    would understate the old slope's range (the slope falls as the spread of f grows)."""
    raw: npt.NDArray[np.float64] = np.clip(
        np.array([(c.tf + c.free) / 2.0 for c in cells]), 0.0, 1.0
    )
    if raw.size < 2:
        return raw
    noise = np.array(
        [
            (float(np.mean([1.0 / n for n in c.gold_steps])) / len(c.gold_steps) + 1.0 / c.episodes)
            / 4.0
            for c in cells
        ]
    )
    centre = float(raw.mean())
    spread = float(raw.var(ddof=1))
    sampling = float((noise * raw * (1 - raw)).mean())
    keep = max(0.0, spread - sampling) / spread if spread > 0 else 0.0
    out: npt.NDArray[np.float64] = centre + keep * (raw - centre)
    return out


def simulate(
    cells: list[Measures], p_cells: npt.NDArray[np.float64], draws: int, rng: np.random.Generator
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """`draws` data sets of (tf, f) with the cells' sizes, both measures of cell j having the
    expectation `p_cells[j]`: every gold step and every free episode a Bernoulli draw."""
    tf = np.empty((draws, len(cells)))
    free = np.empty((draws, len(cells)))
    for j, (cell, p) in enumerate(zip(cells, p_cells, strict=True)):
        steps = np.array(cell.gold_steps, dtype=np.int64)
        tf[:, j] = (rng.binomial(steps, p, size=(draws, steps.size)) / steps).mean(axis=1)
        free[:, j] = rng.binomial(cell.episodes, p, size=draws) / cell.episodes
    return tf, free


def _stat(observed: float, null: npt.NDArray[np.float64]) -> NullStat:
    null = null[np.isfinite(null)]
    if not math.isfinite(observed) or null.size == 0:
        return NullStat(
            observed=_none(observed), null_lower=None, null_upper=None, p_two_sided=None
        )
    above = (1 + int((null >= observed - 1e-12).sum())) / (null.size + 1)
    below = (1 + int((null <= observed + 1e-12).sum())) / (null.size + 1)
    return NullStat(
        observed=observed,
        null_lower=float(np.quantile(null, 0.025)),
        null_upper=float(np.quantile(null, 0.975)),
        p_two_sided=min(1.0, 2 * min(above, below)),
    )


def same_data_null(cells: list[Measures], draws: int = DRAWS, seed: int = SEED) -> NullReport:
    """Every statistic observed, and its range when no cell overstates (see the module)."""
    cells = [c for c in cells if c.gold_steps and c.episodes > 0]
    if len(cells) < 3:  # no slope is estimable from fewer points; say so, draw nothing
        empty = NullStat(observed=None, null_lower=None, null_upper=None, p_two_sided=None)
        return NullReport(draws=0, seed=seed, estimable_draws=0, old_slope=empty,
                          agreement_slope=empty, bias=empty)  # fmt: skip
    tf = np.array([c.tf for c in cells])
    free = np.array([c.free for c in cells])
    sim_tf, sim_free = simulate(cells, expectations(cells), draws, np.random.default_rng(seed))
    null_old = old_slope(sim_tf, sim_free)
    null_agree = agreement_slope(sim_tf, sim_free)
    both = np.isfinite(null_old) & np.isfinite(null_agree)
    return NullReport(
        draws=draws,
        seed=seed,
        estimable_draws=int(both.sum()),
        old_slope=_stat(float(old_slope(tf, free)), null_old),
        agreement_slope=_stat(float(agreement_slope(tf, free)), null_agree),
        bias=_stat(float((tf - free).mean()), (sim_tf - sim_free).mean(axis=1)),
    )
