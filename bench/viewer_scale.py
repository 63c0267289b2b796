"""Viewer at scale: list and filter latency on a 100,000-episode run, and the server's memory.

The run is built from real episodes: `wg.eval` on workgym/toy-shop with a scripted policy (a
test double: it reads the item and submits the right answer or one off), 60 tasks x 2 epochs;
those transcripts are then replicated under new task ids (with varied verdicts and audit flags)
until the file holds N lines, so every line is a real Episode record of realistic size. The viewer
runs as `workgym view` in its own process; latencies are wall times of HTTP requests to it, and
RSS is read from /proc. Prints numbers; asserts nothing.

    python bench/viewer_scale.py [--episodes 100000] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import workgym as wg
from workgym.core.messages import Message, ToolCall

FLAGS = ["provenance", "peek", "judge_directed", "enumeration"]


def script(task: wg.Task, env: wg.Environment) -> list[Message]:
    """scripted/bench-mixed: look the item up, then answer right or one off (by task hash)."""
    off = int(task.id[:2], 16) % 3 == 0
    subject = task.meta["subject"]
    lookup = "get_item" if task.meta["kind"] in ("price", "stock") else "list_items"
    arg = {"name": subject} if lookup == "get_item" else {"category": subject}
    answer = int(task.answer) + (1 if off else 0)
    return [
        Message(
            role="assistant",
            content=f"Let me look up {subject} first.",
            tool_calls=[ToolCall(id="c1", name=lookup, arguments=json.dumps(arg))],
        ),
        Message(
            role="assistant",
            tool_calls=[
                ToolCall(id="c2", name="submit_answer", arguments=f'{{"answer": {answer}}}')
            ],
        ),
    ]


def build(root: Path, n: int) -> Path:
    seed_run = root / "seed"
    wg.eval(
        "workgym/toy-shop",
        wg.TaskScript("scripted/bench-mixed", script),
        split="all",
        epochs=2,
        out=seed_run,
        progress=False,
    )
    real = [json.loads(x) for x in (seed_run / "episodes.jsonl").read_text().splitlines()]
    run = root / "runs" / "big"
    run.mkdir(parents=True)
    shutil.copy(seed_run / "run.json", run / "run.json")
    rng = random.Random(0)
    with (run / "episodes.jsonl").open("w") as fh:
        for i in range(n):
            r = dict(real[i % len(real)])
            r["task_id"] = f"{r['task_id']}-{i // len(real):05d}"
            ok = rng.random() < 0.55
            r["verdict"] = {**r["verdict"], "reward": float(ok), "success": ok}
            r["audit"] = {"flags": [rng.choice(FLAGS)] if rng.random() < 0.05 else []}
            fh.write(json.dumps(r) + "\n")
    shutil.rmtree(seed_run)
    return run


def rss_kb(pid: int) -> dict[str, int]:
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            out[key] = int(value.split()[0])
    return out


def timed(url: str) -> tuple[float, Any]:
    start = time.perf_counter()
    with urllib.request.urlopen(url, timeout=600) as r:
        data = json.loads(r.read())
    return time.perf_counter() - start, data


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=100_000)
    parser.add_argument("--keep", type=Path, help="build the run here and keep it")
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="viewer-scale-"))
    t0 = time.perf_counter()
    run = build(root, args.episodes)
    size = (run / "episodes.jsonl").stat().st_size
    print(
        f"run: {args.episodes:,} episodes, {size / 2**20:.0f} MiB of JSONL "
        f"(built in {time.perf_counter() - t0:.1f} s)"
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "workgym", "view", str(root), "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
        env={"PYTHONUNBUFFERED": "1", "PATH": "/usr/bin:/bin"},
    )
    try:
        assert proc.stdout is not None
        base = ""
        while not base:
            line = proc.stdout.readline()
            if not line:
                raise SystemExit("viewer exited before printing its URL")
            if line.startswith("open: "):
                base = line.split()[1].rstrip("/")
        for _ in range(200):
            try:
                urllib.request.urlopen(base + "/favicon.ico", timeout=2)
                break
            except OSError:
                time.sleep(0.05)
        print(f"server idle RSS: {rss_kb(proc.pid)['VmRSS'] / 1024:.0f} MiB")
        q = "run=runs/big"
        cases = [
            ("first request: build index + summary", f"/api/run?{q}"),
            ("run summary + facets (cached)", f"/api/run?{q}"),
            ("page 1, file order", f"/api/episodes?{q}"),
            (
                "page 1000, sorted by tokens desc",
                f"/api/episodes?{q}&sort=tokens&order=desc&offset=50000",
            ),
            ("filter success=false", f"/api/episodes?{q}&success=false"),
            ("filter flag=peek", f"/api/episodes?{q}&flag=peek"),
            (
                "filter family+split+success",
                f"/api/episodes?{q}&family=stock/t1&split=train&success=true&sort=reward",
            ),
            ("search task id substring", f"/api/episodes?{q}&q=" + urllib.parse.quote("-00777")),
            ("runs list (tree)", "/api/tree"),
        ]
        print(f"{'request':45s} {'ms':>9s}  rows")
        last: Any = None
        for label, path in cases:
            dt, data = timed(base + path)
            rows = (
                data.get("total", data.get("facets", {}).get("rows", ""))
                if isinstance(data, dict)
                else ""
            )
            print(f"{label:45s} {dt * 1000:9.1f}  {rows}")
            if isinstance(data, dict) and data.get("rows"):
                last = data["rows"][-1]
        if last is not None:
            task = urllib.parse.quote(last["task_id"])
            ep = f"/api/episode?{q}&task_id={task}&epoch={last['epoch']}"
            dt, _ = timed(base + ep)
            print(f"{'one episode page (seek + ground truth)':45s} {dt * 1000:9.1f}")
            dt, _ = timed(base + ep)
            print(f"{'one episode page again':45s} {dt * 1000:9.1f}")
        mem = rss_kb(proc.pid)
        print(
            f"server RSS now: {mem['VmRSS'] / 1024:.0f} MiB, peak (VmHWM): "
            f"{mem['VmHWM'] / 1024:.0f} MiB; JSONL on disk {size / 2**20:.0f} MiB"
        )
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
