"""Result types and input checks shared by the certificate statistics.

Every result is a frozen dataclass of plain Python numbers, so it can be compared, hashed and
written to ``certificate.json`` as it is. Interval ends that do not exist (the open side of a
one-sided interval) are ``inf``/``-inf``, as in ``scipy.stats``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt
from scipy import stats as _st

Alternative = Literal["greater", "less", "two-sided"]
"""``greater``: the candidate (first arm) is better; ``less``: worse; ``two-sided``: different."""

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class MeanEstimate:
    """A mean with its standard error and a two-sided confidence interval."""

    mean: float
    se: float
    lower: float
    upper: float
    confidence: float
    n: int
    method: str
    n_clusters: int | None = None


@dataclass(frozen=True)
class PairedTest:
    """A paired comparison, ``diff = mean(candidate - baseline)``.

    ``lower``/``upper`` bound the interval that matches ``alternative`` (one-sided intervals have an
    infinite end). ``correlation`` is Pearson's r between the arms (``nan`` when an arm is
    constant); a high r is why pairing gains power.
    """

    diff: float
    se: float
    lower: float
    upper: float
    p_value: float
    alternative: Alternative
    confidence: float
    correlation: float
    n: int
    method: str
    statistic: float = math.nan
    n_clusters: int | None = None


@dataclass(frozen=True)
class McNemarResult:
    """Exact McNemar: ``b`` = baseline-only wins, ``c`` = candidate-only wins."""

    b: int
    c: int
    p_value: float
    alternative: Alternative
    n: int | None = None
    diff: float | None = None
    method: str = "mcnemar_exact"


@dataclass(frozen=True)
class SignFlipResult:
    """Sign-flip permutation test of ``mean(d) = 0`` against a symmetric null."""

    diff: float
    p_value: float
    alternative: Alternative
    n: int
    exact: bool
    n_resamples: int
    method: str = "sign_flip"


@dataclass(frozen=True)
class NonInferiority:
    """Non-inferiority of the candidate within ``margin``: passed iff ``lower > -margin``."""

    diff: float
    lower: float
    margin: float
    alpha: float
    passed: bool
    method: str
    n: int


@dataclass(frozen=True)
class IntersectionUnion:
    """Intersection-union over suites: ``passed`` only if every suite passed."""

    passed: bool
    failed: tuple[str, ...]
    suites: tuple[str, ...]


@dataclass(frozen=True)
class PassK:
    """Unbiased pass@k and pass^k, per task and averaged over tasks (equal weight per task)."""

    k: int
    pass_at_k: float
    pass_hat_k: float
    per_task_pass_at_k: tuple[float, ...]
    per_task_pass_hat_k: tuple[float, ...]
    n_tasks: int


def as_scores(x: npt.ArrayLike, name: str = "scores", min_n: int = 1) -> FloatArray:
    """A finite 1-D float array of at least ``min_n`` values, else a ValueError saying why."""
    a = np.asarray(x, dtype=np.float64)
    if a.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {a.shape}")
    if a.size == 0:
        raise ValueError(f"{name} is empty")
    if a.size < min_n:
        raise ValueError(f"{name} needs at least {min_n} values, got {a.size}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} contains NaN or inf")
    return a


def as_pairs(
    candidate: npt.ArrayLike, baseline: npt.ArrayLike, min_n: int = 1
) -> tuple[FloatArray, FloatArray]:
    """Both arms as float arrays of equal length (pairs are matched by position)."""
    cand = as_scores(candidate, "candidate", min_n)
    base = as_scores(baseline, "baseline", min_n)
    if cand.shape != base.shape:
        raise ValueError(
            f"candidate and baseline must be paired: lengths {cand.size} and {base.size} differ"
        )
    return cand, base


def cluster_codes(clusters: npt.ArrayLike, n: int) -> tuple[npt.NDArray[np.intp], int]:
    """Cluster labels (any hashable values) as codes 0..G-1, and G (which must be at least 2)."""
    labels = np.asarray(clusters)
    if labels.ndim != 1 or labels.size != n:
        raise ValueError(f"clusters must be 1-D with one label per score ({n}), got {labels.shape}")
    _, codes = np.unique(labels, return_inverse=True)
    n_clusters = int(codes.max()) + 1
    if n_clusters < 2:
        raise ValueError("clustered statistics need at least 2 clusters")
    return codes.astype(np.intp), n_clusters


def check_confidence(confidence: float) -> float:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    return float(confidence)


def check_alternative(alternative: str) -> Alternative:
    if alternative == "greater":
        return "greater"
    if alternative == "less":
        return "less"
    if alternative == "two-sided":
        return "two-sided"
    raise ValueError(f"alternative must be 'greater', 'less' or 'two-sided', got {alternative!r}")


def correlation(a: FloatArray, b: FloatArray) -> float:
    """Pearson's r, or ``nan`` when it is undefined (fewer than 2 pairs or a constant arm)."""
    if a.size < 2 or np.ptp(a) == 0.0 or np.ptp(b) == 0.0:
        return math.nan
    return float(np.corrcoef(a, b)[0, 1])


def interval(
    est: float, se: float, df: float, confidence: float, alternative: Alternative
) -> tuple[float, float]:
    """Wald interval ``est ± q se`` with the Student-t (``df`` finite) or normal quantile."""
    q_level = (1.0 + confidence) / 2.0 if alternative == "two-sided" else confidence
    q = float(_st.t.ppf(q_level, df)) if math.isfinite(df) else float(_st.norm.ppf(q_level))
    lo = est - q * se if alternative != "less" else -math.inf
    hi = est + q * se if alternative != "greater" else math.inf
    return lo, hi


def wald_p_value(stat: float, df: float, alternative: Alternative) -> float:
    """p of a t (``df`` finite) or z statistic; ``greater`` means large ``stat`` is evidence."""
    dist = _st.t(df) if math.isfinite(df) else _st.norm()
    if math.isnan(stat):
        return math.nan
    if alternative == "greater":
        return float(dist.sf(stat))
    if alternative == "less":
        return float(dist.cdf(stat))
    return float(min(1.0, 2.0 * dist.sf(abs(stat))))
