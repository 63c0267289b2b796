"""Framework overhead: episodes/s and time per step with a zero-latency scripted model.

Each episode is three model turns (two tool calls, then the final answer), one verdict, and one
line appended to episodes.jsonl, on the built-in toy environment. Since the scripted model costs
~nothing, all measured time is framework time. Peak RSS is measured in a fresh process that runs
10,000 episodes. Prints numbers; asserts nothing (targets live in the issue, not in tests).

    python bench/overhead.py [--episodes 10000]
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import subprocess
import sys
import time
from pathlib import Path

import workgym as wg

sys.path.append(str(Path(__file__).resolve().parent))  # for _common when loaded by path
from _common import three_turns, toy_eval

STEPS_PER_EPISODE = 3


def measure(episodes: int, concurrency: int) -> dict[str, float]:
    model = wg.TaskScript("scripted/bench-3-turn", three_turns)
    n, elapsed = toy_eval(model, episodes, concurrency)
    return {
        "episodes": n,
        "concurrency": concurrency,
        "seconds": elapsed,
        "episodes_per_s": n / elapsed,
        "ms_per_step": 1000 * elapsed / (n * STEPS_PER_EPISODE),
    }


def bare_loop_ms_per_step(steps: int = 300_000) -> float:
    async def step() -> int:
        return 1

    async def loop() -> None:
        for _ in range(steps):
            await step()

    started = time.perf_counter()
    asyncio.run(loop())
    return 1000 * (time.perf_counter() - started) / steps


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--episodes", type=int, default=10_000)
    parser.add_argument("--rss-child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.rss_child:
        measure(args.episodes, 64)
        print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
        return
    print(f"bare asyncio loop: {bare_loop_ms_per_step():.4f} ms/step")
    for concurrency in (1, 64):
        m = measure(args.episodes, concurrency)
        print(
            f"concurrency {concurrency:>2}: {m['episodes']} episodes in {m['seconds']:.2f} s = "
            f"{m['episodes_per_s']:.0f} episodes/s, {m['ms_per_step']:.4f} ms framework time/step"
        )
    child = subprocess.run(
        [sys.executable, __file__, "--rss-child", "--episodes", str(args.episodes)],
        capture_output=True,
        text=True,
        check=True,
    )
    print(f"peak RSS for {args.episodes} episodes (fresh process): {float(child.stdout):.0f} MB")


if __name__ == "__main__":
    main()
