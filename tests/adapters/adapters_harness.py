"""Helpers of the adapter tests: the scripted double they share and a CLI runner."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

DOUBLE = "scripted/mixed"  # right on some tasks, wrong on others: rewards differ by task
ENV_ID = "workgym/toy-shop"


def run_cli(args: list[str], *, env: dict[str, str] | None = None, timeout: float = 240) -> str:
    """Run a command line (another project's CLI, or workgym's) and return its output."""
    full_env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), **(env or {})}
    done = subprocess.run(
        args, capture_output=True, text=True, timeout=timeout, env=full_env, check=False
    )
    assert done.returncode == 0, f"{args[0]} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


def bin_path(name: str) -> str:
    """A console script of this interpreter's environment (vf-eval, inspect, workgym)."""
    return str(Path(sys.executable).parent / name)
