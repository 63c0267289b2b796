"""A straight-line fit with its confidence interval: how one measured gap grows with another.

The imitation-gap experiment asks whether the teacher-forced overstatement grows with the room a
model has to fail; the answer is a slope and how sure we are of it. Ordinary least squares with
the classical standard error and a Student-t interval on ``n - 2`` degrees of freedom: few points
(families x checkpoints) make the t quantile the honest choice.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy import stats as _st


@dataclass(frozen=True)
class SlopeFit:
    """``y ≈ intercept + slope * x`` with a two-sided interval on the slope."""

    slope: float
    intercept: float
    se: float
    lower: float
    upper: float
    confidence: float
    n: int
    r_squared: float


def ols_slope(x: npt.ArrayLike, y: npt.ArrayLike, confidence: float = 0.95) -> SlopeFit:
    """Least-squares line through the points; the interval is ``nan`` with fewer than 3 points
    or no spread in x (a slope is then not estimable, and saying so beats inventing one)."""
    xs = np.asarray(x, dtype=float)
    ys = np.asarray(y, dtype=float)
    if xs.shape != ys.shape or xs.ndim != 1:
        raise ValueError("x and y must be 1-d arrays of the same length")
    if not 0 < confidence < 1:
        raise ValueError("confidence must be in (0, 1)")
    n = int(xs.size)
    nan = math.nan
    if n < 2 or float(np.ptp(xs)) == 0.0:
        return SlopeFit(nan, nan, nan, nan, nan, confidence, n, nan)
    dx = xs - xs.mean()
    sxx = float(dx @ dx)
    slope = float(dx @ (ys - ys.mean())) / sxx
    intercept = float(ys.mean() - slope * xs.mean())
    resid = ys - (intercept + slope * xs)
    sst = float(((ys - ys.mean()) ** 2).sum())
    r2 = 1.0 - float(resid @ resid) / sst if sst > 0 else nan
    if n < 3:
        return SlopeFit(slope, intercept, nan, nan, nan, confidence, n, r2)
    se = math.sqrt(float(resid @ resid) / (n - 2) / sxx)
    q = float(_st.t.ppf(0.5 + confidence / 2, n - 2))
    return SlopeFit(slope, intercept, se, slope - q * se, slope + q * se, confidence, n, r2)
