"""The admission verdict does not depend on machine load (issue 39, item 4).

`workgym check workgym/docstore --fresh` once passed 834/834 on a quiet machine and failed
810/834 with busy loops beside it: the sleep-forever probe bounded the episode's wall time by the
clock plus 5 s, and a busy machine ended the 1 s episodes after 7-19 s. The probe now checks that
the clock cancelled the call (decision 0062). This runs the real command quiet and then with a
CPU hog on every core (bounded: each hog exits by itself after HOG_S, and is killed in `finally`),
and requires the same verdict, cell for cell.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

HOG_S = 240  # a hog outlives no test run by more than this, even if the test process dies
HOG = f"import time\nend = time.monotonic() + {HOG_S}\nwhile time.monotonic() < end: pass\n"


def _check(out: Path) -> dict[str, Any]:
    command = ["check", "workgym/docstore", "--fresh", "--no-progress", "--out", str(out)]
    result = subprocess.run(
        [sys.executable, "-m", "workgym", *command],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "PYTHONHASHSEED": "0"},
    )
    assert result.returncode in (0, 1), result.stderr[-2000:]
    report: dict[str, Any] = json.loads((out / "check.json").read_text())
    return report


def _verdict(report: dict[str, Any]) -> tuple[Any, ...]:
    cells = sorted((c["probe"], c["family"], c["passed"]) for c in report["attack"]["cells"])
    items = sorted((i["name"], i["passed"]) for i in report["items"])
    return report["passed"], tuple(items), tuple(cells)


@pytest.mark.slow
def test_docstore_check_gives_the_same_verdict_under_a_cpu_hog(tmp_path: Path) -> None:
    quiet = _check(tmp_path / "quiet")
    hogs = [
        subprocess.Popen([sys.executable, "-c", HOG]) for _ in range(max(2, os.cpu_count() or 2))
    ]
    try:
        loaded = _check(tmp_path / "loaded")
    finally:
        for hog in hogs:
            hog.kill()
        for hog in hogs:
            hog.wait(timeout=30)
    assert quiet["passed"], [i for i in quiet["items"] if not i["passed"]]
    failed = [c for c in loaded["attack"]["cells"] if not c["passed"]]
    assert _verdict(loaded) == _verdict(quiet), failed[:3]
    sleeps = [c for c in loaded["attack"]["cells"] if c["probe"] == "sleep-forever"]
    assert sleeps and all("cancelled by the clock" in c["detail"] for c in sleeps)
