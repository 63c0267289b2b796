"""Time `make demo`'s job and print the numbers docs/results.md and the README quote (issue 35).

    PYTHONPATH=src python bench/demo_run.py --dir /tmp/demo-run

Runs `python -m workgym.apps.demo` in DIR (its `runs/demo/` goes there; an existing one is
reused, as the demo itself does), timing wall and CPU seconds of the child and the load average
before and after, then reads back what the demo wrote: the learner's dev scores, the playbook,
the certificate (verdict, gain with its interval and p, suite scores), the held-out successes by
kind of task, and tokens per task in each arm. Seeds are the demo's own (learner seed 0, certify
seed 0, temperature 0 on dev and test). Asserts nothing; prints what it measured.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path


def parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--dir", required=True, help="working directory of the demo (runs/demo/ in it)")
    return p.parse_args(argv)


def arm_counts(run: Path) -> tuple[Counter[str], Counter[str], float]:
    solved: Counter[str] = Counter()
    total: Counter[str] = Counter()
    tokens = 0
    lines = (run / "episodes.jsonl").read_text().splitlines()
    for line in lines:
        e = json.loads(line)
        kind = str(e.get("family", "?")).split("/")[0]
        total[kind] += 1
        solved[kind] += bool((e.get("verdict") or {}).get("success"))
        usage = e.get("usage") or {}
        tokens += usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0)
    return solved, total, tokens / max(1, len(lines))


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    work = Path(args.dir)
    work.mkdir(parents=True, exist_ok=True)
    load_before = os.getloadavg()
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "workgym.apps.demo"], cwd=work, check=False)
    wall = time.perf_counter() - started
    child = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(
        f"demo exit {done.returncode}; wall {wall:.0f} s; CPU {child.ru_utime + child.ru_stime:.0f}"
        f" s; load average before {load_before[0]:.1f}, after {os.getloadavg()[0]:.1f}; "
        f"{os.cpu_count()} cores"
    )
    root = work / "runs" / "demo"
    runs = next(p for p in root.iterdir() if (p / "certificate" / "certificate.json").exists())
    learned = json.loads((runs / "playbook" / "bootstrap.json").read_text())
    dev_base, dev_learned = learned["baseline"]["task_means"], learned["learned"]["task_means"]
    print(
        f"learner: {learned['verified']} of {learned['episodes']} train episodes verified; "
        f"{len(learned['chosen'])} worked examples chosen; dev {sum(dev_base):.0f}/"
        f"{len(dev_base)} -> {sum(dev_learned):.0f}/{len(dev_learned)}"
    )
    for example in learned["chosen"]:
        print(f"  example from {example['family']}: {example['text']}")
    cert = json.loads((runs / "certificate" / "certificate.json").read_text())
    gain = cert["task"]["gain"]
    print(
        f"certificate: {cert['verdict']} (failed: {', '.join(cert['failed']) or 'none'}); gain "
        f"{gain['diff']:+.3f} 95% CI {gain['ci95']} p {gain['p_value']:.3g} ({gain['method']}, "
        f"{gain['n_items']} items)"
    )
    for suite in cert["suites"]:
        ni = suite["non_inferiority"]
        print(
            f"suite {suite['env']['id']}: baseline {ni['baseline_mean']:.3f} candidate "
            f"{ni['candidate_mean']:.3f} lower {ni['lower']} margin {ni['margin']} "
            f"({ni['n_items']} items)"
        )
    for arm in ("baseline", "candidate"):
        solved, total, tokens = arm_counts(runs / "certificate" / "runs" / "task" / arm)
        kinds = ", ".join(f"{k} {solved[k]}/{total[k]}" for k in sorted(total))
        print(f"test {arm}: {kinds}; {tokens:.0f} tokens per task")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
