"""Speed of the two reference environments: workgym/ops-api (real HTTP) and workgym/docstore.

ops-api: server start, session creation, keep-alive request latency, oracle episodes/s at
concurrency 32 (every episode: a private session, 2-5 HTTP calls, a final snapshot and a state
diff), and the cost of re-scoring an episode read back from disk (its calls replayed on a fresh
session). docstore: corpus generation, FTS5 index build, search latency, oracle episodes/s.
Prints numbers; asserts nothing.

    python bench/envs_opsapi_docstore.py [--epochs 3]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

import workgym as wg
from workgym.envs.docstore import DocStore
from workgym.envs.docstore.corpus import build_case
from workgym.envs.docstore.index import SearchIndex
from workgym.envs.ops_api import OpsApi
from workgym.envs.ops_api.session import OpsSession


def ms(values: list[float]) -> str:
    values = sorted(values)
    p95 = values[int(0.95 * (len(values) - 1))]
    return f"median {1000 * statistics.median(values):.2f} ms, p95 {1000 * p95:.2f} ms"


def oracle_eval(env: wg.Environment, epochs: int, out: Path) -> tuple[list[wg.Episode], float]:
    """The oracle on every task at concurrency 32: its episodes and the eval's wall seconds
    (reading the episodes back is not timed)."""
    t = time.perf_counter()
    run = wg.eval(
        env, "scripted/oracle", split="all", epochs=epochs, concurrency=32, out=out, progress=False
    )
    wall = time.perf_counter() - t
    return list(run.episodes()), wall


async def http_latency(env: OpsApi, n: int) -> tuple[list[float], list[float]]:
    opened, requests = [], []
    for i in range(n):
        t = time.perf_counter()
        session = OpsSession(env.service, i)
        opened.append(time.perf_counter() - t)
        for _ in range(5):
            t = time.perf_counter()
            await session.request("GET", "/api/orders/O1001")
            requests.append(time.perf_counter() - t)
        await session.close()
    return opened, requests


def bench_ops(epochs: int, out: Path) -> None:
    env = OpsApi()
    t = time.perf_counter()
    env.service.start()
    print(f"ops-api  server start: {1000 * (time.perf_counter() - t):.0f} ms")
    opened, requests = asyncio.run(http_latency(env, 50))
    print(f"ops-api  session create (blocking, 50): {ms(opened)}")
    print(f"ops-api  GET on keep-alive (250): {ms(requests)}")
    episodes, wall = oracle_eval(env, epochs, out / "ops")
    solved = sum(e.success for e in episodes)
    calls = sum(len(e.tool_calls) for e in episodes)
    rate = f"{len(episodes) / wall:.0f} episodes/s, {calls / wall:.0f} calls/s"
    print(
        f"ops-api  oracle, concurrency 32: {len(episodes)} episodes ({solved} solved, "
        f"{calls} calls) in {wall:.2f} s = {rate}"
    )
    sample = episodes[:50]
    t = time.perf_counter()
    for ep in sample:
        env.score(env.taskset[ep.task_id], ep)
    per = (time.perf_counter() - t) / len(sample)
    print(f"ops-api  re-score from disk (replay on a fresh session): {1000 * per:.1f} ms/episode")
    env.close()


def bench_docstore(epochs: int, out: Path) -> None:
    env = DocStore()
    builds, indexes, searches = [], [], []
    for seed in range(40):
        t = time.perf_counter()
        case = build_case(seed, ["deploy_regression"])
        builds.append(time.perf_counter() - t)
        t = time.perf_counter()
        index = SearchIndex(case.docs)
        indexes.append(time.perf_counter() - t)
        for query in ("deploy error", "x509 certificate expired", "timeout stripe", "lock wait"):
            t = time.perf_counter()
            index.search(query, 10)
            searches.append(time.perf_counter() - t)
        index.close()
    print(f"docstore corpus build (~{len(case.docs)} docs): {ms(builds)}")
    print(f"docstore FTS5 index build: {ms(indexes)}")
    print(f"docstore search, limit 10: {ms(searches)}")
    episodes, wall = oracle_eval(env, epochs, out / "docs")
    n = len(episodes)
    print(f"docstore oracle, concurrency 32: {n} episodes in {wall:.2f} s = {n / wall:.0f}/s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        bench_ops(args.epochs, Path(tmp))
        bench_docstore(args.epochs, Path(tmp))


if __name__ == "__main__":
    main()
