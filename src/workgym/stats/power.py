"""The design step: what a certificate of this size can detect, found by simulating it.

Before the test split is opened, a user needs to know whether the design can pass its own gate.
Closed-form power formulas assume a variance the data may not have (the old MDE printed 0 when
every pair tied), so the plan simulates the certificate itself: the held-out family sizes, K
epochs, the baseline's per-item success rates (from dev runs, or one stated rate), and the very
gate functions the certificate runs (McNemar, the sign-flip tests, the exact non-inferiority test
for binary outcomes and the bounded score bound for graded ones).

The data model, stated so a reader can disagree with it: item i's baseline succeeds with
probability ``p_i`` (drawn from the rate pool), the candidate with
``q_i = p_i + effect (1 - p_i) / (1 - mean(pool))`` (the same mean gain, never above 1), each of
the K epochs of each arm an independent Bernoulli draw. Independence given ``p_i`` is conservative
for a candidate that keeps the baseline's successes; rates read from dev runs bring the items'
real spread of difficulty. All draws are seeded and shared across effect sizes (common random
numbers), so power is monotone in the effect and the search is exact on the simulated data.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np
import numpy.typing as npt
from scipy import stats as _st

from workgym.stats import exact_paired
from workgym.stats import families as fam
from workgym.stats.proportions import discordance
from workgym.stats.results import FloatArray
from workgym.stats.tango import tango_bounds

Estimand = Literal["items", "families"]
SIGN_FLIP_RESAMPLES = 1000  # per simulated data set (Monte Carlo p; exact up to 16 units)


@dataclass(frozen=True)
class Design:
    """A certificate's size: items per held-out family, epochs, baseline rates, the estimand."""

    family_sizes: tuple[int, ...]
    epochs: int
    rates: tuple[float, ...]
    estimand: Estimand
    alpha: float = 0.05

    @property
    def n_items(self) -> int:
        return int(sum(self.family_sizes))

    @property
    def n_families(self) -> int:
        return len(self.family_sizes)

    def binary(self) -> bool:
        return self.epochs == 1


def default_estimand(n_families: int, alpha: float) -> tuple[Estimand, str]:
    """Families when a family-level sign-flip test can reach ``alpha``, items otherwise."""
    smallest = fam.smallest_p(n_families)
    if n_families >= 2 and smallest <= alpha:
        return "families", (
            f"{n_families} test families: the family-level sign-flip test can reach p = "
            f"{smallest:.2g} <= alpha {alpha:g}"
        )
    return "items", (
        f"{n_families} test families: the smallest p a family-level test can give is "
        f"{smallest:.2g} > alpha {alpha:g} (needs {fam.families_needed(alpha)}), so the claim is "
        "about these held-out items"
    )


@dataclass
class Draws:
    """Uniform draws for ``sims`` simulated certificates, reused for every effect size."""

    rate_idx: npt.NDArray[np.intp]
    u_base: FloatArray
    u_cand: FloatArray
    rng: np.random.Generator


def draws(design: Design, sims: int, seed: int) -> Draws:
    rng = np.random.default_rng(seed)
    n, k = design.n_items, design.epochs
    return Draws(
        rng.integers(0, len(design.rates), size=(sims, n)),
        rng.random((sims, n, k)),
        rng.random((sims, n, k)),
        rng,
    )


def simulate(design: Design, effect: float, dr: Draws) -> tuple[FloatArray, FloatArray]:
    """Per-item means (K epochs averaged) of baseline and candidate, ``sims x n`` each."""
    pool = np.asarray(design.rates, float)
    p = pool[dr.rate_idx]
    room = 1.0 - float(pool.mean())
    q = np.clip(p + (effect * (1.0 - p) / room if room > 0 else 0.0), 0.0, 1.0)
    base = (dr.u_base < p[..., None]).mean(axis=2)
    cand = (dr.u_cand < q[..., None]).mean(axis=2)
    return base, cand


def _codes(design: Design) -> npt.NDArray[np.intp]:
    return np.repeat(np.arange(design.n_families), design.family_sizes)


def gain_rejects(
    design: Design, base: FloatArray, cand: FloatArray, rng: np.random.Generator
) -> npt.NDArray[np.bool_]:
    """Does the certificate's gain gate reject, per simulated data set?"""
    d = cand - base
    if design.estimand == "families":
        codes = _codes(design)
        means = np.stack([d[:, codes == g].mean(axis=1) for g in range(design.n_families)], 1)
        p, _ = fam.sign_flip_p(means, SIGN_FLIP_RESAMPLES, rng)
    elif design.binary():
        c, b = discordance(d)
        p = mcnemar_p(b, c)
    else:
        p, _ = fam.sign_flip_p(d, SIGN_FLIP_RESAMPLES, rng)
    return np.asarray(p <= design.alpha)


def mcnemar_p(b: npt.ArrayLike, c: npt.ArrayLike) -> FloatArray:
    """One-sided exact McNemar p (candidate better), elementwise: ``P(Bin(b+c, 1/2) >= c)``."""
    bs, cs = np.rint(np.asarray(b, float)), np.rint(np.asarray(c, float))
    m = bs + cs
    p = np.where(m > 0, _st.binom.sf(cs - 1, np.maximum(m, 1), 0.5), 1.0)
    return np.asarray(p, float)


def lower_bounds(design: Design, base: FloatArray, cand: FloatArray) -> FloatArray:
    """The bounded score bound (graded rewards' non-inferiority bound), per data set."""
    x, y = discordance(cand - base)
    z = float(_st.norm.ppf(1.0 - design.alpha))
    lo, _ = tango_bounds(x, y, np.full_like(x, float(base.shape[1])), z)
    return lo


