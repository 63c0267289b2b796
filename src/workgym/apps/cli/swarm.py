"""`workgym compare RUN... [--baseline-run RUN]...`: runs of one environment at equal cost.

Prints reward and cost per run, then reward at matched cost and cost at matched reward against
the baseline line (paired 95% CIs), and writes compare.json and compare.png. Heavy imports stay
inside the command so `workgym --help` stays fast.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from workgym.apps.cli.hints import next_line

if TYPE_CHECKING:
    from workgym.swarm.compare import Comparison
    from workgym.swarm.points import Paired

out = Console(soft_wrap=True)
err = Console(stderr=True, soft_wrap=True)


REWARD = "+.3f"  # how a reward difference prints
TOKENS = "+,.0f"  # how a tokens-per-task difference prints


def _diff(p: Paired | None, fmt: str) -> str:
    """A paired difference and its 95% CI in one number format; a missing end is open (inf)."""
    if p is None:
        return "—"
    lo = "-inf" if p.lower is None else format(p.lower, fmt)
    hi = "+inf" if p.upper is None else format(p.upper, fmt)
    return f"{format(p.diff, fmt)} [{lo}, {hi}]"


def render(comp: Comparison, console: Console) -> None:
    """The comparison as tables (also used by bench/swarm_real.py)."""
    for note in comp.notes[:1] if comp.scripted else []:
        console.print(f"[bold yellow]note:[/] {escape(note)}", highlight=False)
    runs = Table(title=f"{comp.env_id}: {comp.items} items in {comp.families} families")
    for col in ("run", "model", "reward (95% CI)", "tokens/task (95% CI)", "tokens by role"):
        runs.add_column(col)
    for r in comp.runs:
        roles = ", ".join(f"{k} {v:,.0f}" for k, v in r.by_role.items())
        runs.add_row(
            r.label + (" (baseline)" if r.baseline else ""),
            r.model,
            f"{r.reward:.3f} [{r.reward_ci[0]:.3f}, {r.reward_ci[1]:.3f}]",
            f"{r.tokens:,.0f} [{r.tokens_ci[0]:,.0f}, {r.tokens_ci[1]:,.0f}]",
            roles,
        )
    console.print(runs)
    console.print(
        "reward as in certificates: errors, limit hits, verifier errors and flagged successes "
        "not yet accepted count 0 (`workgym summary` shows the raw mean; `workgym review RUN` "
        "accepts false alarms)",
        highlight=False,
        markup=False,
    )
    matched = Table(title="at matched cost (reward) and matched reward (tokens), vs the baseline")
    for col in ("run", "matched", "against", "difference (95% CI)"):
        matched.add_column(col)
    for m in [*comp.matched_cost, *comp.matched_reward]:
        diff = _diff(m.diff, REWARD if m.kind == "cost" else TOKENS)
        matched.add_row(m.target, m.kind, m.reference or "not available", diff)
    console.print(matched)
    for m in [*comp.matched_cost, *comp.matched_reward]:
        console.print(f"  {m.target}, matched {m.kind}: {m.verdict}", highlight=False)
    pairs = Table(title="pairwise (no cost matching): run - baseline run")
    for col in ("run", "baseline run", "reward diff (95% CI)", "token diff (95% CI)", "cost ratio"):
        pairs.add_column(col)
    for p in comp.pairwise:
        ratio = "—" if p.ratio is None else f"{p.ratio:.2f}x"
        pairs.add_row(
            p.target, p.reference, _diff(p.reward, REWARD), _diff(p.tokens, TOKENS), ratio
        )
    console.print(pairs)
    for note in comp.notes:
        console.print(f"[yellow]note:[/] {escape(note)}", highlight=False)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text)[:80]


def compare_cmd(
    runs: Annotated[list[Path], typer.Argument(help="run directories of one environment")],
    baseline: Annotated[
        list[Path] | None,
        typer.Option(
            "--baseline-run",
            "-b",
            help="baseline run folder (repeatable: the single agent at several budgets); "
            "default: the first RUN",
        ),
    ] = None,
    baseline_old: Annotated[
        list[Path] | None,
        typer.Option("--baseline", hidden=True, help="deprecated: --baseline-run"),
    ] = None,
    tolerance: Annotated[
        float, typer.Option(help="costs within this fraction count as matched")
    ] = 0.10,
    margin: Annotated[
        float, typer.Option(help="rewards within this difference count as matched")
    ] = 0.05,
    out_dir: Annotated[Path | None, typer.Option("--out", help="where compare.json/png go")] = None,
) -> None:
    """Compare runs at equal cost: reward at matched cost and cost at matched reward."""
    from workgym.core.errors import ConfigError
    from workgym.swarm.compare import compare
    from workgym.swarm.frontier import frontier_png

    if baseline_old:
        # `certify --baseline` named a model; here it named a run folder: one name per meaning
        err.print(
            "[yellow]deprecated:[/] `compare --baseline` is now `--baseline-run` "
            "(a run folder; certify's baseline is a model, --baseline-model)",
            highlight=False,
        )
        baseline = [*(baseline or []), *baseline_old]
    try:
        comp = compare(runs, baseline=baseline or [], tolerance=tolerance, margin=margin)
    except ConfigError as exc:
        err.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False)
        raise typer.Exit(2) from exc
    target = out_dir or Path("runs") / "compare" / _slug("-vs-".join(r.label for r in comp.runs))
    target.mkdir(parents=True, exist_ok=True)
    (target / "compare.json").write_text(comp.model_dump_json(indent=2) + "\n", encoding="utf-8")
    png = frontier_png(comp, target / "compare.png")
    render(comp, out)
    out.print(f"comparison: {target / 'compare.json'}\nplot: {png}")
    out.print(next_line("view", Path(comp.runs[0].path).parent), highlight=False)


def register(app: typer.Typer) -> None:
    app.command("compare")(compare_cmd)
