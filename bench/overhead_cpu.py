"""Framework overhead as CPU time per step, for comparing two trees on a loaded machine.

    python bench/overhead_cpu.py     # run it from each tree in turn, interleaved, and compare

`bench/overhead.py` reports wall time, which other jobs on the cores distort; this one divides
the process's own CPU time by the steps played (the same toy episodes, the same run directory
writes). Prints numbers; asserts nothing.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import workgym as wg

sys.path.append(str(Path(__file__).resolve().parent))  # for _common when loaded by path
from _common import three_turns, toy_eval


def main() -> None:
    model = wg.TaskScript("scripted/bench-3-turn", three_turns)
    for concurrency in (1, 64):
        started = time.process_time()
        episodes, _ = toy_eval(model, 10_000, concurrency)
        cpu = time.process_time() - started
        print(
            f"concurrency {concurrency:2d}: {episodes} episodes, {cpu:.2f} s CPU = "
            f"{1000 * cpu / (3 * episodes):.4f} ms CPU/step"
        )


if __name__ == "__main__":
    main()
