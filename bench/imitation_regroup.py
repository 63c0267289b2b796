"""Bland-Altman and its same-data null over larger cells: a report's cells pooled by group.

    PYTHONPATH=src python bench/imitation_regroup.py REPORT.json [--sep /]

`bench/toy-examples-c1` scores each task as its own family (36 clusters for the by-state
interval), so a report there has Bland-Altman cells of one task x K = 4. Issue 36 asks for cells
of at least 8 tasks. This pools each model's cells by the part of the family name before SEP (on
c1, the rule: 12 tasks a cell) and recomputes `certify.gap_null.bland_altman` and
`same_data_null` (2,000 draws, seed 0) on the pooled cells: the teacher-forced rate as a mean
over tasks, free success over episodes, the tasks' gold step counts kept. Reads imitation.json
(what `workgym imitation-gap` wrote); no model runs. Added after the look (decision 0199's
results); secondary.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from workgym.certify.gap_null import Measures, bland_altman, same_data_null


def pooled(cells: list[dict[str, Any]], sep: str) -> dict[tuple[str, str], Measures]:
    """(model, group) -> the group's cells pooled into one."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for cell in cells:
        groups[(str(cell["model"]), str(cell["family"]).split(sep)[0])].append(cell)
    out = {}
    for key, members in sorted(groups.items()):
        tasks = sum(m["n_tasks"] for m in members)
        episodes = sum(m["free_episodes"] for m in members)
        tf = sum(m["tf_step_rate"] * m["n_tasks"] for m in members) / tasks
        free = sum(m["free_success"] * m["free_episodes"] for m in members) / episodes
        steps = tuple(n for m in members for n in m["gold_steps"] if n > 0)
        out[key] = Measures(tf=tf, free=free, gold_steps=steps, episodes=episodes)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", type=Path, help="an imitation.json")
    parser.add_argument("--sep", default="/", help="the group is the family name before this")
    args = parser.parse_args()
    if not args.report.is_file():
        parser.error(f"{args.report} is not a file; pass the imitation.json an imitation-gap wrote")
    cells = json.loads(args.report.read_text())["cells"]
    groups = pooled(cells, args.sep)
    for (model, group), m in groups.items():
        print(f"{model:<40} {group:<10} tasks {len(m.gold_steps):>3}  tf {m.tf:.3f}  "
              f"free {m.free:.3f}")  # fmt: skip
    fit = bland_altman(list(groups.values()))
    null = same_data_null(list(groups.values()))
    print(f"Bland-Altman over {fit.n_points} pooled cells: bias {fit.bias:+.3f}, limits "
          f"[{fit.lower_limit:+.3f}, {fit.upper_limit:+.3f}], slope {fit.slope:+.3f}")  # fmt: skip
    for name, stat in (("bias", null.bias), ("Bland-Altman slope", null.agreement_slope),
                       ("old slope", null.old_slope)):  # fmt: skip
        print(f"same-data null ({null.draws} draws, seed {null.seed}), {name}: observed "
              f"{stat.observed:+.3f}, null 95% range [{stat.null_lower:+.3f}, "
              f"{stat.null_upper:+.3f}], p {stat.p_two_sided:.3f}")  # fmt: skip


if __name__ == "__main__":
    main()
