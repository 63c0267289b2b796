"""`workgym investigate`: a trained policy investigates the real, unplanted warehouse.

Declared in the `workgym.commands` entry-point group; heavy imports stay inside the command so
`workgym --help` stays fast. The rule-based test double `scripted/investigator` (it reads only
what a question states) is a `workgym.scripted` entry point, available to every command.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

import typer


def register(app: typer.Typer) -> None:
    @app.command()
    def investigate(
        db: Annotated[
            str,
            typer.Option(
                help="the real warehouse (duckdb:///, sqlite:///, postgresql://, builtin:...)"
            ),
        ],
        model: Annotated[str, typer.Option(help="openai/<model>, hf/<path> or scripted/<name>")],
        out_dir: Annotated[Path | None, typer.Option("--out", help="where the report goes")] = None,
        env: Annotated[
            Path | None,
            typer.Option(help="the generated environment the policy was trained in"),
        ] = None,
        playbook: Annotated[Path | None, typer.Option(help="playbook file to render")] = None,
        alerts: Annotated[int, typer.Option(min=1, help="how many alerts to investigate")] = 5,
        base_url: Annotated[str | None, typer.Option(help="OpenAI-compatible endpoint")] = None,
        api_key: Annotated[str | None, typer.Option(help="key for the endpoint")] = None,
        temperature: float = 0.0,
        max_tokens: Annotated[int | None, typer.Option(help="per model call")] = None,
        concurrency: Annotated[int, typer.Option(min=1)] = 4,
        seed: int = 0,
    ) -> None:
        """Investigate the real data's biggest metric moves; write a findings report whose every
        claim cites evidence queries that are re-run and checked (no scores: causes unknown)."""
        from rich.console import Console
        from rich.table import Table

        from workgym.apps.cli.main import _fail, _slug
        from workgym.core.errors import ConfigError
        from workgym.core.model import Sampling
        from workgym.envs.warehouse.investigate.findings import investigate_async
        from workgym.envs.warehouse.source.contract import SourceError

        text = None
        if playbook is not None:
            if not playbook.is_file():
                _fail(f"no playbook file {playbook}; pass the playbook.md a training run wrote")
            text = playbook.read_text()
        if env is not None and not env.is_dir():
            _fail(f"no environment directory {env}; pass the DIR of `workgym generate warehouse`")
        target = out_dir or Path("runs") / "investigate" / _slug(db)
        try:
            report = asyncio.run(
                investigate_async(
                    db,
                    model,
                    target,
                    env_dir=env,
                    playbook=text,
                    alerts=alerts,
                    base_url=base_url,
                    api_key=api_key,
                    sampling=Sampling(temperature=temperature, max_tokens=max_tokens),
                    concurrency=concurrency,
                    seed=seed,
                )
            )
        except SourceError as exc:
            raise ConfigError(str(exc)) from exc
        out = Console(soft_wrap=True)
        if not report.findings:
            # Nothing to investigate is a failure the user must see, not "0 of 0 verified".
            # Tables that had a time axis and slices but raised no alert say why too (thin or
            # partial buckets, moves within sampling noise), not only the tables skipped.
            quiet = [*report.artefacts]
            if report.noise:
                quiet.append(
                    f"{report.noise} moves within sampling noise (under {report.z_needed:g} "
                    "standard errors)"
                )
            why = "; ".join([*report.skipped, *(r.reason for r in report.refused), *quiet]) or (
                "no metric moved enough to raise an alert"
            )
            out.print(f"no investigation possible on {report.source}: {why}", highlight=False)
            out.print(
                "an investigation needs a fact table of 350+ rows with a time axis (a date or "
                "timestamp column, ISO dates in text, a key into a date dimension, or its "
                "header's date through a key) spanning 10+ days, a column of 2-120 values to "
                "slice by, and periods full enough to compare",
                highlight=False,
            )
            raise typer.Exit(1)
        table = Table("alert", "claim", "evidence", title=f"findings on {report.source}")
        for f in report.findings:
            claim = (f.claim or {}).get("cause_type") or f"none ({f.problem})"
            mark = "[green]verified[/]" if f.verified else "[yellow]unverified[/]"
            table.add_row(f.alert.metric.label[:60], str(claim), mark)
        out.print(table)
        for r in report.refused:
            out.print(f"not investigated: {r.reason}", highlight=False)
        if report.merged:
            out.print(
                f"{report.merged} more moves were the same event as a finding (listed under it)",
                highlight=False,
            )
        out.print(
            f"{report.verified} of {len(report.findings)} claims verified; not scored: "
            "the true causes of real data are unknown"
        )
        out.print(f"report: {target / 'findings.md'} (and findings.json, episodes.jsonl)")
        if env is not None:
            out.print(f"next: workgym eval {env} --model {model} --split test  (planted copies)")
        else:
            out.print("next: open the report; `workgym eval ENV` scores the planted copies")
