"""`workgym attack`, `workgym review` and `workgym baselines`: the guards from the command line.

Declared in the `workgym.commands` entry-point group. Heavy imports stay inside the commands.
Every probe and baseline attacker is a `scripted/...` test double (the `probe-*` and
`baseline-*` families of the `workgym.scripted` entry points), so that
`workgym eval ENV --model scripted/probe-<name>` replays a probe as an ordinary run.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from workgym.apps.cli.env_options import ImportModules, load_env
from workgym.apps.cli.hints import next_line

if TYPE_CHECKING:
    from workgym.guards.review import Decision, TrustedOutcomes

out = Console(soft_wrap=True)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text)


def attack(
    env: Annotated[str, typer.Argument(help="environment id or directory")],
    out_dir: Annotated[Path | None, typer.Option("--out", help="where attack.json goes")] = None,
    per_family: Annotated[int, typer.Option(min=1, help="tasks sampled per family")] = 2,
    max_tasks: Annotated[
        int, typer.Option(min=0, help="cap on sampled tasks, families taken across kinds; 0: none")
    ] = 64,  # workgym.guards.attack.MAX_TASKS
    probe: Annotated[
        list[str] | None, typer.Option(help="run only this probe (repeatable)")
    ] = None,
    replays: Annotated[
        Path | None, typer.Option(help="directory of exploit records to replay as probes")
    ] = None,
    seed: int = 0,
    clock: Annotated[float, typer.Option(help="episode clock (s) for the sleep probe")] = 1.0,
    list_probes: Annotated[bool, typer.Option("--list", help="list the probes and exit")] = False,
    progress: bool = True,
    imports: ImportModules = None,
) -> None:
    """Run every applicable probe on every task family; print probe x family: expected, got."""
    import time

    from workgym.guards.attack import attack_async
    from workgym.guards.attack_report import attack_tables
    from workgym.guards.catalog import by_name, probes, todo
    from workgym.guards.replay import ReplayProbe

    if list_probes:
        table = Table("probe", "group", "expected", "attack")
        for p in probes():
            table.add_row(p.name, p.group, str(p.expect), p.summary)
        for t in todo():
            table.add_row(t.name, t.group, "[dim]todo[/]", f"{t.summary} (needs {t.needs})")
        out.print(table)
        return
    environment = load_env(env, imports)
    try:
        chosen = by_name(probe or [])
    except ValueError as exc:
        from workgym.core.errors import ConfigError

        raise ConfigError(str(exc)) from exc
    if replays is not None:
        chosen = [*chosen, *ReplayProbe.load_dir(replays)]
    started = time.perf_counter()
    report = asyncio.run(
        attack_async(
            environment,
            per_family=per_family,
            max_tasks=max_tasks or None,
            probes=None if not probe and replays is None else chosen,
            seed=seed,
            clock_s=clock,
            progress=progress,
        )
    )
    target = out_dir or Path("runs") / "attack" / _slug(environment.id)
    path = report.write(target)
    for table in attack_tables(report):
        out.print(table)
    if report.todo:
        out.print(f"not built yet ({len(report.todo)}): " + ", ".join(t.name for t in report.todo))
    out.print(
        f"attack {'PASSED' if report.passed else 'FAILED'}: {len(report.cells)} cells, "
        f"{report.episodes} probe runs, {time.perf_counter() - started:.1f} s; {report.coverage}"
    )
    out.print(f"report: {path} and {target / 'attack.html'}")
    if not report.passed:
        out.print(f"next: workgym eval {env} --model scripted/probe-<name> --split all")
        raise typer.Exit(1)
    out.print(next_line("check", env, imports=imports), highlight=False)


def review(
    run: Annotated[Path, typer.Argument(help="run directory")],
    task: Annotated[str | None, typer.Option(help="task id of the episode to mark")] = None,
    epoch: Annotated[int, typer.Option(help="epoch of the episode to mark")] = 0,
    flag: Annotated[
        list[str] | None, typer.Option(help="flag to mark (repeatable; default: all of them)")
    ] = None,
    accept: Annotated[bool, typer.Option("--accept", help="the flag was a false alarm")] = False,
    exploit: Annotated[bool, typer.Option("--exploit", help="a confirmed reward hack")] = False,
    note: Annotated[str, typer.Option(help="why")] = "",
    export: Annotated[
        str | None, typer.Option(help="write this exploit as a replay probe with this name")
    ] = None,
    export_dir: Annotated[Path, typer.Option(help="where --export writes")] = Path(
        "tests/guards/exploits"
    ),
) -> None:
    """List flagged successes of a run, or mark flags as accepted or confirmed exploits."""
    from workgym.core.episode import upgrade_record
    from workgym.core.errors import ConfigError
    from workgym.guards.replay import export_exploit
    from workgym.guards.review import TrustedOutcomes, append_review, episode_flags

    if accept and exploit:
        raise ConfigError("pass --accept or --exploit, not both")
    if export and task is None:
        raise ConfigError("name the episode to export: --task TASK_ID [--epoch N]")
    if (accept or exploit) and task is None and not flag:
        raise ConfigError(
            "name the episode (--task TASK_ID [--epoch N]), or mark every flagged success "
            "with a flag at once: --flag FLAG --note WHY"
        )
    outcomes = TrustedOutcomes.from_run(run)
    if (accept or exploit) and task is None:
        _review_by_flag(run, outcomes, flag or [], "exploit" if exploit else "accepted", note)
        outcomes = TrustedOutcomes.from_run(run)
    if task is not None and (accept or exploit):
        record = outcomes.records.get((task, epoch))
        if record is None:
            raise ConfigError(f"no episode ({task}, epoch {epoch}) in {run}")
        for f in flag or episode_flags(record):
            r = append_review(run, task, epoch, f, "exploit" if exploit else "accepted", note)
            out.print(f"{r.decision}: {task} epoch {epoch} {f}")
        outcomes = TrustedOutcomes.from_run(run)
    if export is not None and task is not None:
        path = export_exploit(run, task, epoch, export, export_dir)
        out.print(f"exploit record: {path}")
        out.print(
            "next: generalise it into a probe in src/workgym/guards/found.py (docs/guards.md)"
        )
        return
    table = Table(title=f"flagged successes in {run}")
    for column in ("task", "epoch", "flag", "why", "review"):  # fold, never cut: names matter
        table.add_column(column, overflow="fold")
    for (t, e), record in sorted(outcomes.records.items()):
        if not record.get("verdict", {}) or not record["verdict"].get("success"):
            continue
        why = (upgrade_record(record).get("audit") or {}).get("details") or {}
        for f in episode_flags(record):
            found = outcomes.reviews.get((t, e, f))
            state = "[yellow]unreviewed[/]" if found is None else found.decision
            table.add_row(t, str(e), f, escape(str(why.get(f, ""))), state)
    out.print(table)
    s = outcomes.summary()
    out.print(
        f"{s.successes} successes, {s.flagged_successes} flagged, {s.trusted_successes} trusted; "
        f"{s.unreviewed_flags} flags unreviewed, {s.exploits} confirmed exploits"
    )
    if outcomes.pending():
        t, e, flags = outcomes.pending()[0]
        same = sum(flags[0] in f for _, _, f in outcomes.pending())
        out.print(
            f"next: workgym review {run} --task {t} --epoch {e} --accept|--exploit --note WHY",
            highlight=False,
        )
        if same > 1:
            out.print(
                f"  or, for all {same} with one judgement: workgym review {run} "
                f"--flag {flags[0]} --accept --note WHY",
                highlight=False,
            )


def _review_by_flag(
    run: Path, outcomes: TrustedOutcomes, flags: list[str], decision: Decision, note: str
) -> None:
    """Mark every unreviewed flagged success carrying one of `flags` (bulk review, with a
    note saying why: one judgement applied to many episodes must be written down)."""
    from workgym.core.errors import ConfigError
    from workgym.guards.review import append_review, episode_flags, is_success

    if not note.strip():
        raise ConfigError(f"a review of every {', '.join(flags)} at once needs --note WHY")
    marked = 0
    for (t, e), record in sorted(outcomes.records.items()):
        if not is_success(record):
            continue
        for f in episode_flags(record):
            if f in flags and (t, e, f) not in outcomes.reviews:
                append_review(run, t, e, f, decision, note)
                marked += 1
    if not marked:
        seen = sorted({f for r in outcomes.records.values() for f in episode_flags(r)})
        raise ConfigError(
            f"no unreviewed flagged success in {run} has {', '.join(flags)}; "
            f"its flags: {', '.join(seen) or 'none'}"
        )
    out.print(f"{decision}: {marked} flags ({', '.join(flags)}) in {run}: {note}", highlight=False)


def baselines(
    env: Annotated[str, typer.Argument(help="environment id or directory")],
    split: Annotated[str, typer.Option(help="train, dev, test or all")] = "dev",
    out_dir: Annotated[Path | None, typer.Option("--out", help="where the runs go")] = None,
    progress: bool = True,
    imports: ImportModules = None,
) -> None:
    """Run the null, constant, enumerating and random baselines; report them with thresholds."""
    from workgym.apps.cli.main import TEST_SPLITS, look_at_test
    from workgym.guards.baselines import run_baselines

    environment = load_env(env, imports)
    environment.taskset.split(split)  # a typo'd split fails here, before the look
    target = out_dir or Path("runs") / "baselines" / _slug(environment.id) / split
    if split in TEST_SPLITS:
        look_at_test(environment, env, "baselines", "scripted baselines", target)
    report = asyncio.run(run_baselines(environment, target, split=split, progress=progress))
    table = Table("baseline", "mean reward", "success", "threshold", "result", title=env)
    for r in report.results:
        limit = "reported" if r.threshold is None else f"<= {r.threshold}"
        mark = "[green]pass[/]" if r.passed else "[bold red]FAIL[/]"
        table.add_row(r.name, f"{r.mean_reward:.3f}", f"{r.success_rate:.3f}", limit, mark)
    out.print(table)
    out.print(f"runs: {target}")
    if not report.passed:
        out.print("a baseline is above its threshold: the reward is too easy to game")
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command()(attack)
    app.command()(review)
    app.command()(baselines)
