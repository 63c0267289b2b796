"""`workgym imitation-gap ENV --model M [--checkpoints C ...]`: does imitation overstate skill?

Scores each model teacher-forced (the gold prefix at every step) and free-running (the real
episode loop) on the same tasks, per family, and fits the gap against the room to fail. Heavy
imports stay inside the command so `workgym --help` stays fast.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from workgym.apps.cli.device_options import Device, Dtype, use_placement
from workgym.apps.cli.env_options import ImportModules, load_env

out = Console(soft_wrap=True)


def imitation_gap_cmd(
    env: Annotated[str, typer.Argument(help="environment id or directory")],
    model: Annotated[str, typer.Option(help="openai/<model>, hf/<path> or scripted/<name>")],
    checkpoints: Annotated[
        list[str] | None,
        typer.Option("--checkpoints", help="more models to score the same way (repeatable)"),
    ] = None,
    split: Annotated[str, typer.Option(help="train or dev (the test split stays sealed)")] = "dev",
    epochs: Annotated[int, typer.Option(min=1, help="free-running epochs per task")] = 1,
    limit: Annotated[int | None, typer.Option(help="only the first N tasks")] = None,
    concurrency: Annotated[int, typer.Option(min=1)] = 4,
    base_url: Annotated[str | None, typer.Option(help="OpenAI-compatible endpoint")] = None,
    api_key: Annotated[str | None, typer.Option(help="key for the endpoint")] = None,
    system_prompt: Annotated[str, typer.Option(help="policy system prompt")] = "",
    out_dir: Annotated[Path | None, typer.Option("--out", help="experiment directory")] = None,
    progress: bool = True,
    imports: ImportModules = None,
    device: Device = "auto",
    dtype: Dtype = "auto",
) -> None:
    """Teacher-forced score vs free-running success, per family and model, with the slope."""
    from workgym.certify.imitation_gap import PLOT, REPORT, measure, slug
    from workgym.certify.teacher_forcing import as_scorer
    from workgym.core.errors import ConfigError
    from workgym.models import get_model

    if split == "test":
        raise ConfigError(
            "imitation-gap reads gold trajectories, so it runs on train or dev only: "
            "pass --split dev"
        )
    use_placement(device, dtype)
    environment = load_env(env, imports)
    names = [model, *(checkpoints or [])]
    models = {
        name: as_scorer(get_model(name, base_url=base_url, api_key=api_key)) for name in names
    }
    target = out_dir or Path("runs") / "imitation" / slug(environment.id)
    report = asyncio.run(
        measure(
            environment,
            models,
            split=split,
            out=target,
            epochs=epochs,
            limit=limit,
            concurrency=concurrency,
            system_prompt=system_prompt,
            progress=progress,
        )
    )
    table = Table(title=f"imitation gap on {environment.id} ({split})")
    for col in ("model", "family", "n", "tf step", "tf all", "free", "gap", "gold logp/tok"):
        table.add_column(col)
    for c in sorted(report.cells, key=lambda c: (c.model, c.family)):
        logp = "-" if c.mean_logprob is None else f"{c.mean_logprob:.3f}"
        table.add_row(
            c.model,
            c.family,
            str(c.n_tasks),
            f"{c.tf_step_rate:.2f}",
            f"{c.tf_all_steps:.2f}",
            f"{c.free_success:.2f}",
            f"{c.gap:+.2f}",
            logp,
        )
    out.print(table)
    s = report.slope
    if s.slope is None:
        out.print(f"slope: not estimable from {s.n_points} point(s) (need spread in success)")
    else:
        ci = "n/a" if s.lower is None else f"[{s.lower:.3f}, {s.upper:.3f}]"
        out.print(f"slope of gap on (1 - success): {s.slope:.3f}, 95% CI {ci}, n={s.n_points}")
    if report.scripted:
        out.print("note: every model is a test double; these numbers check the plumbing only")
    if report.skipped:
        out.print(f"skipped {len(report.skipped)} task(s) without a gold trajectory")
    out.print(f"report: {target / REPORT}\nplot: {target / PLOT}")


def register(app: typer.Typer) -> None:
    app.command("imitation-gap")(imitation_gap_cmd)
