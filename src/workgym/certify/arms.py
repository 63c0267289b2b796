"""Running the two arms of a certificate: same items, same seeds, interleaved, resumable.

Both arms go through the ordinary runner into ordinary run directories, so an interrupted
certificate resumes by re-running the same command, and every episode can be opened in the
viewer. The arms run at the same time over the same task order (each with half the
concurrency), so drift in a provider (latency, load, a silent model update) hits both alike.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from workgym.core.environment import Environment
from workgym.core.errors import ConfigError
from workgym.core.model import Sampling
from workgym.run.options import EvalOptions
from workgym.run.policy import Policy
from workgym.run.rundir import EPISODES, RunSpec
from workgym.run.runner import eval_async


@dataclass(frozen=True)
class Pair:
    """One environment to run both arms on, and where their run directories go."""

    env: Environment
    split: str
    baseline_out: Path
    candidate_out: Path


def policy_from_spec(
    spec: RunSpec, *, base_url: str | None = None, api_key: str | None = None
) -> Policy:
    """Rebuild the policy a run used (to resume it or run a missing suite with it)."""
    p = spec.policy
    policy = Policy(
        str(p["model"]),
        system_prompt=str(p.get("system_prompt") or ""),
        playbook=p.get("playbook"),
        sampling=Sampling(**(p.get("sampling") or {})),
        base_url=base_url,
        api_key=api_key,
    )
    if policy.hash != spec.policy_hash:
        raise ConfigError(
            f"cannot rebuild the policy of this run (hash {policy.hash} != {spec.policy_hash}); "
            "resume it with the command that made it"
        )
    return policy


def _count_lines(path: Path) -> int:
    try:
        with path.open("rb") as fh:
            return sum(chunk.count(b"\n") for chunk in iter(lambda: fh.read(1 << 20), b""))
    except FileNotFoundError:
        return 0


async def _watch(rows: list[tuple[str, Path, int]], stop: asyncio.Event) -> None:
    """A progress bar per run directory, fed by counting finished lines (the runner's own
    bars are off: two live bars on one terminal garble each other)."""
    bar = Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=Console(stderr=True),
    )
    ids = [bar.add_task(label, total=total) for label, _, total in rows]
    with bar:
        while True:
            for task_id, (_, path, _) in zip(ids, rows, strict=True):
                bar.update(task_id, completed=_count_lines(path / EPISODES))
            if stop.is_set():
                break
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), 0.5)


async def run_pair(
    pair: Pair,
    baseline: Policy,
    candidate: Policy,
    *,
    epochs: int,
    seed: int,
    limit: int | None,
    concurrency: int,
    forced: list[str],
    progress: bool,
) -> None:
    """Run (or resume) both arms on one environment, interleaved, with the same seeds."""
    per_arm = max(1, concurrency // 2)
    n_tasks = len(pair.env.taskset.split(pair.split))
    total = (min(n_tasks, limit) if limit is not None else n_tasks) * epochs
    stop = asyncio.Event()
    rows = [
        (f"{pair.env.id} baseline", pair.baseline_out, total),
        (f"{pair.env.id} candidate", pair.candidate_out, total),
    ]
    watcher = asyncio.create_task(_watch(rows, stop)) if progress else None
    try:
        await asyncio.gather(
            *(
                eval_async(
                    pair.env,
                    split=pair.split,
                    epochs=epochs,
                    out=out,
                    options=EvalOptions(
                        policy=policy,
                        seed=seed,
                        limit=limit,
                        concurrency=per_arm,
                        progress=False,
                        forced=forced,
                    ),
                )
                for policy, out in ((baseline, pair.baseline_out), (candidate, pair.candidate_out))
            )
        )
    finally:
        stop.set()
        if watcher is not None:
            await watcher
