"""The exposure-bias estimators on one `workgym imitation-gap` folder (decisions 0179, 0180, 0198).

    PYTHONPATH=src python bench/exposure_two_estimators.py runs/c1/imgap

Reads `teacher_forced.jsonl` and `own_prefix.jsonl` (what the command wrote; no model runs) and
prints, per model, the mean over families with a 95% t interval over families of:

- per-episode share: the task's gold-prefix rate minus the mean over its episodes of each
  episode's share of right steps, averaged over tasks (decision 0179 as preregistered; biased
  under the null, decision 0180);
- on own steps: sum_t (tf_t N_t - S_t) / sum_t N_t (decision 0180; biased when steps differ in
  difficulty, decision 0198);
- by state: each own step against the gold-prefix accuracy of the gold step with the same right
  next actions (`certify.exposure_bias.on_own_states`, decision 0198's primary), with how many
  own steps had a matching gold state, and the same two accuracies on the own steps taken after
  the episode's own first miss (the only ones whose prefix holds the model's own mistake).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from collections import defaultdict
from pathlib import Path

from scipy import stats

from workgym.certify.exposure_bias import OwnScore, on_own_states, state_rates
from workgym.certify.teacher_forcing import TaskScore


def t_interval(values: list[float]) -> str:
    mean = statistics.fmean(values)
    if len(values) < 2:
        return f"{mean:+.3f}"
    half = stats.t.ppf(0.975, len(values) - 1) * statistics.stdev(values) / math.sqrt(len(values))
    return f"{mean:+.3f} [{mean - half:+.3f}, {mean + half:+.3f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    args = parser.parse_args()
    tf_lines = args.folder / "teacher_forced.jsonl"
    own_lines = args.folder / "own_prefix.jsonl"
    if not tf_lines.is_file() or not own_lines.is_file():
        sys.exit(f"error: {args.folder} holds no imitation-gap run; pass its --out folder")
    tf: dict[tuple[str, str], list[float]] = defaultdict(list)
    family: dict[str, str] = {}
    gold_scores = [TaskScore.model_validate_json(x) for x in tf_lines.read_text().splitlines()]
    own_scores = [OwnScore.model_validate_json(x) for x in own_lines.read_text().splitlines()]
    for line in tf_lines.read_text().splitlines():
        row = json.loads(line)
        steps = row["steps"]
        tf[(row["model"], row["task_id"])].append(sum(s["matched"] for s in steps) / len(steps))
        family[row["task_id"]] = row["family"]
    episodes: dict[tuple[str, str], list[tuple[int, int]]] = defaultdict(list)
    for line in own_lines.read_text().splitlines():
        row = json.loads(line)
        steps = row["steps"]
        episodes[(row["model"], row["task_id"])].append(
            (sum(s["matched"] for s in steps), len(steps))
        )
    for model in dict.fromkeys(m for m, _ in tf):
        per_episode: dict[str, list[float]] = defaultdict(list)
        num: dict[str, float] = defaultdict(float)
        den: dict[str, int] = defaultdict(int)
        for (m, task), draws in tf.items():
            if m != model:
                continue
            rate = statistics.fmean(draws)
            mine = episodes.get((m, task), [])
            shares = [right / taken for right, taken in mine]
            per_episode[family[task]].append(rate - (statistics.fmean(shares) if shares else 0.0))
            num[family[task]] += sum(rate * taken - right for right, taken in mine)
            den[family[task]] += sum(taken for _, taken in mine)
        fams = sorted(per_episode)
        old = [statistics.fmean(per_episode[f]) for f in fams]
        new = [num[f] / den[f] for f in fams if den[f]]
        states = [
            on_own_states(
                state_rates([g for g in gold_scores if g.model == model and g.family == f]),
                [o for o in own_scores if o.model == model and o.family == f],
            )
            for f in fams
        ]
        found = [b for b in states if b is not None]
        matched = f"{sum(b.matched for b in found)} of {sum(b.own_steps for b in found)} own steps"
        pooled = on_own_states(
            state_rates([g for g in gold_scores if g.model == model]),
            [o for o in own_scores if o.model == model],
        )
        after = (
            f"after its own first miss: {pooled.off_gold} steps, right "
            f"{pooled.off_gold_observed:.3f} against {pooled.off_gold_expected:.3f} "
            "from the gold states"
            if pooled and pooled.off_gold
            else "after its own first miss: no step"
        )
        print(f"{model}: {len(fams)} families; per-episode share {t_interval(old)}; "
              f"on own steps {t_interval(new)}; by state {t_interval([b.bias for b in found])} "
              f"({len(found)} families, {matched} matched); {after}")  # fmt: skip


if __name__ == "__main__":
    main()
