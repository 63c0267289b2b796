"""What the plugin registry costs: the entry-point scan, a lookup, and `workgym --help`.

    python bench/registry.py

Prints the first (uncached) scan of installed entry points, the cost of a cached lookup by
name, resolving `scripted/oracle` and `scripted/probe-...` (a family: the probe catalog is
imported on first use), and the wall time of `workgym --help` in a fresh interpreter (median
of 5). Numbers only; nothing here is asserted.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f} ms"


def main() -> None:
    from workgym.core import registry
    from workgym.core.loading import ENVIRONMENTS

    registry.rescan()
    t0 = time.perf_counter()
    names = ENVIRONMENTS.names()
    first = time.perf_counter() - t0
    n = 2000
    t0 = time.perf_counter()
    for _ in range(n):
        ENVIRONMENTS.get("workgym/toy-shop")
    lookup = (time.perf_counter() - t0) / n
    from workgym.models import get_model

    t0 = time.perf_counter()
    get_model("scripted/oracle")
    oracle = time.perf_counter() - t0
    t0 = time.perf_counter()
    get_model("scripted/probe-broken-json")
    probe = time.perf_counter() - t0
    runs = []
    for _ in range(5):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "workgym", "--help"], check=True, capture_output=True)
        runs.append(time.perf_counter() - t0)
    print(f"entry-point scan, first use: {_ms(first)} ({len(names)} environments)")
    print(f"cached lookup by name:       {_ms(lookup)}")
    print(f"get_model('scripted/oracle'): {_ms(oracle)}")
    print(f"get_model('scripted/probe-broken-json') (imports the probe catalog): {_ms(probe)}")
    print(f"workgym --help, fresh interpreter (median of 5): {_ms(statistics.median(runs))}")


if __name__ == "__main__":
    main()
