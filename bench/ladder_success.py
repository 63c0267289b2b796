"""Where each rung of the model ladder stands: success on the built-in environments, bounded.

    PYTHONPATH=src python bench/ladder_success.py --out runs/ladder \
        --models llamacpp/smollm2-135m,llamacpp/qwen2.5-coder-0.5b \
        --cells workgym/lookup:dev,workgym/toy-shop:train --n 16 --budget-s 480

Fixed before looking: n = 16 tasks a cell (the first 16 of the split: workgym/lookup's dev split
has exactly 16; workgym/toy-shop's dev split has 12, so its cells take the first 16 train
tasks), temperature 0.3, seed 0, the built-in prefill, 4 episodes at a time, and a wall-time
budget a cell (`workgym eval` is stopped when it runs out). A cell that ran out reports how many
of its n episodes finished, never a rate over a different n; a finished cell reports successes,
the exact (Clopper-Pearson) 95% interval, completion+prompt tokens per task and wall seconds
per episode.

`workgym eval` ends an episode after `--episode-seconds` of wall time (180 s by default). On a
loaded machine a larger model's first reply can take that long (four 1.5B prefills of ops-api's
tool schemas at once), and such an episode fails for the machine's speed, not the model's
answer: a cell with any episode cut by time reports `time_cut` and gives no rate, as a cell that
ran out does. `--episode-seconds` raises that bound for environments whose episodes are long by
design (the generated warehouses: up to 30 SQL queries).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any


def clopper_pearson(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    from scipy.stats import beta

    alpha = 1 - confidence
    low = 0.0 if k == 0 else float(beta.ppf(alpha / 2, k, n - k + 1))
    high = 1.0 if k == n else float(beta.ppf(1 - alpha / 2, k + 1, n - k))
    return low, high


TIME_CUTS = ("time_budget", "time_limit")


def cell(
    model: str,
    env: str,
    split: str,
    n: int,
    budget: float,
    out: Path,
    concurrency: int = 4,
    episode_seconds: float = 180,
) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "workgym", "eval", env, "--model", model, "--split", split,
           "--limit", str(n), "--concurrency", str(concurrency), "--temperature", "0.3",
           "--seed", "0", "--out", str(out), "--no-progress",
           "--episode-seconds", f"{episode_seconds:g}"]  # fmt: skip
    started = time.perf_counter()
    try:
        subprocess.run(cmd, timeout=budget, capture_output=True, text=True, check=False)
        ran_out = False
    except subprocess.TimeoutExpired:
        ran_out = True
    wall = time.perf_counter() - started
    lines = (out / "episodes.jsonl").read_text().splitlines() if out.exists() else []
    episodes = [json.loads(line) for line in lines if line.strip()]
    done = len(episodes)
    wins = sum(bool((e.get("verdict") or {}).get("success")) for e in episodes)
    tokens = sum(e["usage"]["prompt_tokens"] + e["usage"]["completion_tokens"] for e in episodes)
    row: dict[str, Any] = {"model": model, "env": env, "split": split, "n": n, "done": done,
                           "wall_s": round(wall), "ran_out": ran_out or done < n}  # fmt: skip
    if done:
        row["tokens_per_task"] = round(tokens / done)
        row["s_per_episode"] = round(wall / done, 1)
        row["errors"] = sum(e.get("error") is not None for e in episodes)
        row["time_cut"] = sum(e.get("truncation") in TIME_CUTS for e in episodes)
    if done == n and not row.get("time_cut"):
        low, high = clopper_pearson(wins, n)
        row.update(successes=wins, rate=round(wins / n, 3), ci95=[round(low, 3), round(high, 3)])
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="llamacpp/smollm2-135m,llamacpp/qwen2.5-coder-0.5b")
    parser.add_argument("--cells", default="workgym/lookup:dev,workgym/toy-shop:train")
    parser.add_argument("--n", type=int, default=16)
    parser.add_argument("--budget-s", type=float, default=480)
    parser.add_argument("--concurrency", type=int, default=4, help="episodes at a time")
    parser.add_argument(
        "--episode-seconds", type=float, default=180, help="`workgym eval`'s bound of one episode"
    )
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f}", flush=True)
    for model in args.models.split(","):
        for spec in args.cells.split(","):
            env, split = spec.split(":")
            out = args.out / f"{model.replace('/', '_')}--{env.replace('/', '_')}"
            row = cell(model, env, split, args.n, args.budget_s, out, args.concurrency,
                       args.episode_seconds)  # fmt: skip
            print(json.dumps(row), flush=True)
    print(f"load average {os.getloadavg()[0]:.1f}", flush=True)


if __name__ == "__main__":
    main()
