"""Coverage of the certificate's 95% confidence intervals, measured by simulation.

Prints, for each interval, the fraction of simulated datasets whose interval contains the true
value (nominal 0.95) and its Monte Carlo standard error. A script that prints numbers, not a test.

    .venv/bin/python bench/stats_coverage.py [--seed 0] [--reps 2000] [--boot-reps 500]
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable, Iterator
from typing import Literal

import numpy as np

from workgym.stats.bootstrap import cluster_bootstrap_ci
from workgym.stats.results import MeanEstimate, PairedTest
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--reps", type=int, default=2000, help="datasets per closed-form CI")
    parser.add_argument("--boot-reps", type=int, default=2000, help="datasets per bootstrap CI")
    parser.add_argument("--resamples", type=int, default=2000, help="bootstrap resamples")
    args = parser.parse_args()
    run(args.seed, args.reps, args.boot_reps, args.resamples)


if __name__ == "__main__":
    main()
