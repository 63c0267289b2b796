"""`workgym train playbook ENV --model M [--reflector-model R] [--budget-tokens N] --out DIR`.

Only typer and small option types (the `--learner` names) are imported at module level; the
trainer loads when the command runs, so `workgym --help` stays fast.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from workgym.apps.cli.device_options import Device, Dtype, use_placement
from workgym.apps.cli.env_options import ImportModules, load_env
from workgym.apps.cli.hints import next_line
from workgym.train.playbook.config import Learner

if TYPE_CHECKING:
    from rich.progress import Progress


def register(train_app: typer.Typer) -> None:
    train_app.command("playbook")(playbook)


class _View:
    """Rich progress: iteration, accepted/rejected deltas, dev reward and tokens spent."""

    def __init__(self, bar: Progress | None, total: int | None) -> None:
        self.bar = bar
        self.accepted = 0
        self.rejected = 0
        self.dev = float("nan")
        if bar is not None:
            self.task = bar.add_task(
                "baselines", total=total, accepted=0, rejected=0, dev="-", tokens="0"
            )

    def __call__(self, event: dict[str, Any]) -> None:
        if self.bar is None:
            return
        kind = event.get("kind")
        fields: dict[str, Any] = {}
        if kind == "checkpoint":
            self.dev = float(event["reward"])
            fields["dev"] = f"{self.dev:.3f}"
        elif kind == "iteration":
            self.accepted += len(event["accepted"])
            self.rejected += len(event["rejected"])
            fields.update(
                accepted=self.accepted,
                rejected=self.rejected,
                tokens=f"{event['training_tokens']:,}",
                advance=1,
                description=f"iteration {event['iteration']}",
            )
        elif kind == "batch":
            fields["description"] = f"iteration {event['iteration']}"
        elif kind == "stop":
            fields["description"] = f"stopped: {event['reason']}"
        if fields:
            self.bar.update(self.task, **fields)


def playbook(
    env: Annotated[str, typer.Argument(help="environment id or directory")],
    model: Annotated[str, typer.Option(help="the agent: openai/<model>, hf/<path>, scripted/...")],
    out: Annotated[
        Path,
        typer.Option(help="run directory; re-run the command to resume it (every round is saved)"),
    ],
    reflector_model: Annotated[
        str | None, typer.Option(help="model that writes lessons (default: the agent's)")
    ] = None,
    budget_tokens: Annotated[
        int | None, typer.Option(min=1, help="stop when training has spent this many tokens")
    ] = None,
    base_url: Annotated[str | None, typer.Option(help="OpenAI-compatible endpoint")] = None,
    api_key: Annotated[str | None, typer.Option(help="key for the endpoint")] = None,
    reflector_base_url: Annotated[str | None, typer.Option(help="the reflector's endpoint")] = None,
    reflector_api_key: Annotated[str | None, typer.Option(help="the reflector's key")] = None,
    baseline: Annotated[
        list[str] | None, typer.Option(help="another untrained agent to compare (repeatable)")
    ] = None,
    seed_playbook: Annotated[Path | None, typer.Option(help="playbook.md to start from")] = None,
    group_size: Annotated[int, typer.Option(min=2, help="G: rollouts per train task")] = 5,
    batch_size: Annotated[int, typer.Option(min=1, help="B: train tasks per iteration")] = 8,
    dev_k: Annotated[
        int | None, typer.Option(min=1, help="K: rollouts per dev task (reflect 3, bootstrap 1)")
    ] = None,
    gate_tasks: Annotated[int, typer.Option(min=2, help="dev tasks per gate B")] = 8,
    max_epochs: Annotated[int, typer.Option(min=1)] = 3,
    max_iterations: Annotated[int | None, typer.Option(min=1)] = None,
    patience: Annotated[int, typer.Option(min=1, help="stop after N rejections in a row")] = 3,
    temperature: Annotated[float, typer.Option(min=0.0)] = 0.7,
    max_tokens: Annotated[int | None, typer.Option(min=1, help="per agent call")] = None,
    reflector_max_tokens: Annotated[
        int, typer.Option(min=1, help="per reflection (bound a small reflector's rambling)")
    ] = 4000,
    reflector_schema: Annotated[
        bool,
        typer.Option(help="hold the reflector's reply to the lesson JSON (llama.cpp, endpoints)"),
    ] = True,
    playbook_budget: Annotated[int, typer.Option(min=50, help="playbook tokens")] = 3000,
    margin: Annotated[float, typer.Option(min=0.0, help="non-inferiority margin")] = 0.05,
    seed: int = 0,
    concurrency: Annotated[int, typer.Option(min=1)] = 8,
    progress: bool = True,
    imports: ImportModules = None,
    device: Device = "auto",
    dtype: Dtype = "auto",
    learner: Annotated[
        Learner,
        typer.Option(
            help="reflect: lessons from a reflector; bootstrap: worked examples from the "
            "agent's own verified train successes (no reflector)"
        ),
    ] = "reflect",
    samples: Annotated[int, typer.Option(min=1, help="bootstrap: episodes per train task")] = 3,
    train_tasks: Annotated[
        int | None, typer.Option(min=1, help="bootstrap: train tasks sampled")
    ] = 16,
    max_candidates: Annotated[
        int, typer.Option(min=1, help="bootstrap: worked examples the search chooses from")
    ] = 8,
    max_examples: Annotated[
        int, typer.Option(min=1, help="bootstrap: worked examples in the playbook")
    ] = 4,
    search: Annotated[
        str, typer.Option(help="bootstrap: greedy (forward selection) or random (subsets)")
    ] = "greedy",
    subsets: Annotated[int, typer.Option(min=1, help="bootstrap: random subsets tried")] = 8,
    dev_temperature: Annotated[
        float, typer.Option(min=0.0, help="bootstrap: sampling temperature on dev")
    ] = 0.0,
    dev_tasks: Annotated[
        int | None, typer.Option(min=2, help="bootstrap: dev tasks scored (default: all)")
    ] = None,
) -> None:
    """Learn a readable playbook for a frozen model from reward (train split; dev selects)."""
    if learner == "bootstrap":
        _bootstrap(
            env, model, out, base_url=base_url, api_key=api_key, imports=imports,
            device=device, dtype=dtype, seed_playbook=seed_playbook,
            reflector_model=reflector_model, baseline=baseline,
            fields=dict(
                seed=seed, temperature=temperature, samples=samples, train_tasks=train_tasks,
                max_candidates=max_candidates, max_examples=max_examples, search=search,
                subsets=subsets, dev_temperature=dev_temperature, dev_tasks=dev_tasks,
                dev_k=dev_k or 1, max_tokens=max_tokens,
                playbook_budget=playbook_budget, budget_tokens=budget_tokens,
                concurrency=concurrency,
            ),
        )  # fmt: skip
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from workgym.apps.cli.main import _fail
    from workgym.apps.cli.main import out as console
    from workgym.train.playbook.api import train_playbook_async
    from workgym.train.playbook.config import TrainConfig
    from workgym.train.playbook.playbook import load_playbook

    try:
        cfg = TrainConfig(
            seed=seed,
            group_size=group_size,
            batch_size=batch_size,
            dev_k=dev_k or 3,
            gate_tasks=gate_tasks,
            max_epochs=max_epochs,
            max_iterations=max_iterations,
            patience=patience,
            temperature=temperature,
            max_tokens=max_tokens,
            reflector_max_tokens=reflector_max_tokens,
            reflector_schema=reflector_schema,
            playbook_budget=playbook_budget,
            ni_margin=margin,
            budget_tokens=budget_tokens,
            concurrency=concurrency,
        )
    except ValueError as exc:
        _fail(f"bad training settings: {exc}")
    seed_pb = load_playbook(seed_playbook) if seed_playbook is not None else None
    use_placement(device, dtype)
    environment = load_env(env, imports)
    bar = None
    if progress:
        bar = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("accepted {task.fields[accepted]} rejected {task.fields[rejected]}"),
            TextColumn("dev {task.fields[dev]}"),
            TextColumn("tokens {task.fields[tokens]}"),
            TimeElapsedColumn(),
            console=Console(stderr=True),
        )
    view = _View(bar, max_iterations)
    import asyncio

    if bar is not None:
        bar.start()
    try:
        result = asyncio.run(
            train_playbook_async(
                environment,
                model,
                out=out,
                reflector=reflector_model,
                config=cfg,
                baselines=baseline or (),
                seed_playbook=seed_pb,
                base_url=base_url,
                api_key=api_key,
                reflector_base_url=reflector_base_url,
                reflector_api_key=reflector_api_key,
                observer=view,
            )
        )
    finally:
        if bar is not None:
            bar.stop()
    best = result.report["best"]
    console.print(
        f"stopped ({result.stop_reason}) after {result.iterations} iterations: "
        f"{len(result.accepted)} deltas accepted, {len(result.rejected)} rejected"
    )
    console.print(
        f"best checkpoint: iteration {best['iteration']}, dev-select reward {best['reward']:.3f}, "
        f"{best['tokens_per_task']:.0f} tokens per task"
    )
    if result.efficiency is not None:
        console.print(result.efficiency.statement, highlight=False)
    console.print(f"playbook: {result.playbook_path}")
    console.print(f"report: {out / 'report.md'}  learning curve: {out / 'learning_curve.png'}")
    console.print(
        next_line(
            "eval", env, "--model", model, "--playbook", result.playbook_path, "--split", "dev",
            imports=imports,
        ),
        highlight=False,
    )  # fmt: skip


def _bootstrap(
    env: str,
    model: str,
    out: Path,
    *,
    base_url: str | None,
    api_key: str | None,
    imports: list[str] | None,
    device: str,
    dtype: str,
    seed_playbook: Path | None,
    reflector_model: str | None,
    baseline: list[str] | None,
    fields: dict[str, Any],
) -> None:
    """`--learner bootstrap`: worked examples from verified successes (decision 0130)."""
    import asyncio

    from pydantic import ValidationError

    from workgym.apps.cli.main import _fail
    from workgym.apps.cli.main import out as console
    from workgym.train.playbook.bootstrap.bootstrap_config import BootstrapConfig
    from workgym.train.playbook.bootstrap.learner import bootstrap_playbook_async
    from workgym.train.playbook.playbook import load_playbook

    if reflector_model is not None or baseline:
        _fail("--learner bootstrap uses no reflector and no --baseline; drop those options")
    try:
        cfg = BootstrapConfig.model_validate(fields)
    except ValidationError as exc:
        why = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        _fail(f"bad bootstrap settings: {why}")
    seed_pb = load_playbook(seed_playbook) if seed_playbook is not None else None
    use_placement(device, dtype)
    environment = load_env(env, imports)
    result = asyncio.run(
        bootstrap_playbook_async(
            environment, model, out=out, config=cfg, seed_playbook=seed_pb,
            base_url=base_url, api_key=api_key,
        )
    )  # fmt: skip
    console.print(
        f"bootstrap: {result.episodes} train episodes, {result.verified} verified, "
        f"{len(result.candidates)} candidate worked examples, {len(result.refused)} refused "
        f"by the lint; {len(result.chosen)} chosen by the {cfg.search} search"
    )
    for r in result.refused[:3]:
        console.print(f"  refused {r.example.episode}: {r.findings[0].detail}", highlight=False)
    console.print(
        f"dev reward {result.baseline.reward:.3f} -> {result.learned.reward:.3f} (optimistic: "
        f"dev chose the examples); tokens per task {result.baseline.tokens_per_task:.0f} -> "
        f"{result.learned.tokens_per_task:.0f}, playbook {result.learned.playbook_tokens} tokens; "
        f"training tokens {result.training_tokens:,}"
    )
    console.print(f"playbook: {result.playbook_path}  report: {out / 'bootstrap.json'}")
    console.print(
        next_line(
            "eval", env, "--model", model, "--playbook", result.playbook_path, "--split", "dev",
            imports=imports,
        ),
        highlight=False,
    )  # fmt: skip
