"""`workgym generate warehouse --db URL --out DIR`: the command line of the generator.

Heavy imports stay inside the command so `workgym --help` stays fast. The `generate` group is
shared: another feature that generates environments adds its own command to the same group.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from workgym.apps.cli.hints import next_line

GROUP = "generate"


def _group(app: typer.Typer) -> typer.Typer:
    """The `generate` sub-app, created on first use and shared by every generator."""
    for info in app.registered_groups:
        if info.name == GROUP and isinstance(info.typer_instance, typer.Typer):
            return info.typer_instance
    group = typer.Typer(
        name=GROUP, help="Generate an environment from a real source.", no_args_is_help=True
    )
    app.add_typer(group, name=GROUP)
    return group


def register(app: typer.Typer) -> None:
    _group(app).command("warehouse")(warehouse)


def warehouse(
    db: Annotated[
        str,
        typer.Option(
            help="duckdb:///file.duckdb, sqlite:///file.db (relative; //// absolute), "
            "postgresql://user:pass@host/db, builtin:nycflights13 or builtin:tpch?sf=0.1"
        ),
    ],
    out: Annotated[Path, typer.Option(help="environment directory to write")],
    tables: Annotated[
        list[str] | None, typer.Option(help="only these tables (repeat, or comma-separated)")
    ] = None,
    seed: int = 0,
    tasks: Annotated[int, typer.Option(min=10, help="task budget over all families")] = 400,
    row_cap: Annotated[
        int | None, typer.Option(help="hash-sample tables larger than this many rows")
    ] = None,
    hard: Annotated[bool, typer.Option(help="describe_table hides inferred keys")] = False,
    query_budget: Annotated[int, typer.Option(min=1, help="run_sql calls per episode")] = 30,
    suites: Annotated[bool, typer.Option(help="build fuzzed SQL test suites")] = True,
    investigations: Annotated[
        bool, typer.Option(help="plant causes for F9 investigation tasks")
    ] = True,
    env_id: Annotated[
        str | None,
        typer.Option(
            "--id", help="environment id (default: warehouse/<source name>, e.g. warehouse/tpcds)"
        ),
    ] = None,
    threshold: Annotated[
        list[str] | None,
        typer.Option(help="baseline ceiling for this environment, NAME=VALUE (e.g. constant=0.15)"),
    ] = None,
    threshold_reason: Annotated[
        str, typer.Option(help="why the ceilings differ (required with --threshold)")
    ] = "",
    overwrite: Annotated[
        bool,
        typer.Option(
            help="replace an existing environment at --out (in one rename, once the new one "
            "is complete)"
        ),
    ] = False,
    progress: bool = True,
) -> None:
    """Snapshot a warehouse read-only and generate an environment of SQL tasks from it."""
    from workgym.envs.warehouse.generate.pipeline import GenerateOptions, generate

    names = [n.strip() for t in tables or [] for n in t.split(",") if n.strip()] or None
    ceilings: dict[str, float] = {}
    for item in threshold or []:
        name, _, value = item.partition("=")
        try:
            ceilings[name.strip()] = float(value)
        except ValueError:
            raise typer.BadParameter(
                f"{item!r}: write NAME=VALUE, e.g. constant=0.15", param_hint="--threshold"
            ) from None
    options = GenerateOptions(
        db=db,
        out=out,
        tables=names,
        seed=seed,
        tasks=tasks,
        row_cap=row_cap,
        hard=hard,
        query_budget=query_budget,
        suites=suites,
        investigations=investigations,
        env_id=env_id,
        thresholds=ceilings,
        threshold_reason=threshold_reason,
    )
    report = generate(options, progress=progress, overwrite=overwrite)
    console = Console(soft_wrap=True)
    table = Table("family", "tasks", "awkward", "tried", "rejected (top reasons)", title=f"{out}")
    for f in report.families:
        reasons = ", ".join(f"{k} {v}" for k, v in list(f.rejected.items())[:3])
        table.add_row(f"{f.family} {f.name}", str(f.kept), str(f.awkward), str(f.tried), reasons)
    inv = report.investigations
    table.add_row(
        "F9 investigation", str(inv.get("tasks", 0)), "-", "-", str(inv.get("status", ""))
    )
    console.print(table)
    short = [line for line in report.skipped if "below its quota" in line]
    for line in short:
        console.print(f"[yellow]warning[/yellow] {line}", highlight=False)
    share = report.awkward.get("share", 0.0)
    console.print(
        f"{report.tasks} tasks, {share:.0%} awkward; splits "
        + ", ".join(f"{k} {v}" for k, v in report.splits.items())
    )
    failed = [
        k for k, v in report.checks.items() if isinstance(v, dict) and v.get("passed") is False
    ]
    console.print("leakage checks: " + ("all passed" if not failed else f"FAILED {failed}"))
    if report.lint is not None:
        bad = report.lint.failing
        console.print(
            "task lint: " + report.lint.summary() + (f"; OVER 2%: {bad}" if bad else ""),
            highlight=False,
        )
    if report.skipped:
        console.print(f"skipped ({len(report.skipped)}):")
        for line in report.skipped[:15]:
            console.print(f"  - {line}", highlight=False)
        if len(report.skipped) > 15:
            console.print(f"  ... and {len(report.skipped) - 15} more in generation_report.json")
    console.print(f"report: {out / 'generation_report.json'}")
    console.print(next_line("check", out), highlight=False)
    if failed:
        raise typer.Exit(1)
