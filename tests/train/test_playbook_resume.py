"""A training run killed mid-iteration (SIGKILL, no cleanup) resumes to exactly the playbook and
log that an uninterrupted run produces."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from test_playbook_toy import run_toy

from workgym.train.playbook.runlog import read_events

SCRIPT = """
import sys
import workgym.envs.toy_rules.env as tr
from workgym.train.playbook.api import train_playbook
from workgym.train.playbook.config import TrainConfig
train_playbook(tr.ToyRules(), tr.ToyRulesAgent(latency_s=float(sys.argv[2])),
               reflector=tr.ToyRulesReflector(), out=sys.argv[1],
               config=TrainConfig(concurrency=4))
"""


def logged(path: Path) -> list[dict[str, Any]]:
    out = []
    if path.exists():
        for line in path.read_text().splitlines():
            try:
                out.append(json.loads(line))
            except ValueError:
                break  # a line still being written
    return out


def strip(out: Path) -> list[dict[str, Any]]:
    return [{k: v for k, v in e.items() if k != "time"} for e in read_events(out)]


def test_sigkill_mid_iteration_then_resume_matches_an_uninterrupted_run(tmp_path: Path) -> None:
    out = tmp_path / "killed"
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT, str(out), "0.005"])
    deadline = time.time() + 120
    try:
        while time.time() < deadline:
            if any(
                e["kind"] == "rollouts" and e["iteration"] == 2 for e in logged(out / "log.jsonl")
            ):
                break
            assert proc.poll() is None, "the run ended before it could be killed"
            time.sleep(0.002)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait()
    at_kill = logged(out / "log.jsonl")
    in_two = [e["kind"] for e in at_kill if e.get("iteration") == 2]
    assert "rollouts" in in_two and "iteration" not in in_two, "the kill must land mid-iteration"
    assert not any(e["kind"] == "stop" for e in at_kill)

    subprocess.run([sys.executable, "-c", SCRIPT, str(out), "0"], check=True)
    reference = run_toy(tmp_path / "whole")
    assert (out / "playbook.md").read_text() == reference.playbook_path.read_text()
    assert (out / "playbook.history.jsonl").read_bytes() == (
        tmp_path / "whole" / "playbook.history.jsonl"
    ).read_bytes()
    assert strip(out) == strip(tmp_path / "whole")  # same decisions, none lost or repeated
    assert json.loads((out / "ledger.json").read_text()) == json.loads(
        (tmp_path / "whole" / "ledger.json").read_text()
    )
