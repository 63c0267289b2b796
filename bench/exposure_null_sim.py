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

    PYTHONPATH=src python bench/exposure_null_sim.py --positions [--cells 1000] [--seed 0]

The null of decision 0198: accuracy depends on the state (which gold step is needed next), not
on how the state was reached. Step k of a task is right with probability p_t + d_k, the first
step the hardest (d runs from -spread/2 to +spread/2), and teacher forcing draws K answers at
each gold step. It prints "on own steps" beside the by-state estimator
(`certify.exposure_bias.on_own_states`, run on the simulated scores): only the second is about 0.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from workgym.certify.exposure_bias import OwnScore, on_own_states, on_own_steps, state_rates
from workgym.certify.teacher_forcing import StepScore, TaskScore

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


def by_position(rng: random.Random, ps: list[float], q_end: float) -> list[tuple[int, bool]]:
    """One episode under 0198's null: (state, right) per step, the state being the gold step
    needed next; a miss ends the episode with probability q_end, else the state stays."""
    steps: list[tuple[int, bool]] = []
    done = 0
    while done < len(ps) and len(steps) < MAX_STEPS:
        right = rng.random() < ps[done]
        steps.append((done, right))
        if right:
            done += 1
        elif rng.random() < q_end:
            break
    return steps


def positions_cell(
    rng: random.Random, mean_p: float, n: int, q_end: float, spread: float
) -> tuple[float, float]:
    """(on own steps, by state) for one cell whose steps differ in difficulty."""
    shift = [spread * (k / (n - 1) - 0.5) for k in range(n)]
    step = lambda state, ok: StepScore(index=state, matched=ok, predicted="", gold=str(state))  # noqa: E731
    gold: list[TaskScore] = []
    own: list[OwnScore] = []
    tf: dict[str, float] = {}
    counts: dict[str, tuple[int, int]] = {}
    for t in range(TASKS):
        base = rng.gauss(mean_p, 0.1)
        ps = [min(max(base + d, 0.02), 0.98) for d in shift]
        draws = [[rng.random() < ps[k] for k in range(n)] for _ in range(K)]
        gold += [TaskScore(model="m", task_id=str(t), family="f", epoch=e,
                           steps=[step(k, ok) for k, ok in enumerate(d)])
                 for e, d in enumerate(draws)]  # fmt: skip
        tf[str(t)] = sum(map(sum, draws)) / (K * n)
        episodes = [by_position(rng, ps, q_end) for _ in range(K)]
        own += [OwnScore(model="m", task_id=str(t), family="f", epoch=e, success=False,
                         steps=[step(k, ok) for k, ok in ep])
                for e, ep in enumerate(episodes) if ep]  # fmt: skip
        counts[str(t)] = (sum(ok for ep in episodes for _, ok in ep), sum(map(len, episodes)))
    weighted = on_own_steps(tf, counts)
    states = on_own_states(state_rates(gold), own)
    assert weighted is not None and states is not None
    return weighted[0] - weighted[1], states.bias


def positions_table(rng: random.Random, cells: int) -> None:
    print("| cell mean p | gold steps n | q_end | spread | on own steps | by state |")
    print("| --- | --- | --- | --- | --- | --- |")
    for mean_p in (0.5, 0.7):
        for n in (2, 3):
            for q_end in (0.0, 1.0):
                for spread in (0.0, 0.4):
                    rows = [positions_cell(rng, mean_p, n, q_end, spread) for _ in range(cells)]
                    cols = []
                    for i in (0, 1):
                        mean = statistics.fmean(r[i] for r in rows)
                        se = statistics.stdev(r[i] for r in rows) / len(rows) ** 0.5
                        cols.append(f"{mean:+.3f} (se {se:.3f})")
                    print(f"| {mean_p} | {n} | {q_end} | {spread} | {cols[0]} | {cols[1]} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--positions", action="store_true", help="decision 0198's null")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    started = time.perf_counter()
    if args.positions:
        cells = args.cells or 1000
        positions_table(rng, cells)
        print(f"{cells} cells a setting, seed {args.seed}, {time.perf_counter() - started:.0f} s")
        return
    args.cells = args.cells or 4000
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