def ni_passes(
    design: Design, base: FloatArray, cand: FloatArray, margin: float
) -> npt.NDArray[np.bool_]:
    """Does the certificate's non-inferiority gate pass at ``margin``, per data set? Binary
    outcomes (K = 1): the exact unconditional test at ``-margin`` (one cached table of p-values
    for all data sets); graded: the bounded score bound above ``-margin``."""
    if design.binary() and margin > 0:
        x, y = discordance(cand - base)
        return exact_paired.rejects(x, y, int(base.shape[1]), -margin, design.alpha)
    return np.asarray(lower_bounds(design, base, cand) > -margin)


def power(design: Design, effect: float, sims: int = 400, seed: int = 0) -> float:
    """Share of simulated certificates whose gain gate rejects at this true mean gain."""
    dr = draws(design, sims, seed)
    return float(gain_rejects(design, *simulate(design, effect, dr), dr.rng).mean())


def detectable_gain(
    design: Design, target_power: float = 0.8, sims: int = 400, seed: int = 0
) -> float | None:
    """Smallest mean gain the gate finds with ``target_power`` (to 0.005); None if none can."""
    if design.estimand == "families" and fam.smallest_p(design.n_families) > design.alpha:
        return None
    dr = draws(design, sims, seed)
    top = 1.0 - float(np.mean(design.rates))

    def ok(effect: float) -> bool:
        rng = np.random.default_rng(seed + 1)
        return float(gain_rejects(design, *simulate(design, effect, dr), rng).mean()) >= (
            target_power
        )

    if top <= 0 or not ok(top):
        return None
    lo, hi = 0.0, top
    while hi - lo > 0.005:
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi


def showable_margin(
    design: Design, target_power: float = 0.8, sims: int = 400, seed: int = 0
) -> float:
    """Smallest non-inferiority margin shown with ``target_power`` when nothing changed: the
    largest regression this design can rule out (bisection to 0.001 for binary outcomes)."""
    dr = draws(design, sims, seed)
    base, cand = simulate(design, 0.0, dr)
    if not design.binary():
        return float(np.quantile(-lower_bounds(design, base, cand), target_power))
    lo, hi = 0.0, 0.999
    if float(np.mean(ni_passes(design, base, cand, hi))) < target_power:
        return 1.0
    while hi - lo > 0.001:
        mid = round((lo + hi) / 2, 4)
        ok = float(np.mean(ni_passes(design, base, cand, mid))) >= target_power
        lo, hi = (lo, mid) if ok else (mid, hi)
    return hi


def scaled(design: Design, n_items: int) -> Design:
    """The design with ``n_items`` spread over the same families (sizes in proportion)."""
    g = design.n_families
    if design.estimand == "families":
        g = max(g, 2)
    base = np.asarray(design.family_sizes, float)
    sizes = np.maximum(1, np.floor(base / base.sum() * n_items)).astype(int)
    rem = n_items - int(sizes.sum())
    if rem > 0:
        sizes[np.arange(rem) % g] += 1
    return replace(design, family_sizes=tuple(int(s) for s in sizes))


def with_families(design: Design, n_families: int) -> Design:
    """The design with ``n_families`` families of its mean family size."""
    size = max(1, round(design.n_items / design.n_families))
    return replace(design, family_sizes=(size,) * n_families)


def smallest_size(ok: Callable[[int], bool], start: int, cap: int) -> int | None:
    """Smallest size from ``start`` with ``ok`` (power reached), or None if ``cap`` fails: doubling
    from ``start``, then bisection below the first size that passed, to ``max(1, lo // 50)``
    (exact below 100). The one search behind :func:`needed` and :func:`epochs_needed`; ``ok`` is
    a seeded simulation, so each size is simulated once."""
    ok = functools.cache(ok)
    hi = start
    while not ok(hi):
        if hi >= cap:
            return None
        hi = min(cap, hi * 2)
    lo = max(start, hi // 2)
    if lo == hi or ok(lo):
        return lo
    while hi - lo > max(1, lo // 50):
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi


def needed(
    design: Design,
    effect: float,
    target_power: float = 0.8,
    sims: int = 400,
    seed: int = 0,
    cap: int = 4096,
) -> int | None:
    """Items (estimand items) or families (estimand families) for ``target_power`` at
    ``effect``; None above ``cap``."""
    by_family = design.estimand == "families"
    start = max(fam.families_needed(design.alpha), 2) if by_family else max(2, design.n_families)
    grow = with_families if by_family else scaled
    return smallest_size(
        lambda size: power(grow(design, size), effect, sims, seed) >= target_power, start, cap
    )


def epochs_needed(
    design: Design,
    effect: float,
    target_power: float = 0.8,
    sims: int = 400,
    seed: int = 0,
    cap: int = 64,
) -> int | None:
    """Epochs K (repeated attempts per item, the items fixed) for ``target_power`` at ``effect``;
    None above ``cap``. The search of :func:`needed`, from K = 1. More epochs average away each
    item's sampling noise but not the items' own spread, so some designs never get there; the
    K = 1 gate (exact McNemar) differs from the K > 1 one (sign-flip over items), so the search
    reports the first K of the doubling that reaches power and bisects below it."""
    if design.estimand == "families" and fam.smallest_p(design.n_families) > design.alpha:
        return None
    return smallest_size(
        lambda k: power(replace(design, epochs=k), effect, sims, seed) >= target_power, 1, cap
    )


def mc_error(p: float, sims: int) -> float:
    """Monte Carlo standard error of a simulated share."""
    return math.sqrt(max(p * (1 - p), 1e-12) / sims)
