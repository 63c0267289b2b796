"""Scale-out numbers: asyncio vs Ray executors, and the environment server under load.

1. Executors: episodes/s on workgym/toy-shop (three turns per episode: two lookups and the
   answer) for asyncio and for Ray (tasks and actors) with 1, 2 and 4 workers, each with as many
   episodes in flight as workers, then one I/O-bound row with 64 in flight. Two test doubles:
   `scripted/bench-3-turn` with no latency (framework-bound) and the same with a sleep of
   --latency-s per model turn (what an LLM endpoint looks like from here). The Ray cluster is
   one node started here with 4 CPUs; on a machine with fewer cores the 4-worker rows are
   oversubscribed, and say so.
2. Server: `workgym serve` in a subprocess, loaded over loopback from this process by
   --clients threads, each an EnvClient playing whole episodes (reset + 3 steps), bounded by
   --requests and --seconds. Prints requests/s and the p50/p95 step latency per transport.

Prints numbers; asserts nothing beyond the bench script solving every task.

    python bench/scale.py [--latency-s 0.05] [--clients 8] [--requests 3000] [--seconds 20]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import workgym as wg
from workgym.envs.toy.env import ToyShop

sys.path.append(str(Path(__file__).resolve().parent))  # for _common when loaded by path
from _common import three_turns, toy_eval


def executors(latency_s: float, base_episodes: int) -> None:
    import ray

    from workgym.run.executors.ray_executor import RayExecutor

    cores = os.cpu_count() or 1
    started = time.perf_counter()
    ray.init(num_cpus=4, include_dashboard=False, log_to_driver=False)
    print(
        f"ray {ray.__version__}: one-node cluster (4 CPUs on {cores} cores) started in "
        f"{time.perf_counter() - started:.1f} s"
    )
    models = {
        "no latency": wg.TaskScript("scripted/bench-3-turn", three_turns),
        f"{latency_s * 1000:.0f} ms/turn": wg.TaskScript(
            "scripted/bench-3-turn-latency", three_turns, latency_s=latency_s
        ),
    }
    # warm the worker pool so the first row does not pay for process start-up
    toy_eval(models["no latency"], 60, 4, RayExecutor(mode="tasks", workers=4))
    toy_eval(models["no latency"], 60, 4, RayExecutor(mode="actors", workers=4))
    print(
        f"{'model':<14} {'executor':<12} {'workers':>7} {'in flight':>9} "
        f"{'episodes':>8} {'seconds':>8} {'episodes/s':>10}"
    )
    for label, model in models.items():
        slow = model.latency_s > 0
        for workers in (1, 2, 4):
            n = (40 if slow else base_episodes) * workers
            rows: list[tuple[str, Any]] = [
                ("asyncio", "asyncio"),
                ("ray tasks", RayExecutor(mode="tasks", workers=workers)),
                ("ray actors", RayExecutor(mode="actors", workers=workers)),
            ]
            for name, executor in rows:
                episodes, seconds = toy_eval(model, n, workers, executor)
                note = " (oversubscribed)" if name != "asyncio" and workers > cores else ""
                print(
                    f"{label:<14} {name:<12} {workers:>7} {workers:>9} {episodes:>8} "
                    f"{seconds:>8.2f} {episodes / seconds:>10.1f}{note}",
                    flush=True,
                )
        if slow:
            n = 480
            for name, executor in [
                ("asyncio", "asyncio"),
                ("ray actors", RayExecutor(mode="actors", workers=4)),
            ]:
                episodes, seconds = toy_eval(model, n, 64, executor)
                workers_label = "1" if name == "asyncio" else "4"
                print(
                    f"{label:<14} {name:<12} {workers_label:>7} {64:>9} {episodes:>8} "
                    f"{seconds:>8.2f} {episodes / seconds:>10.1f}",
                    flush=True,
                )
    ray.shutdown()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def step_message(name: str, args: dict[str, Any], i: int) -> dict[str, Any]:
    call = {
        "id": f"c{i}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }
    return {"role": "assistant", "content": "", "tool_calls": [call]}


def load(url: str, token: str, transport: str, clients: int, requests: int, seconds: float) -> None:
    from workgym.apps.serve.client import EnvClient

    env = ToyShop()
    tasks = env.taskset.split("train")
    lock = threading.Lock()
    latencies: list[float] = []
    counts = {"requests": 0, "episodes": 0, "rewards": 0.0}
    deadline = time.perf_counter() + seconds

    def worker(k: int) -> None:
        with EnvClient(url, token, transport=transport) as client:  # type: ignore[arg-type]
            i = k
            while True:
                with lock:
                    if counts["requests"] >= requests or time.perf_counter() > deadline:
                        return
                    counts["requests"] += 4
                task = tasks[i % len(tasks)]
                i += clients
                client.reset(task.id)
                reward = 0.0
                mine = []
                for j, (name, args) in enumerate(
                    [
                        ("get_item", {"name": "assam"}),
                        ("get_item", {"name": "clove"}),
                        ("submit_answer", {"answer": task.answer}),
                    ]
                ):
                    t0 = time.perf_counter()
                    _, reward, _, _, _ = client.step(step_message(name, args, j))
                    mine.append(time.perf_counter() - t0)
                with lock:
                    latencies.extend(mine)
                    counts["episodes"] += 1
                    counts["rewards"] += reward

    started = time.perf_counter()
    threads = [threading.Thread(target=worker, args=(k,)) for k in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - started
    done = counts["episodes"] * 4
    q = statistics.quantiles(latencies, n=100)
    mean_reward = counts["rewards"] / max(1, counts["episodes"])
    print(
        f"server over {transport:<4}: {clients} clients, {done} requests "
        f"({counts['episodes']} episodes, mean reward {mean_reward:.2f}) "
        f"in {elapsed:.2f} s = {done / elapsed:.0f} requests/s; step latency "
        f"p50 {1000 * q[49]:.2f} ms, p95 {1000 * q[94]:.2f} ms",
        flush=True,
    )


def server(clients: int, requests: int, seconds: float) -> None:
    port, token = free_port(), "bench-token"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "workgym",
            "serve",
            "workgym/toy-shop",
            "--port",
            str(port),
            "--token",
            token,
            "--idle-timeout",
            "60",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        from workgym.apps.serve.client import EnvClient

        deadline = time.monotonic() + 30
        while True:
            try:
                EnvClient(url, token, transport="http").info()
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise SystemExit("the server did not start") from None
                time.sleep(0.1)
        print(
            f"server: `workgym serve workgym/toy-shop` in a subprocess (pid {proc.pid}), "
            "load from this process over loopback"
        )
        for transport in ("ws", "http"):
            load(url, token, transport, clients, requests, seconds)
    finally:
        proc.terminate()
        proc.wait(10)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--latency-s", type=float, default=0.05)
    parser.add_argument("--episodes", type=int, default=240, help="per worker, no-latency rows")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--skip-ray", action="store_true")
    args = parser.parse_args()
    if not args.skip_ray:
        executors(args.latency_s, args.episodes)
    server(args.clients, args.requests, args.seconds)


if __name__ == "__main__":
    main()
