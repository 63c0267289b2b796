"""The certificate's statistics by simulation: interval coverage, gate size, gate power.

Default (issue 33): for 4, 8, 16, 32 test families, 16/64/400 items and baseline rates
0.1/0.3/0.5 (binary rewards, K = 1), simulated with workgym.stats.power (the plan's own data
model), it prints the coverage of each 95% interval (Wilson and Clopper-Pearson for a rate,
Tango's score interval and the exact unconditional interval for the paired difference, the
sign-flip interval over family means), the type-I error of each gate under no effect (McNemar
over items, the family sign-flip test, the non-inferiority gate at a true loss of exactly the
margin 0.05: the exact test the certificate uses, and Tango's bound as it was before decision
0100; and that gate's size computed exactly, no Monte Carlo, at n = 16/32/64/400), and the power
of the gain gates at effects 0.1/0.2/0.3; then graded rewards (K = 4: the bounded score
interval and the item sign-flip gate). '±' is the Monte Carlo standard error of each share.

    PYTHONPATH=src python bench/stats_coverage.py [--seed 0] [--sims 1500] [--with-old]
    PYTHONPATH=src python bench/stats_coverage.py --recheck-sims 20000 [--seed 0] [--sims 1500]

`--with-old` adds the earlier section (CLT, paired t, clustered and bootstrap intervals).
`--recheck-sims B` runs only the gates' sizes: it re-reads every size cell at `--sims` (the same
draws as the table), and re-simulates with B certificates (same seed) each cell whose reading
plus two Monte Carlo standard errors reaches above 0.05, printing both readings with their errors.
A script that prints numbers, not a test.
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable, Iterator
from functools import partial
from typing import Literal

import numpy as np
from scipy import special as _sp
from scipy import stats as _st

from workgym.stats import exact_paired, proportions
from workgym.stats import families as fam
from workgym.stats import power as sim
from workgym.stats.bootstrap import cluster_bootstrap_ci
from workgym.stats.results import MeanEstimate, PairedTest
from workgym.stats.tango import tango_bounds
from workgym.stats.tests import clustered_mean_ci, mean_ci, paired_t_test

Interval = MeanEstimate | PairedTest


def reward_pairs(
    rng: np.random.Generator, n: int, gain: float = 0.1, k: int = 4
) -> tuple[np.ndarray, np.ndarray]:
    """Per-item scores like the certificate's: mean of K Bernoulli epochs, difficulty p ~ U(0, .8).

    Baseline succeeds with p, candidate with p + gain: true mean 0.4, true difference ``gain``.
    """
    p = rng.uniform(0.0, 0.8, size=n)
    return rng.binomial(k, p + gain) / k, rng.binomial(k, p) / k


def clustered_scores(rng: np.random.Generator, n_clusters: int) -> tuple[np.ndarray, np.ndarray]:
    """Families of 2-10 items; score = 0.4 + family effect N(0, 0.5^2) + item noise N(0, 1)."""
    sizes = rng.integers(2, 11, size=n_clusters)
    labels = np.repeat(np.arange(n_clusters), sizes)
    y = 0.4 + np.repeat(rng.normal(0.0, 0.5, n_clusters), sizes) + rng.normal(size=labels.size)
    return y, labels


def coverage(
    name: str, truth: float, intervals: Iterator[Interval], reps: int, detail: str
) -> None:
    start = time.perf_counter()
    hits = sum(iv.lower <= truth <= iv.upper for iv in intervals)
    cov = hits / reps
    mc_se = math.sqrt(cov * (1 - cov) / reps)
    secs = time.perf_counter() - start
    print(f"{name:<34} {cov:6.3f} ± {mc_se:.3f}   datasets={reps:<5} {detail}  ({secs:.1f}s)")


def run(seed: int, reps: int, boot_reps: int, n_boot: int) -> None:
    def fresh(offset: int) -> np.random.Generator:
        return np.random.default_rng([seed, offset])

    print(f"seed={seed}; nominal coverage 0.95; '±' is the Monte Carlo standard error\n")

    for n in (15, 60):
        dists: tuple[Literal["t", "normal"], ...] = ("t", "normal")
        for dist in dists:
            rng = fresh(n)
            gen = (mean_ci(reward_pairs(rng, n)[1], dist=dist) for _ in range(reps))
            coverage(f"CLT mean CI ({dist})", 0.4, gen, reps, f"n={n} items, K=4 rewards")

    for n in (15, 60):
        rng = fresh(100 + n)
        gen2 = (paired_t_test(*reward_pairs(rng, n), "two-sided") for _ in range(reps))
        coverage("paired t CI of the difference", 0.1, gen2, reps, f"n={n} items, K=4 rewards")

    variants: list[tuple[str, Callable[[np.ndarray, np.ndarray], Interval]]] = [
        ("clustered CI (CR1, t G-1) default", lambda y, g: clustered_mean_ci(y, g)),
        (
            "clustered CI (CR0, normal)",
            lambda y, g: clustered_mean_ci(y, g, small_sample=False, dist="normal"),
        ),
    ]
    for n_clusters in (10, 20, 40):
        for label, fn in variants:
            rng = fresh(200 + n_clusters)
            gen3 = (fn(*clustered_scores(rng, n_clusters)) for _ in range(reps))
            coverage(label, 0.4, gen3, reps, f"G={n_clusters} clusters of 2-10 items")

    for n_clusters in (10, 20, 40):
        rng = fresh(300 + n_clusters)
        gen4 = (
            cluster_bootstrap_ci(*clustered_scores(rng, n_clusters), n_resamples=n_boot, seed=rng)
            for _ in range(boot_reps)
        )
        detail = f"G={n_clusters} clusters, B={n_boot} resamples"
        coverage("cluster bootstrap CI (percentile)", 0.4, gen4, boot_reps, detail)


def _share(hits: np.ndarray) -> str:
    p = float(np.mean(hits))
    return f"{p:.3f}±{sim.mc_error(p, hits.size):.3f}"


def _fam_cover(design: sim.Design, base: np.ndarray, cand: np.ndarray, truth: float) -> np.ndarray:
    codes = np.repeat(np.arange(design.n_families), design.family_sizes)
    d = cand - base
    means = np.stack([d[:, codes == g].mean(axis=1) for g in range(design.n_families)], 1)
    hits = []
    for row in means:
        lo, hi = fam.sign_flip_bounds(row, 0.025, 2000, 0)
        hits.append(lo <= truth <= hi)
    return np.array(hits)


def grid(seed: int, sims: int) -> None:
    """Binary rewards, K = 1: every interval's coverage, every gate's size and power."""
    z2 = float(_st.norm.ppf(0.975))
    print(
        f"binary rewards, K=1; {sims} simulated certificates per cell, seed {seed}; "
        "cover = 95% coverage, size = type-I error (nominal <= 0.05), power at gain 0.1/0.2/0.3"
    )
    head = (
        f"{'G':>3} {'n':>4} {'p0':>4} | {'Wilson':>11} {'C-P':>11} {'Tango':>11} "
        f"{'exact':>11} {'fam.int':>11} | {'McNemar sz':>11} {'family sz':>11} "
        f"{'NI size':>11} {'Tango NI sz':>11} | "
        f"{'item power .1/.2/.3':>20} {'family power .1/.2/.3':>22}"
    )
    print(head)
    for g in (4, 8, 16, 32):
        for n in (16, 64, 400):
            if n < g:
                continue
            sizes = tuple(n // g + (1 if i < n % g else 0) for i in range(g))
            for p0 in (0.1, 0.3, 0.5):
                start = time.perf_counter()
                items = sim.Design(sizes, 1, (p0,), "items")
                fams = sim.Design(sizes, 1, (p0,), "families")
                dr = sim.draws(items, sims, seed)
                base, cand = sim.simulate(items, 0.0, dr)
                k = base.sum(axis=1)
                wl, wh = proportions.wilson_bounds(k, n)
                cl, ch = proportions.clopper_pearson_bounds(k, n)
                x, y = proportions.discordance(cand - base)
                tl, th = tango_bounds(x, y, np.full_like(x, n), z2)
                # the exact 95% interval covers 0 iff neither one-sided 0.025 test rejects at 0
                ex_cov = ~exact_paired.rejects(x, y, n, 0.0, 0.025) & ~exact_paired.rejects(
                    y, x, n, 0.0, 0.025
                )
                fam_cov = _fam_cover(fams, base, cand, 0.0) if g <= 8 else None
                mcn = items.alpha >= sim.mcnemar_p(y, x)
                fsz = sim.gain_rejects(fams, base, cand, dr.rng)
                nb, nc = sim.simulate(items, -0.05, dr)
                ni = sim.ni_passes(items, nb, nc, 0.05)
                ni_tango = sim.lower_bounds(items, nb, nc) > -0.05
                pw_i, pw_f = [], []
                for eff in (0.1, 0.2, 0.3):
                    b2, c2 = sim.simulate(items, eff, dr)
                    pw_i.append(f"{np.mean(sim.gain_rejects(items, b2, c2, dr.rng)):.2f}")
                    pw_f.append(f"{np.mean(sim.gain_rejects(fams, b2, c2, dr.rng)):.2f}")
                print(
                    f"{g:>3} {n:>4} {p0:>4} | {_share((wl <= p0) & (p0 <= wh)):>11} "
                    f"{_share((cl <= p0) & (p0 <= ch)):>11} {_share((tl <= 0) & (th >= 0)):>11} "
                    f"{_share(ex_cov):>11} "
                    f"{'—' if fam_cov is None else _share(fam_cov):>11} | {_share(mcn):>11} "
                    f"{_share(fsz):>11} {_share(ni):>11} {_share(ni_tango):>11} | "
                    f"{'/'.join(pw_i):>20} "
                    f"{'/'.join(pw_f):>22}  ({time.perf_counter() - start:.1f}s)"
                )
    print(
        "fam.int: the inverted sign-flip interval over family means (computed for G <= 8, it "
        "enumerates every subset); family gates at G = 4 cannot reach p <= 0.05 (smallest 1/16)"
    )


def graded(seed: int, sims: int) -> None:
    """K = 4 epochs averaged: the bounded score interval and the item sign-flip gate."""
    z2 = float(_st.norm.ppf(0.975))
    print(f"\ngraded rewards (K=4 epochs averaged); {sims} simulated certificates per cell")
    for n, p0 in ((16, 0.3), (64, 0.1), (64, 0.5), (400, 0.3)):
        items = sim.Design((n // 8,) * 8, 4, (p0,), "items")
        dr = sim.draws(items, sims, seed)
        base, cand = sim.simulate(items, 0.0, dr)
        x, y = proportions.discordance(cand - base)
        lo, hi = tango_bounds(x, y, np.full_like(x, n), z2)
        size = sim.gain_rejects(items, base, cand, dr.rng)
        nb, nc = sim.simulate(items, -0.05, dr)
        ni = sim.ni_passes(items, nb, nc, 0.05)
        b2, c2 = sim.simulate(items, 0.1, dr)
        pw = sim.gain_rejects(items, b2, c2, dr.rng)
        print(
            f"n={n:<4} p0={p0}: bounded score cover {_share((lo <= 0) & (hi >= 0))}, sign-flip "
            f"size {_share(size)}, NI size {_share(ni)}, power at 0.1 {np.mean(pw):.2f}"
        )


def _multinomial(
    x: np.ndarray, y: np.ndarray, logc: np.ndarray, n: int, pp: float, pm: float
) -> np.ndarray:
    """Probability of every outcome ``(x, y, n - x - y)`` at rates ``(pp, pm, 1 - pp - pm)``."""
    rest = max(0.0, 1.0 - pp - pm)
    logp = logc + _sp.xlogy(x, pp) + _sp.xlogy(y, pm) + _sp.xlogy(n - x - y, rest)
    return np.asarray(np.exp(logp))


def ni_exact_size(margin: float = 0.05, alpha: float = 0.05, grid: int = 1001) -> None:
    """The non-inferiority gate's size computed exactly, with no Monte Carlo error: the
    probability that it passes when the true difference is exactly ``-margin``, summed over every
    outcome of n pairs (multinomial), at each bench cell's rates and at its worst over the whole
    null boundary (``pi-`` from ``margin`` to ``(1 + margin) / 2``, ``grid`` points)."""
    z = float(_st.norm.ppf(1.0 - alpha))
    print(
        f"\nnon-inferiority size computed exactly (margin {margin}, alpha {alpha}, binary K=1): "
        "at the cells' rates (p0 0.1/0.3/0.5) and the worst over the null boundary"
    )
    print(
        f"{'n':>4} | {'exact test p0=.1/.3/.5':>24} {'worst':>7} | {'Tango p0=.1/.3/.5':>24} "
        f"{'worst':>7}"
    )
    for n in (16, 32, 64, 400):
        start = time.perf_counter()
        x, y, logc = exact_paired._outcomes(n)
        rej = exact_paired.rejects(x, y, n, -margin, alpha)
        lo, _ = tango_bounds(x, y, np.full_like(x, float(n)), z)
        rej_t = lo > -margin

        cells_e, cells_t = [], []
        for p0 in (0.1, 0.3, 0.5):
            q0 = p0 - margin  # the data model: q = p + effect (1 - p) / (1 - p) with one rate
            pr = _multinomial(x, y, logc, n, q0 * (1 - p0), p0 * (1 - q0))
            cells_e.append(f"{pr[rej].sum():.4f}")
            cells_t.append(f"{pr[rej_t].sum():.4f}")
        worst_e = worst_t = 0.0
        for pm in np.linspace(margin, (1.0 + margin) / 2.0, grid):
            pr = _multinomial(x, y, logc, n, pm - margin, pm)
            worst_e, worst_t = max(worst_e, pr[rej].sum()), max(worst_t, pr[rej_t].sum())
        print(
            f"{n:>4} | {'/'.join(cells_e):>24} {worst_e:7.4f} | {'/'.join(cells_t):>24} "
            f"{worst_t:7.4f}  ({time.perf_counter() - start:.1f}s)"
        )


def _size_readings(
    seed: int, sims: int, g: int, n: int, p0: float, family: bool
) -> dict[str, np.ndarray]:
    """The binary grid's size readings for one cell, drawn exactly as grid() draws them."""
    sizes = tuple(n // g + (1 if i < n % g else 0) for i in range(g))
    items = sim.Design(sizes, 1, (p0,), "items")
    dr = sim.draws(items, sims, seed)
    base, cand = sim.simulate(items, 0.0, dr)
    out: dict[str, np.ndarray] = {}
    if family:
        out["family sign-flip"] = sim.gain_rejects(
            sim.Design(sizes, 1, (p0,), "families"), base, cand, dr.rng
        )
        return out
    x, y = proportions.discordance(cand - base)
    out["McNemar"] = items.alpha >= sim.mcnemar_p(y, x)
    nb, nc = sim.simulate(items, -0.05, dr)
    out["no-regression (exact NI)"] = sim.ni_passes(items, nb, nc, 0.05)
    return out


def _graded_readings(seed: int, sims: int, n: int, p0: float) -> dict[str, np.ndarray]:
    """The graded section's size readings for one cell, drawn exactly as graded() draws them."""
    items = sim.Design((n // 8,) * 8, 4, (p0,), "items")
    dr = sim.draws(items, sims, seed)
    base, cand = sim.simulate(items, 0.0, dr)
    out = {"graded item sign-flip": sim.gain_rejects(items, base, cand, dr.rng)}
    nb, nc = sim.simulate(items, -0.05, dr)
    out["graded no-regression"] = sim.ni_passes(items, nb, nc, 0.05)
    return out


def _exact_ni_size(label: str, margin: float = 0.05, alpha: float = 0.05) -> float:
    """The binary no-regression gate's exact size at a cell ("n=64 p0=0.5 ..."), as in
    ni_exact_size: the multinomial probability of every outcome the exact test passes."""
    parts = dict(w.split("=") for w in label.split() if "=" in w)
    n, p0 = int(parts["n"]), float(parts["p0"])
    x, y, logc = exact_paired._outcomes(n)
    rej = exact_paired.rejects(x, y, n, -margin, alpha)
    q0 = p0 - margin
    return float(_multinomial(x, y, logc, n, q0 * (1 - p0), p0 * (1 - q0))[rej].sum())


def recheck(seed: int, sims: int, big: int, alpha: float = 0.05) -> None:
    """Re-simulate with ``big`` certificates every size cell whose ``sims`` reading + 2 MC SE
    reaches above ``alpha``. Item-level gates depend on n and p0 only (the same draws for every
    G), so they are read once per (n, p0)."""
    print(
        f"type-I error recheck: seed {seed}; cells read at {sims} simulations, those whose "
        f"reading + 2 MC SE > {alpha} re-simulated at {big}"
    )
    cells: list[tuple[str, Callable[[int], dict[str, np.ndarray]]]] = []
    for n in (16, 64, 400):
        for p0 in (0.1, 0.3, 0.5):
            cells.append(
                (
                    f"n={n} p0={p0} (any G)",
                    partial(_size_readings, seed, g=4, n=n, p0=p0, family=False),
                )
            )
    for g in (8, 16, 32):
        for n in (16, 64, 400):
            if n < g:
                continue
            for p0 in (0.1, 0.3, 0.5):
                cells.append(
                    (
                        f"G={g} n={n} p0={p0}",
                        partial(_size_readings, seed, g=g, n=n, p0=p0, family=True),
                    )
                )
    for n, p0 in ((16, 0.3), (64, 0.1), (64, 0.5), (400, 0.3)):
        cells.append((f"K=4 n={n} p0={p0}", partial(_graded_readings, seed, n=n, p0=p0)))
    flagged = 0
    for label, read in cells:
        for gate, hits in read(sims).items():
            p = float(np.mean(hits))
            if p + 2 * sim.mc_error(p, hits.size) <= alpha:
                continue
            flagged += 1
            start = time.perf_counter()
            again = read(big)
            p2 = float(np.mean(again[gate]))
            se2 = sim.mc_error(p2, big)
            if p2 + 2 * se2 <= alpha:
                verdict = f"<= {alpha:g}"
            elif p2 - 2 * se2 <= alpha:
                verdict = f"within 2 SE of {alpha:g}"
            else:
                verdict = f"ABOVE {alpha:g}"
            exact = _exact_ni_size(label) if gate.startswith("no-regression") else None
            print(
                f"{gate:<26} {label:<22} {sims}: {_share(hits)}  {big}: {p2:.4f}±{se2:.4f} "
                f"{verdict}"
                + ("" if exact is None else f"; exact size {exact:.4f}")
                + f" ({time.perf_counter() - start:.1f}s)"
            )
    print(f"{flagged} readings re-simulated")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sims", type=int, default=1500, help="simulated certificates per cell")
    parser.add_argument("--with-old", action="store_true", help="also the earlier section")
    parser.add_argument("--reps", type=int, default=2000, help="old: datasets per CI")
    parser.add_argument("--boot-reps", type=int, default=2000, help="old: bootstrap datasets")
    parser.add_argument("--resamples", type=int, default=2000, help="old: bootstrap resamples")
    parser.add_argument(
        "--recheck-sims",
        type=int,
        default=0,
        help="only the gate sizes: re-simulate cells whose reading + 2 SE > .05 with this many",
    )
    args = parser.parse_args()
    start = time.perf_counter()
    if args.recheck_sims:
        recheck(args.seed, args.sims, args.recheck_sims)
        print(f"\nwall {time.perf_counter() - start:.0f} s")
        return
    grid(args.seed, args.sims)
    graded(args.seed, args.sims)
    ni_exact_size()
    if args.with_old:
        run(args.seed, args.reps, args.boot_reps, args.resamples)
    print(f"\nwall {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
