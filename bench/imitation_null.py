"""The same-data null and Bland-Altman on an `imitation.json` already written (issue 36).

    PYTHONPATH=src python bench/imitation_null.py \
        docs/results/imitation-lookup-8models/imitation.json \
        --env workgym/lookup --split train --limit 28 --epochs 1 --draws 2000 --seed 0

Re-reads a report's cells (old reports included, which lack the cells' sizes: each task's gold
step count is recomputed from the environment's oracle on the same first `--limit` tasks of the
split, and each task played `--epochs` free episodes) and prints, for the old slope, the
Bland-Altman slope and the mean gap, the observed value and the range the parametric bootstrap
with equal expectations per cell gives (certify.gap_null). No model runs; a few seconds.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from workgym.certify.gap_null import Measures, bland_altman, same_data_null
from workgym.core.loading import load


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", type=Path)
    parser.add_argument("--env", required=True)
    parser.add_argument("--split", default="train")
    parser.add_argument("--limit", type=int, required=True)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--draws", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    started = time.perf_counter()
    env = load(args.env)
    tasks = list(env.taskset.split(args.split))[: args.limit]
    report = json.loads(args.report.read_text())
    cells = []
    for cell in report["cells"]:
        mine = [t for t in tasks if t.family == cell["family"]]
        if len(mine) != cell["n_tasks"]:
            raise SystemExit(
                f"{cell['family']}: {len(mine)} tasks in the first {args.limit} of "
                f"{args.split}, the report says {cell['n_tasks']}: check --split and --limit"
            )
        cells.append(
            Measures(
                tf=cell["tf_step_rate"],
                free=cell["free_success"],
                gold_steps=tuple(len(env.oracle(t)) for t in mine),
                episodes=cell["n_tasks"] * args.epochs,
            )
        )
    agreement = bland_altman(cells)
    null = same_data_null(cells, draws=args.draws, seed=args.seed)
    print(json.dumps({"agreement": agreement.model_dump(), "null": null.model_dump()}, indent=2))
    print(f"{len(cells)} cells, {args.draws} draws, seed {args.seed}, "
          f"{time.perf_counter() - started:.1f} s")  # fmt: skip


if __name__ == "__main__":
    main()
