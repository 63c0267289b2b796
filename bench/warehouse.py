"""Warehouse environments: generation time, run_sql latency, verifier time per task.

    .venv/bin/python bench/warehouse.py [--tpch-sf 1] [--tasks 400] [--skip-tpch] [--out DIR]
        [--db duckdb:///data/tpcds.duckdb ...]
    .venv/bin/python bench/warehouse.py --check runs/envs/tpcds [--check DIR ...]

Prints, for builtin:nycflights13 and builtin:tpch?sf=<sf>: generation time (snapshot, profile,
families, investigations, suites) and task counts; then on the nycflights13 environment: the
wall time and peak RSS of a fresh `workgym check` (its own process, as a user runs it), run_sql
p50/p95 over the tasks' own reference queries played through the tool, and the time to verify
one submitted answer per answer kind, SQL answers including their fuzzed test suite.
Numbers, not assertions: this is a benchmark, never a timed test.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import workgym as wg
from workgym.core.errors import ToolError
from workgym.envs.warehouse.generate.pipeline import GenerateOptions, generate
from workgym.envs.warehouse.runtime.env import WarehouseEnv
from workgym.envs.warehouse.runtime.tools import query


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def bench_generate(url: str, out: Path, tasks: int) -> None:
    started = time.perf_counter()
    report = generate(GenerateOptions(db=url, out=out, tasks=tasks), progress=False)
    total = time.perf_counter() - started
    phases = ", ".join(f"{k} {v:.1f}" for k, v in report.timings_s.items())
    print(f"generate {url}: {total:.1f} s total ({phases})")
    counts = ", ".join(f"{k} {v}" for k, v in report.counts().items())
    print(f"  {report.tasks} tasks ({counts}); awkward {report.awkward['share']:.0%}")
    print(f"  SQL suites: {report.suites}")


def bench_check(directory: Path) -> None:
    """`workgym check --fresh` in a child process: the time a user waits, and its peak RSS (that
    child's own, from wait4, so several checks in one bench do not share a maximum)."""
    out = directory.parent / f"check-{directory.name}"
    command = [sys.executable, "-m", "workgym", "check", str(directory), "--out", str(out)]
    command += ["--fresh", "--no-progress", "--admission-dir", str(out / "admission")]
    started = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    total = time.perf_counter() - started
    code = os.waitstatus_to_exitcode(status)
    rss = usage.ru_maxrss / 1024
    report = json.loads((out / "check.json").read_text()) if code in (0, 1) else {}
    attack = report.get("attack") or {}
    print(
        f"check {directory.name}: {total:.1f} s, {'passed' if report.get('passed') else 'FAILED'}"
        f" (probes {attack.get('elapsed_s', 0):.1f} s over {len(attack.get('families', []))}"
        f" of {attack.get('families_total', 0)} families); peak RSS {rss:.0f} MB"
    )


def bench_run_sql(env: WarehouseEnv) -> None:
    latencies: list[float] = []
    errors = 0
    for task in env.taskset:
        sql = task.meta.get("reference_sql")
        if not sql:
            continue
        state = env.state(task)
        started = time.perf_counter()
        try:
            query(state, sql, 50)
        except ToolError:
            errors += 1
        latencies.append(time.perf_counter() - started)
    print(
        f"run_sql over {len(latencies)} reference queries: p50 {pct(latencies, 0.5) * 1000:.0f} ms,"
        f" p95 {pct(latencies, 0.95) * 1000:.0f} ms, max {max(latencies) * 1000:.0f} ms"
        f" ({errors} errors)"
    )


def bench_verify(env: WarehouseEnv, per_kind: int = 15) -> None:
    by_kind: dict[str, list[wg.Task]] = defaultdict(list)
    for task in env.taskset:
        kind = env.answer_kind(task)
        if len(by_kind[kind]) < per_kind:
            by_kind[kind].append(task)
    for kind, tasks in sorted(by_kind.items()):
        cold: list[float] = []
        warm: list[float] = []
        for task in tasks:
            episode = wg.Episode(task_id=task.id, family=task.family, split="", answer=task.answer)
            if kind == "conclusion":
                episode = asyncio_oracle(env, task)
            episode.submitted = True
            for bucket in (cold, warm):  # first scoring runs the gold; the second reuses it
                started = time.perf_counter()
                verdict = env.score(task, episode)
                bucket.append(time.perf_counter() - started)
                assert verdict.success, (task.id, verdict)
        suites = [len(env.suite(t)) for t in tasks]
        print(
            f"verify {kind:10s} n={len(tasks):2d}: mean {statistics.mean(cold) * 1000:7.1f} ms"
            f" first, {statistics.mean(warm) * 1000:7.1f} ms again"
            f" (databases per task: {statistics.mean(suites):.1f})"
        )


def asyncio_oracle(env: WarehouseEnv, task: wg.Task) -> wg.Episode:
    """Investigation answers need their evidence run in the episode: play the oracle."""
    import asyncio

    return asyncio.run(
        wg.run_episode(env, task, wg.Policy(wg.get_model("scripted/oracle")), seed=0)
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tpch-sf", type=float, default=1.0)
    parser.add_argument("--tasks", type=int, default=400)
    parser.add_argument("--skip-tpch", action="store_true")
    parser.add_argument(
        "--db",
        action="append",
        default=[],
        help="another source to time, e.g. duckdb:///data/tpcds.duckdb (repeatable)",
    )
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument(
        "--check",
        action="append",
        type=Path,
        default=[],
        help="only time `workgym check` on this generated environment directory (repeatable); "
        "its runs go beside it, in check-<name>",
    )
    args = parser.parse_args()
    if args.check:
        for directory in args.check:
            bench_check(directory)
        return
    root = args.out or Path(tempfile.mkdtemp(prefix="workgym-bench-warehouse-"))
    nyc = root / "nycflights13"
    bench_generate("builtin:nycflights13", nyc, args.tasks)
    if not args.skip_tpch:
        bench_generate(f"builtin:tpch?sf={args.tpch_sf:g}", root / "tpch", args.tasks)
    for i, url in enumerate(args.db):
        bench_generate(url, root / f"extra{i}", args.tasks)
    bench_check(nyc)
    env = wg.load(nyc)
    assert isinstance(env, WarehouseEnv)
    bench_run_sql(env)
    bench_verify(env)
    print(f"environments under {root}")


if __name__ == "__main__":
    main()
