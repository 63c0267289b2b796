"""An environment package ships its own probe: `workgym attack` runs it without workgym knowing
the package exists (the `workgym.probes` and `workgym.environments` entry-point groups).

The package is installed the way pip leaves it: a `*.dist-info` folder with `entry_points.txt`
next to its module, on the path of a fresh `workgym` process; nothing faked in
importlib.metadata, nothing imported by the test itself.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

PACKAGE = '''
"""acme-riddles: riddles whose answer is one word, and the probe of their kind."""

import workgym as wg
from workgym.guards.capabilities import FINAL_ANSWER, submit
from workgym.guards.probes import Expect, ScriptProbe

WORDS = ["lantern", "harbor", "meadow", "copper", "thimble", "orchard"]


@wg.tool(final=True)
def answer(word: str) -> str:
    """Submit the one-word answer. This ends the task."""
    return "answer recorded"


class Riddles(wg.Environment):
    """Correct: the exact word."""

    id = "acme/riddles"
    version = "1"
    tools = [answer]
    limits = wg.Limits(max_turns=3)

    def tasks(self) -> wg.TaskSet:
        return wg.TaskSet(
            [
                wg.Task(id=f"r{i}", family=f"riddle/{i % 3}", prompt=f"Riddle {i}.", answer=w)
                for i, w in enumerate(WORDS)
            ]
        )

    def verify(self, task: wg.Task, episode: wg.Episode) -> wg.Verdict:
        ok = episode.answer == task.answer
        return wg.Verdict.correct() if ok else wg.Verdict.wrong()


class AnagramRiddles(Riddles):
    """Weak: any anagram of the word passes."""

    id = "acme/riddles-anagram"

    def verify(self, task: wg.Task, episode: wg.Episode) -> wg.Verdict:
        ok = sorted(str(episode.answer)) == sorted(task.answer)
        return wg.Verdict.correct() if ok else wg.Verdict.wrong()


class Reversed(ScriptProbe):
    """The gold word spelled backwards: the letters are right, the answer is not."""

    name = "acme-reversed"
    group = "acme"
    applies_to = frozenset({FINAL_ANSWER})
    expect = Expect.must_fail
    summary = "the gold word spelled backwards"

    def script(self, env, task):
        word = str(task.answer)
        return None if word == word[::-1] else submit(env, task, word[::-1])


PROBES = [Reversed()]
'''

ENTRY_POINTS = """\
[workgym.environments]
acme/riddles = acme_riddles:Riddles
acme/riddles-anagram = acme_riddles:AnagramRiddles

[workgym.probes]
acme = acme_riddles:PROBES
"""


@pytest.fixture
def site(tmp_path: Path) -> Path:
    """A folder holding the `acme-riddles` distribution as pip installs it."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "acme_riddles.py").write_text(textwrap.dedent(PACKAGE))
    info = site / "acme_riddles-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-riddles\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS)
    return site


def _workgym(*args: str, cwd: Path, site: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, COLUMNS="200")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), env.get("PYTHONPATH")]))
    return subprocess.run(
        [sys.executable, "-m", "workgym", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=300,
    )


def _cells(out: Path) -> dict[str, list[dict[str, object]]]:
    report = json.loads((out / "attack.json").read_text())
    cells: dict[str, list[dict[str, object]]] = {}
    for cell in report["cells"]:
        cells.setdefault(str(cell["probe"]), []).append(cell)
    return cells


def test_the_package_probe_is_listed_beside_the_builtin_ones(site: Path, tmp_path: Path) -> None:
    result = _workgym("attack", "acme/riddles", "--list", cwd=tmp_path, site=site)
    assert result.returncode == 0, result.stderr
    rows = [line for line in result.stdout.splitlines() if "acme-reversed" in line]
    assert len(rows) == 1 and "acme" in rows[0].split("acme-reversed", 1)[1]
    assert "empty-answer" in result.stdout  # the built-in catalog is still there


def test_workgym_attack_runs_the_package_probe_on_the_package_environment(
    site: Path, tmp_path: Path
) -> None:
    out = tmp_path / "robust"
    result = _workgym(
        "attack", "acme/riddles", "--probe", "acme-reversed", "--probe", "empty-answer",
        "--out", str(out), "--no-progress", cwd=tmp_path, site=site,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    cells = _cells(out)
    assert sorted(cells) == ["acme-reversed", "empty-answer"]
    assert {c["family"] for c in cells["acme-reversed"]} == {"riddle/0", "riddle/1", "riddle/2"}
    assert all(c["passed"] and c["got"] == "fail" for c in cells["acme-reversed"])


def test_the_package_probe_catches_the_weak_verifier_it_was_written_for(
    site: Path, tmp_path: Path
) -> None:
    out = tmp_path / "weak"
    result = _workgym(
        "attack", "acme/riddles-anagram", "--probe", "acme-reversed", "--out", str(out),
        "--no-progress", cwd=tmp_path, site=site,
    )  # fmt: skip
    assert result.returncode == 1, result.stdout + result.stderr
    assert "attack FAILED" in result.stdout
    cells = _cells(out)["acme-reversed"]
    assert cells and all(not c["passed"] and c["got"] == "pass" for c in cells)
