"""`workgym check` twice: the second run re-uses the admission of the unchanged environment.

Runs the command as a user does (a subprocess, the CLI's own start-up included) in a fresh
directory, first in full, then again, and prints wall and CPU seconds of each. The second run
re-verifies the data files only (docs/decisions/0041-check-reuse.md). Prints numbers; asserts
nothing. `make demo` itself is measured the same way by timing it twice.

    python bench/check_reuse.py [--env workgym/toy-shop] [--env runs/demo/env]
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def timed(argv: list[str], cwd: Path) -> tuple[float, float, str]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    result = subprocess.run(argv, cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    reused = "re-used" if "re-used the check" in result.stdout else "full"
    return wall, cpu, f"{reused}, exit {result.returncode}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--env", action="append", help="environment id or directory")
    args = parser.parse_args()
    for env in args.env or ["workgym/toy-shop"]:
        ref = str(Path(env).resolve()) if Path(env).exists() else env
        with tempfile.TemporaryDirectory() as tmp:
            argv = [sys.executable, "-m", "workgym", "check", ref, "--no-progress"]
            for attempt in ("first", "second"):
                wall, cpu, what = timed(argv, Path(tmp))
                print(f"{env}: {attempt} check {wall:.1f} s wall, {cpu:.1f} s CPU ({what})")


if __name__ == "__main__":
    main()
