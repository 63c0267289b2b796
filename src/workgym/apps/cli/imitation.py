"""`workgym imitation-gap ENV --model M [--checkpoints C ...]`: does imitation overstate skill?

Scores each model teacher-forced (the gold prefix at every step), on its own prefix (where the
environment has a state-conditional oracle) and free-running (the real episode loop) on the same
tasks, per family. Heavy imports stay inside the command so `workgym --help` stays fast.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.table import Table

from workgym.apps.cli.device_options import Device, Dtype, use_placement
from workgym.apps.cli.env_options import ImportModules, load_env

if TYPE_CHECKING:
    from workgym.certify.imitation_gap import ImitationReport

out = Console(soft_wrap=True)


def imitation_gap_cmd(
    env: Annotated[str, typer.Argument(help="environment id or directory")],
    model: Annotated[str, typer.Option(help="openai/<model>, hf/<path> or scripted/<name>")],
    checkpoints: Annotated[
        list[str] | None,
        typer.Option("--checkpoints", help="more models to score the same way (repeatable)"),
    ] = None,
    split: Annotated[str, typer.Option(help="train or dev (the test split stays sealed)")] = "dev",
    epochs: Annotated[
        int,
        typer.Option(
            min=1, help="free-running epochs per task (and teacher-forced draws, when sampling)"
        ),
    ] = 1,
    temperature: Annotated[
        float, typer.Option(min=0.0, help="one decoding for all three measures (0: greedy)")
    ] = 0.0,
    max_tokens: Annotated[int | None, typer.Option(min=1, help="reply token cap")] = None,
    seed: Annotated[int, typer.Option(help="run seed; draw k of a task is seeded as epoch k")] = 0,
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
    """Exposure bias, the compounding check and Bland-Altman with a same-data null, per family
    and model (teacher-forced against free-running; the old slope as a secondary number)."""
    from workgym.certify.imitation_gap import PLOT, REPORT, measure, slug
    from workgym.certify.teacher_forcing import as_scorer
    from workgym.core.errors import ConfigError
    from workgym.core.model import Sampling
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
            sampling=Sampling(temperature=temperature, max_tokens=max_tokens),
            seed=seed,
        )
    )
    print_report(report)
    out.print(f"report: {target / REPORT}\nplot: {target / PLOT}")


def _num(value: float | None, fmt: str = ".3f") -> str:
    return "n/a" if value is None else format(value, fmt)


def print_report(report: ImitationReport) -> None:
    """The cells, then exposure bias, the compounding check, Bland-Altman with its same-data
    null, and last the old slope, labelled as the definitional number it is."""
    table = Table(title=f"imitation gap on {report.env_id} ({report.split})")
    for col in (
        "model", "family", "n", "tf step", "own step", "exposure", "tf all", "predicted",
        "free", "tf - free", "gold logp/tok",
    ):  # fmt: skip
        table.add_column(col)
    for c in sorted(report.cells, key=lambda c: (c.model, c.family)):
        table.add_row(
            c.model,
            c.family,
            str(c.n_tasks),
            f"{c.tf_step_rate:.2f}",
            _num(c.own_step_rate, ".2f"),
            _num(c.exposure_bias, "+.2f"),
            f"{c.tf_all_steps:.2f}",
            _num(c.predicted_success, ".2f"),
            f"{c.free_success:.2f}",
            f"{c.gap:+.2f}",
            _num(c.mean_logprob),
        )
    out.print(table)
    if not report.state_oracle:
        out.print(
            f"{report.env_id} declares no state-conditional oracle (next_action): own-prefix "
            "accuracy and exposure bias are not measured; teacher-forced against free-running only"
        )
    for e in report.exposure:
        ci = "n/a" if e.lower is None else f"[{e.lower:+.3f}, {_num(e.upper, '+.3f')}]"
        out.print(
            f"exposure bias {e.model}: {e.exposure_bias:+.3f}, 95% CI {ci} over "
            f"{e.n_families} families (gold prefix {e.gold_prefix:.3f}, own prefix "
            f"{e.own_prefix:.3f}; null 0)"
        )
        if e.by_state is not None:
            ci = (
                "n/a"
                if e.by_state_lower is None
                else f"[{e.by_state_lower:+.3f}, {_num(e.by_state_upper, '+.3f')}]"
            )
            out.print(
                f"  by state (each own step against the gold step with the same right actions): "
                f"{e.by_state:+.3f}, 95% CI {ci} over {e.by_state_families} families; "
                f"{e.by_state_matched} of {e.by_state_own_steps} own steps matched"
            )
            if e.off_gold_steps:
                out.print(
                    f"  after its own first miss: {e.off_gold_steps} steps, right "
                    f"{_num(e.off_gold_observed)} against {_num(e.off_gold_expected)} from the "
                    "gold states that need the same actions"
                )
            else:
                out.print(
                    "  after its own first miss: no step (every miss ended the episode), so no "
                    "own prefix differed from the gold ones: the by-state number is no evidence"
                )
        out.print(
            f"  by step: gold prefix {' '.join(f'{a:.2f}' for a in e.gold_by_position)}; "
            f"own prefix {' '.join(f'{a:.2f}' for a in e.own_by_position)}"
        )
    for m in report.compounding:
        out.print(
            f"compounding {m.model}: predicted free success {m.predicted:.3f} from per-step "
            f"teacher-forced accuracy, observed {m.observed:.3f} (shortfall {m.shortfall:+.3f})"
        )
    a, null = report.agreement, report.null
    out.print(
        f"Bland-Altman over {a.n_points} cells: bias (tf - free) {_num(a.bias, '+.3f')}, "
        f"limits of agreement [{_num(a.lower_limit, '+.3f')}, {_num(a.upper_limit, '+.3f')}], "
        f"slope on the mean {_num(a.slope, '+.3f')} "
        f"[{_num(a.slope_lower, '+.3f')}, {_num(a.slope_upper, '+.3f')}]"
    )
    drawn = [
        ("bias", null.bias),
        ("Bland-Altman slope", null.agreement_slope),
        ("old slope", null.old_slope),
    ]
    if null.draws == 0:
        out.print("same-data null: not drawn (fewer than 3 cells with tasks and free episodes)")
        drawn = []
    for name, stat in drawn:
        out.print(
            f"same-data null ({null.draws} draws, seed {null.seed}), {name}: observed "
            f"{_num(stat.observed, '+.3f')}, null 95% range [{_num(stat.null_lower, '+.3f')}, "
            f"{_num(stat.null_upper, '+.3f')}], p {_num(stat.p_two_sided)}"
        )
    s = report.old_slope
    if s.slope is None:
        out.print(f"old slope (secondary): not estimable from {s.n_points} point(s)")
    else:
        ci = "n/a" if s.lower is None else f"[{s.lower:.3f}, {_num(s.upper)}]"
        out.print(
            f"old slope (secondary, definitional: f on both axes; read against the null): "
            f"(tf - free) on (1 - free) {s.slope:.3f}, 95% CI {ci}, n={s.n_points}"
        )
    if report.scripted:
        out.print("note: every model is a test double; these numbers check the plumbing only")
    if report.skipped:
        out.print(f"skipped {len(report.skipped)} task(s) without a gold trajectory")


def register(app: typer.Typer) -> None:
    app.command("imitation-gap")(imitation_gap_cmd)
