"""Test doubles for certificate tests: a tiny job environment, two tiny suites, scripted policies.

Each scripted policy solves an item when a fixed hash of the item id falls below its skill for
that environment, so a stronger policy solves a superset of a weaker one's items. They are test
doubles: their results say nothing about learning.
"""

from __future__ import annotations

import asyncio
import atexit
import functools
import hashlib
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

import workgym as wg
from workgym.core.messages import Message, ToolCall
from workgym.guards.check import check_async
from workgym.testing.scripted import register_scripted

ALL_TEST = wg.SplitSpec(salt="certify-tests", train=0.0, dev=0.0, test=1.0)
# The job keeps 12 families in test and two each in train and dev (admission wants all three).
JOB_SPLIT = wg.SplitSpec(
    salt="certify-tests",
    overrides={"train-a": "train", "train-b": "train", "dev-a": "dev", "dev-b": "dev"}
    | {f"fam{f:02d}": "test" for f in range(12)},
)
JOB, SUITE_A, SUITE_B, BROKEN = (
    "test-certify/job",
    "test-certify/suite-a",
    "test-certify/suite-b",
    "test-certify/broken-job",
)


@wg.tool(final=True)
def submit_answer(answer: int) -> str:
    """Submit the final answer.

    Args:
        answer: The answer as a whole number.
    """
    return "recorded"


@wg.register
class CertJob(wg.Environment):
    """12 held-out families x 5 items of `a + b` (plus a few train and dev items)."""

    id = JOB
    tools = [submit_answer]
    limits = wg.Limits(max_turns=3)

    def tasks(self) -> wg.TaskSet:
        items = [
            wg.Task(id=f"job-{f}-{i}", family=f"fam{f:02d}", prompt=f"{f} + {i}?", answer=f + i)
            for f in range(12)
            for i in range(5)
        ]
        items += [
            wg.Task(id=f"job-{fam}-{i}", family=fam, prompt=f"{i} + 1000?", answer=1000 + i)
            for fam in ("train-a", "train-b", "dev-a", "dev-b")
            for i in range(3)
        ]
        return wg.TaskSet(items, JOB_SPLIT)

    def verify(self, task: wg.Task, episode: Any) -> wg.Verdict:
        ok = episode.answer == task.answer
        return wg.Verdict.correct() if ok else wg.Verdict.wrong()


@wg.register
class BrokenJob(CertJob):
    """Its oracle submits wrong answers, so `workgym check` fails on it."""

    id = BROKEN

    def oracle(self, task: wg.Task) -> list[Message]:
        args = json.dumps({"answer": task.answer + 1})
        return [
            Message(
                role="assistant",
                tool_calls=[ToolCall(id="o", name="submit_answer", arguments=args)],
            )
        ]


class _TextSuite(wg.Environment):
    """Text answers, 10 families x 6 items."""

    tools = []
    limits = wg.Limits(max_turns=1)

    def tasks(self) -> wg.TaskSet:
        items = [
            wg.Task(id=f"{self.id}-{f}-{i}", family=f"s{f}", prompt=f"say {f * i}", answer=f * i)
            for f in range(10)
            for i in range(6)
        ]
        return wg.TaskSet(items, ALL_TEST)

    def verify(self, task: wg.Task, episode: Any) -> wg.Verdict:
        ok = str(episode.answer).strip() == str(task.answer)
        return wg.Verdict.correct() if ok else wg.Verdict.wrong()


@wg.register
class SuiteA(_TextSuite):
    id = SUITE_A


@wg.register
class SuiteB(_TextSuite):
    id = SUITE_B


def _u(task_id: str) -> float:
    return int(hashlib.sha256(task_id.encode()).hexdigest()[:8], 16) / 2**32


def skilled(name: str, skill: dict[str, float], verbose: int = 0) -> str:
    """Register `scripted/<name>` that solves items with hash below `skill[env id]`."""

    def script(task: wg.Task, env: wg.Environment) -> list[Message]:
        ok = _u(task.id) < skill.get(env.id, 0.5)
        answer = task.answer if ok else task.answer + 1
        padding = " thinking" * verbose
        if env.has_final_tool:
            call = ToolCall(id="c", name="submit_answer", arguments=json.dumps({"answer": answer}))
            return [Message(role="assistant", content=padding, tool_calls=[call])]
        return [Message(role="assistant", content=f"{answer}")]

    register_scripted(name, lambda: wg.TaskScript(f"scripted/{name}", script))
    return f"scripted/{name}"


WEAK = skilled("cert-weak", {JOB: 0.4, BROKEN: 0.4, SUITE_A: 0.7, SUITE_B: 0.6}, verbose=40)
STRONG = skilled("cert-strong", {JOB: 0.85, BROKEN: 0.85, SUITE_A: 0.7, SUITE_B: 0.6})
SAME = skilled("cert-same", {JOB: 0.4, SUITE_A: 0.7, SUITE_B: 0.6})
REGRESS = skilled("cert-regress", {JOB: 0.85, SUITE_A: 0.7, SUITE_B: 0.2})


@functools.cache
def admission_dir(env_id: str) -> Path:
    """Run the real `workgym check` once per session; return the folder of its admission.json.

    It takes ~20 s (the probes), so the test modules share one result per environment.
    """
    out = Path(tempfile.mkdtemp(prefix="workgym-certify-check-"))
    atexit.register(shutil.rmtree, out, True)
    env = wg.load(env_id)
    asyncio.run(check_async(env, out / "check", progress=False, admission_dir=out))
    return out


def own_admission(env_id: str, tmp: Path) -> Path:
    """A copy of the session's admission folder for one test: the looks log of a registered
    environment lives beside admission.json (certify/looks.py), so a shared folder would carry
    attempt numbers from one test into the next."""
    return Path(shutil.copytree(admission_dir(env_id), tmp / "admission"))
