"""`make demo`: the main job on what exists, end to end, with no model weights and no network.

Checks the built-in environment, evaluates the oracle and the null baseline (both test doubles,
named as such), and, when an OpenAI-compatible endpoint is configured, a real model too.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from rich.console import Console

from workgym.check import check_async
from workgym.environment import load
from workgym.runner import eval_async

ENV_ID = "workgym/toy-shop"


async def demo(root: Path) -> int:
    console = Console()
    env = load(ENV_ID)
    console.rule(f"workgym check {ENV_ID}")
    report = await check_async(env, root / "check")
    for item in report.items:
        console.print(f"  {'pass' if item.passed else 'FAIL'}  {item.name}: {item.detail}")
    arms = ["scripted/oracle", "scripted/null"]
    model = os.environ.get("WORKGYM_DEMO_MODEL")
    if os.environ.get("OPENAI_BASE_URL") and model:
        arms.append(f"openai/{model}")
    else:
        console.print(
            "no model endpoint configured: set OPENAI_BASE_URL and WORKGYM_DEMO_MODEL "
            "to evaluate a real model too"
        )
    for arm in arms:
        console.rule(f"workgym eval {ENV_ID} --model {arm} --split dev")
        run = await eval_async(env, arm, split="dev", out=root / arm.replace("/", "_"))
        run.summary().print(console)
    console.print(f"runs written under {root}/; next: workgym summary {root}/scripted_oracle")
    return 0 if report.passed else 1


def main() -> None:
    raise SystemExit(asyncio.run(demo(Path("runs") / "demo")))


if __name__ == "__main__":
    main()
