"""`workgym certify`: the release gate from the command line.

Three forms:

    workgym certify ENV --baseline-model M --candidate-model M --candidate-playbook pb.md
    workgym certify --from-runs BASE_RUN CAND_RUN [SUITE_BASE SUITE_CAND ...]
    workgym certify --recompute certificate.json

Either of the first two takes `--curve TRAIN_OUT` to draw the training's learning curve.

Heavy imports stay inside the command so `workgym --help` stays fast.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from workgym.apps.cli.device_options import Device, Dtype, MaxTokens, use_placement
from workgym.apps.cli.env_options import ImportModules, import_modules
from workgym.apps.cli.hints import next_line

out = Console(soft_wrap=True)
err = Console(stderr=True, soft_wrap=True)

DEFAULT_SUITES = "suites/reasoning,suites/bfcl,suites/ifeval"


def _fail(message: str) -> typer.Exit:
    err.print(f"[bold red]error:[/] {escape(message)}", highlight=False)
    return typer.Exit(2)


def _read_playbook(path: Path | None) -> str | None:
    if path is None:
        return None
    if not path.is_file():
        raise _fail(f"no playbook file {path}; pass the playbook.md that training wrote")
    return path.read_text(encoding="utf-8")


def _margins(values: list[str]) -> dict[str, float]:
    margins = {}
    for value in values:
        name, sep, number = value.rpartition("=")
        try:
            margins[name] = float(number)
        except ValueError:
            name = ""
        if not sep or not name:
            raise _fail(f"--suite-margin {value!r}: write SUITE=MARGIN, e.g. suites/bfcl=0.03")
    return margins


def certify(
    args: Annotated[
        list[str] | None,
        typer.Argument(help="ENV (id or directory); with --from-runs: run directories in pairs"),
    ] = None,
    baseline: Annotated[
        str | None,
        typer.Option("--baseline-model", help="openai/<model> or hf/<checkpoint>"),
    ] = None,
    candidate: Annotated[
        str | None,
        typer.Option("--candidate-model", help="openai/<model> or hf/<checkpoint>"),
    ] = None,
    baseline_old: Annotated[
        str | None, typer.Option("--baseline", hidden=True, help="deprecated: --baseline-model")
    ] = None,
    candidate_old: Annotated[
        str | None, typer.Option("--candidate", hidden=True, help="deprecated: --candidate-model")
    ] = None,
    baseline_playbook: Annotated[Path | None, typer.Option(help="playbook file")] = None,
    candidate_playbook: Annotated[Path | None, typer.Option(help="playbook file")] = None,
    base_url: Annotated[str | None, typer.Option(help="OpenAI-compatible endpoint")] = None,
    baseline_base_url: Annotated[str | None, typer.Option(help="endpoint of the baseline")] = None,
    candidate_base_url: Annotated[
        str | None, typer.Option(help="endpoint of the candidate")
    ] = None,
    api_key: Annotated[str | None, typer.Option(help="key for the endpoint(s)")] = None,
    from_runs: Annotated[
        bool, typer.Option("--from-runs", help="ARGS are BASE_RUN CAND_RUN pairs")
    ] = False,
    recompute: Annotated[
        Path | None, typer.Option(help="rebuild this certificate.json and compare bytes")
    ] = None,
    suites: Annotated[
        str | None,
        typer.Option(
            help="comma-separated suite ids, or 'none' [default: those of "
            f"{DEFAULT_SUITES} that are installed; the others are skipped and named]"
        ),
    ] = None,
    epochs: Annotated[int, typer.Option(min=1, help="epochs K per item and arm")] = 1,
    seed: int = 0,
    alpha: Annotated[float, typer.Option(min=0.001, max=0.49)] = 0.05,
    margin: Annotated[float, typer.Option(min=0.0, help="non-inferiority margin")] = 0.05,
    suite_margin: Annotated[list[str] | None, typer.Option(help="SUITE=MARGIN, repeatable")] = None,
    limit: Annotated[int | None, typer.Option(help="first N held-out task items")] = None,
    suite_limit: Annotated[int | None, typer.Option(help="first N items per suite")] = None,
    concurrency: Annotated[int, typer.Option(min=2)] = 8,
    out_dir: Annotated[Path | None, typer.Option("--out", help="certificate folder")] = None,
    force: Annotated[
        bool,
        typer.Option(
            "--force",
            "--force-unadmitted",
            help="certify an environment that has not passed admission (recorded; it FAILs)",
        ),
    ] = False,
    admission_dir: Annotated[
        Path | None, typer.Option(help="folder of admission.json (default runs/check)")
    ] = None,
    looks_log: Annotated[
        Path | None,
        typer.Option(
            help="an older looks log to merge in (the log itself lives with the environment: "
            "inside its saved folder, else beside admission.json)"
        ),
    ] = None,
    curve: Annotated[
        Path | None,
        typer.Option(
            help="training --out folder, or its reward_curve.jsonl (grpo) / report.json "
            "(playbook): drawn as the learning curve, not part of the verdict"
        ),
    ] = None,
    plan: Annotated[
        bool,
        typer.Option(
            "--plan",
            help="print what this design can detect (no test episode, no look) and exit",
        ),
    ] = False,
    estimand: Annotated[
        str, typer.Option(help="auto, items (these tasks) or families (new families)")
    ] = "auto",
    force_design: Annotated[
        bool, typer.Option("--force-design", help="run a design that cannot pass its gate")
    ] = False,
    dev_run: Annotated[
        list[Path] | None, typer.Option(help="--plan: a dev-split run of the baseline")
    ] = None,
    baseline_rate: Annotated[
        float | None, typer.Option(help="--plan: the baseline's success rate, if no --dev-run")
    ] = None,
    power: Annotated[float, typer.Option(min=0.5, max=0.99, help="--plan: power")] = 0.8,
    target: Annotated[
        float | None, typer.Option(help="--plan: size the design for this gain")
    ] = None,
    plan_sims: Annotated[int, typer.Option(min=100, help="--plan: simulated certificates")] = 400,
    temperature: float = 0.0,
    max_tokens: MaxTokens = None,
    progress: bool = True,
    imports: ImportModules = None,
    device: Device = "auto",
    dtype: Dtype = "auto",
) -> None:
    """Certify a candidate against its baseline: held-out gain, no regression on the suites,
    admission. Writes certificate.json and certificate.html."""
    import asyncio

    from workgym.core.errors import ConfigError
    from workgym.core.model import Sampling

    if recompute is not None:
        if curve is not None:
            raise _fail("--recompute takes the learning curve from the certificate; drop --curve")
        _recompute(recompute)
        return
    try:
        use_placement(device, dtype)  # both arms load with it: the same numerics in each
    except ConfigError as exc:
        raise _fail(str(exc)) from exc
    import_modules(imports)  # the environment's module, and any user suite's
    from workgym.certify.workflow import Request, certify_async
    from workgym.run.policy import Policy

    positional = list(args or [])
    baseline, candidate = _deprecated_model_flags(baseline, baseline_old, candidate, candidate_old)
    if suites is None:
        suite_ids = installed_suites(DEFAULT_SUITES.split(","))
    elif suites.strip() == "none":
        suite_ids = []
    else:
        suite_ids = [s.strip() for s in suites.split(",") if s.strip()]
    req = Request(
        suites=suite_ids,
        epochs=epochs,
        seed=seed,
        alpha=alpha,
        margin=margin,
        margins=_margins(suite_margin or []),
        limit=limit,
        suite_limit=suite_limit,
        concurrency=concurrency,
        out=out_dir,
        force=force,
        admission_dir=admission_dir,
        looks_log=looks_log,
        base_url=base_url,
        api_key=api_key,
        progress=progress,
        curve=curve,
        estimand=estimand,
        force_design=force_design,
        dev_runs=list(dev_run or []),
        baseline_rate=baseline_rate,
        power=power,
        target=target,
        plan_sims=plan_sims,
    )
    if plan:
        _plan(req, positional)
        return
    try:
        if from_runs:
            req.from_runs = [Path(p) for p in positional]
        else:
            if len(positional) != 1 or baseline is None or candidate is None:
                raise _fail(
                    "give one ENV with --baseline-model and --candidate-model "
                    "(or --from-runs BASE_RUN CAND_RUN, or --recompute certificate.json)"
                )
            sampling = Sampling(temperature=temperature, max_tokens=max_tokens)
            req.env = positional[0]
            req.baseline = Policy(
                baseline,
                playbook=_read_playbook(baseline_playbook),
                sampling=sampling,
                base_url=baseline_base_url or base_url,
                api_key=api_key,
            )
            req.candidate = Policy(
                candidate,
                playbook=_read_playbook(candidate_playbook),
                sampling=sampling,
                base_url=candidate_base_url or base_url,
                api_key=api_key,
            )
        cert, json_path, html_path = asyncio.run(certify_async(req))
    except ConfigError as exc:
        raise _fail(str(exc)) from exc
    style = "bold green" if cert.verdict == "PASS" else "bold red"
    out.print(f"[{style}]{cert.verdict}[/]")
    for c in cert.conditions:
        mark = "[green]pass[/]" if c.passed else "[red]FAIL[/]"
        out.print(f"  {mark} {escape(c.name)}: {escape(c.detail)}", highlight=False)
    for w in cert.warnings:
        out.print(f"  [yellow]warning[/] {escape(w)}", highlight=False)
    out.print(f"certificate: {json_path}\nreport: {html_path}")
    out.print(next_line("certify", "--recompute", json_path), highlight=False)
    if cert.verdict != "PASS":
        raise typer.Exit(1)


def _plan(req: object, positional: list[str]) -> None:
    from workgym.certify.plan import lines
    from workgym.certify.workflow import Request, plan
    from workgym.core.errors import ConfigError

    assert isinstance(req, Request)
    if len(positional) != 1:
        raise _fail("--plan takes one ENV: workgym certify ENV --plan --baseline-rate 0.3")
    req.env = positional[0]
    try:
        result = plan(req)
    except ConfigError as exc:
        raise _fail(str(exc)) from exc
    for line in lines(result):
        out.print(escape(line), highlight=False)


def _deprecated_model_flags(
    baseline: str | None, baseline_old: str | None, candidate: str | None, candidate_old: str | None
) -> tuple[str | None, str | None]:
    """`--baseline`/`--candidate` still work, with a line: `compare --baseline` named a run
    folder, so each meaning now has its own name (--baseline-model here, --baseline-run there)."""
    for old, new, given in (
        ("--baseline", "--baseline-model", baseline_old),
        ("--candidate", "--candidate-model", candidate_old),
    ):
        if given is not None:
            err.print(
                f"[yellow]deprecated:[/] `certify {old}` is now `{new}` (a model; "
                "`compare --baseline-run` takes a run folder)",
                highlight=False,
            )
    return baseline or baseline_old, candidate or candidate_old


def installed_suites(wanted: list[str]) -> list[str]:
    """The default suites that load here; each one that does not is named with its reason
    (the demo's venv has neither the [suites] extra nor bfcl-eval), so the default works
    wherever workgym is installed and says what it left out."""
    from workgym.core.loading import registered

    found = registered()
    usable: list[str] = []
    for suite in wanted:
        factory = found.get(suite)
        try:
            if factory is None:
                raise LookupError(f"{suite} is not registered")
            len(factory().taskset)  # a suite imports its extra when its items are built
        except Exception as exc:  # a missing extra or data set: skipped, and said
            err.print(
                f"[yellow]skipped suite[/] {escape(suite)}: {escape(str(exc))} "
                "(pass --suites to choose; --suites none certifies on the task alone)",
                highlight=False,
            )
            continue
        usable.append(suite)
    return usable


def _recompute(path: Path) -> None:
    from workgym.certify.certificate import recompute
    from workgym.core.errors import ConfigError

    try:
        cert, same, changed = recompute(path)
    except ConfigError as exc:
        raise _fail(str(exc)) from exc
    from workgym.certify.looks import missing_from_log

    missing = missing_from_log(cert.frozen.looks)
    if missing is not None:
        err.print(f"[yellow]warning:[/] {escape(missing)}", highlight=False)
    if same:
        out.print(f"identical: {path} recomputed byte for byte ({cert.verdict})")
        return
    if changed:
        raise _fail(
            f"{path} does not recompute: episodes changed since it was written in "
            + ", ".join(changed)
        )
    raise _fail(
        f"{path} does not recompute byte for byte (same episodes; a different workgym, numpy or "
        "scipy version can change the last digits); the recomputed verdict is " + cert.verdict
    )


def register(app: typer.Typer) -> None:
    app.command("certify")(certify)
