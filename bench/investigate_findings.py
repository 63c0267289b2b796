"""`workgym investigate` on a real warehouse with the rule-based test double: what it reports.

    nice -n 10 .venv/bin/python bench/investigate_findings.py --db duckdb:///tpcds_sf0.1.duckdb \
        [--alerts 5] [--seed 0] [--out DIR]

Prints the wall time, then one line per finding (table, metric, the two periods and values, the
move in standard errors, the rows behind it, how many other moves are listed under it, the
claim and its verification) and the report's counts: moves merged as the same event, moves
within sampling noise, buckets carrying no alert, tables refused for their grain. The model is
`scripted/investigator` (a heuristic test double, never a learning result). Fields a report of
an older version lacks print as "-", so the same script measures before and after a change.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from workgym.envs.warehouse.investigate.findings import investigate_async
from workgym.envs.warehouse.investigate.investigator import Investigator


def _get(obj: Any, name: str) -> Any:
    value = getattr(obj, name, None)
    return "-" if value is None else value


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--db", required=True)
    parser.add_argument("--alerts", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="wg-findings-"))
    try:
        t0 = time.perf_counter()
        report = asyncio.run(
            investigate_async(args.db, Investigator(), out, alerts=args.alerts, seed=args.seed)
        )
        wall = time.perf_counter() - t0
        print(f"command: bench/investigate_findings.py --db {args.db} --alerts {args.alerts} "
              f"--seed {args.seed}; wall {wall:.1f} s")  # fmt: skip
        print(f"findings {len(report.findings)}, verified {report.verified}")
        for i, f in enumerate(report.findings, 1):
            a = f.alert
            vb, vw = a.values
            also = len(getattr(a, "also", []) or [])
            rows = _get(a, "driver_label")
            rows = rows() if callable(rows) else rows
            failed = [c.rule for c in getattr(f, "checks", []) if not c.passed]
            print(
                f"{i}. {a.frame.fact} {a.metric.kind}({a.metric.column or ''}) "
                f"{a.baseline[0]:%Y-%m-%d} -> {a.window[0]:%Y-%m-%d}: {vb} -> {vw}, "
                f"surprise {a.surprise:.1f}x, z {_get(a, 'z')}, rows behind: {rows}, "
                f"also {also}; claim {f.cause_type}, "
                f"{'verified' if f.verified else 'unverified ' + str(failed)}"
            )
        print(f"merged as the same event: {_get(report, 'merged')}")
        print(f"moves within sampling noise: {_get(report, 'noise')} "
              f"(bar {_get(report, 'z_needed')} standard errors)")  # fmt: skip
        for line in getattr(report, "artefacts", []) or []:
            print(f"buckets carrying no alert: {line}")
        for r in getattr(report, "refused", []) or []:
            print(f"refused: {r.reason}")
        print(f"skipped: {report.skipped}")
    finally:
        if args.out is None:
            shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    main()
