"""Exposure bias under its null: a model whose accuracy is the same on any prefix (decision 0180).

    PYTHONPATH=src python bench/exposure_null_sim.py [--cells 4000] [--seed 0]

Each simulated cell has 8 tasks whose per-step accuracies p_t are drawn around a cell mean
(heterogeneous, as real tasks are), K = 4 teacher-forced draws of a task's n gold steps and K
free episodes. In an episode every step is right with probability p_t whatever came before
(the null); a right step advances, a wrong one ends the episode with probability q_end (a wrong
submission) or else leaves the same right next action (a wrong lookup), up to 10 steps. It
prints, per setting, the mean exposure bias of two estimators over the cells:

- per-episode share: gold-prefix rate minus the mean over episodes of each episode's share of
  right steps (decision 0179's preregistered estimator);
- on own steps (`certify.exposure_bias.on_own_steps`, what `workgym imitation-gap` reports):
  sum_t (tf_t N_t - S_t) / sum_t N_t.

A correct estimator prints about 0 everywhere. No model runs; about a minute.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from workgym.certify.exposure_bias import on_own_steps

TASKS, K, MAX_STEPS = 8, 4, 10


def episode(rng: random.Random, p: float, n: int, q_end: float) -> list[bool]:
    steps: list[bool] = []
    done = 0
    while done < n and len(steps) < MAX_STEPS:
        if rng.random() < p:
            steps.append(True)
            done += 1
        else:
            steps.append(False)
            if rng.random() < q_end:
                break
    return steps


def cell(rng: random.Random, mean_p: float, n: int, q_end: float) -> tuple[float, float]:
    tf: dict[str, float] = {}
    own: dict[str, tuple[int, int]] = {}
    per_episode: list[float] = []
    for t in range(TASKS):
        p = min(max(rng.gauss(mean_p, 0.15), 0.02), 0.98)
        tf[str(t)] = sum(rng.random() < p for _ in range(K * n)) / (K * n)
        episodes = [episode(rng, p, n, q_end) for _ in range(K)]
        own[str(t)] = (sum(map(sum, episodes)), sum(map(len, episodes)))
        per_episode.append(statistics.fmean(sum(e) / len(e) for e in episodes))
    old = statistics.fmean(tf.values()) - statistics.fmean(per_episode)
    weighted = on_own_steps(tf, own)
    assert weighted is not None
    return old, weighted[0] - weighted[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    started = time.perf_counter()
    print("| cell mean p | gold steps n | q_end | per-episode share | on own steps |")
    print("| --- | --- | --- | --- | --- |")
    for mean_p in (0.3, 0.5, 0.8):
        for n in (2, 3):
            for q_end in (0.0, 0.5, 1.0):
                rows = [cell(rng, mean_p, n, q_end) for _ in range(args.cells)]
                old = statistics.fmean(r[0] for r in rows)
                new = statistics.fmean(r[1] for r in rows)
                se = statistics.stdev(r[1] for r in rows) / len(rows) ** 0.5
                print(f"| {mean_p} | {n} | {q_end} | {old:+.3f} | {new:+.3f} (se {se:.3f}) |")
    print(f"{args.cells} cells a setting, seed {args.seed}, {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
