"""The `workgym` command. Every command prints where its output went and the next command."""

from __future__ import annotations

import asyncio
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from workgym.apps.cli.device_options import Device, Dtype, MaxTokens, use_placement
from workgym.apps.cli.env_options import ImportModules, import_modules, load_env
from workgym.apps.cli.hints import next_line
from workgym.core.errors import ConfigError, ModelError
from workgym.core.loading import registered
from workgym.core.model import Model, Sampling
from workgym.core.registry import Registry
from workgym.core.run_limits import DEFAULT_RUN_LIMITS, RunLimits

if TYPE_CHECKING:
    from workgym.certify.looks import LookKind
    from workgym.core.environment import Environment

app = typer.Typer(
    name="workgym",
    help="Reinforcement-learning environments for AI agents, built around one real job.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain click help wraps at any width; rich panels cut long text
)
out = Console(soft_wrap=True)
err = Console(stderr=True, soft_wrap=True)


@app.callback()
def root(
    trust: Annotated[
        bool,
        typer.Option(
            "--trust",
            help="import the environment class a directory's manifest names even when it is "
            "not an installed, registered environment (only for directories you wrote)",
        ),
    ] = False,
) -> None:
    """Reinforcement-learning environments for AI agents, built around one real job."""
    from workgym.core.loading import reset_user_trust, set_user_trust

    reset_user_trust()  # each command starts from nothing the previous one in this process trusted
    set_user_trust(trust)


def _fail(message: str) -> NoReturn:
    from rich.markup import escape

    err.print(f"[bold red]error:[/] {escape(message)}", highlight=False)
    raise SystemExit(2)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text)


TEST_SPLITS = ("test", "all")  # splits whose runs see the held-out test tasks


def look_at_test(env: Environment, ref: str, kind: LookKind, model: str, out: Path | None) -> None:
    """Log a run on the test split in the looks log (certify/looks.py), after every preflight
    check and before the first episode, and say so: a test split stays held out only while
    nobody tunes against it."""
    from workgym.certify.looks import record_run_look

    log = record_run_look(env, ref, kind, model, str(out or ""))
    err.print(
        f"note: this run plays the test split of {env.id}; recorded as a look in "
        f"{log}, which lists every run that saw it. Tune on --split dev.",
        highlight=False,
        markup=False,
    )


@app.command()
def envs(imports: ImportModules = None) -> None:
    """List the registered environments."""
    import_modules(imports)
    table = Table("id", "version", "tasks", "train/dev/test")
    usable: list[str] = []
    for env_id, factory in registered().items():
        try:
            env = factory()
            record = env.taskset.split_record()["tasks"]
        except Exception as exc:  # a missing extra or a broken plugin: one row, no traceback
            reason = str(exc) if isinstance(exc, ConfigError) else f"{type(exc).__name__}: {exc}"
            # escaped: rich reads `[suites]` in "pip install 'workgym[suites]'" as markup
            table.add_row(escape(env_id), "-", "-", escape(f"unavailable: {reason}"))
            continue
        usable.append(env_id)
        table.add_row(
            env_id, env.version, str(len(env.taskset)), "/".join(str(v) for v in record.values())
        )
    out.print(table)
    if usable:  # a real id, not ENV: the toy shop when it is there (seconds), else the first
        first = "workgym/toy-shop" if "workgym/toy-shop" in usable else usable[0]
        out.print(next_line("check", first, imports=imports), highlight=False)


@app.command()
def models() -> None:
    """List the model names eval, check and certify take: providers and the scripted doubles."""
    from workgym.models.hf_builtin import BUILTIN
    from workgym.testing.scripted import DOUBLES

    table = Table("model", "what it is")
    table.add_row("openai/<model>", "any OpenAI-compatible endpoint (--base-url, OPENAI_BASE_URL)")
    table.add_row("hf/<dir>", escape("local transformers weights (the [train] or [smol] extra)"))
    for spec in BUILTIN.values():
        what = f"built-in real model, offline on CPU ({spec.distribution})"
        table.add_row(f"hf/{spec.name}", what)
    for name, entry in DOUBLES.entries().items():
        if name.endswith("*"):
            what = f"a family of test doubles ({escape(entry.source)}); workgym attack --list"
            table.add_row(escape(f"scripted/{name[:-1]}<name>"), what)
            continue
        try:
            doc = (entry.load().__doc__ or "").strip().split("\n")[0]
        except Exception as exc:  # a double whose extra is missing: listed, with why
            doc = f"unavailable: {type(exc).__name__}: {exc}"
        table.add_row(escape(f"scripted/{name}"), escape(f"test double: {doc}"))
    out.print(table)
    out.print(
        "scripted/* are test doubles: they read the hidden answer (oracle) or answer nothing "
        "(null) to check an environment, never to measure a model",
        highlight=False,
    )
    out.print(next_line("eval", "workgym/toy-shop", "--model", "scripted/oracle"), highlight=False)


@app.command("eval")
def eval_cmd(
    env: Annotated[str, typer.Argument(help="environment id or directory")],
    model: Annotated[str, typer.Option(help="openai/<model>, hf/<path> or scripted/<name>")],
    split: Annotated[str, typer.Option(help="train, dev, test or all")] = "dev",
    epochs: Annotated[int, typer.Option(min=1)] = 1,
    concurrency: Annotated[int, typer.Option(min=1)] = 8,
    out_dir: Annotated[Path | None, typer.Option("--out", help="run directory")] = None,
    base_url: Annotated[str | None, typer.Option(help="OpenAI-compatible endpoint")] = None,
    api_key: Annotated[str | None, typer.Option(help="key for the endpoint")] = None,
    seed: Annotated[int, typer.Option(help="run seed (episode seeds, --sample)")] = 0,
    limit: Annotated[int | None, typer.Option(help="only the first N tasks, in file order")] = None,
    sample: Annotated[
        int | None,
        typer.Option(min=1, help="N tasks drawn with --seed, spread over the families"),
    ] = None,
    temperature: float = 0.0,
    max_tokens: MaxTokens = None,
    max_repeats: Annotated[
        int,
        typer.Option(
            min=0, help="end an episode when one tool call (same arguments) is made N times; 0: off"
        ),
    ] = DEFAULT_RUN_LIMITS.max_repeats or 0,
    episode_tokens: Annotated[
        int,
        typer.Option(min=0, help="end an episode at this many prompt+completion tokens; 0: off"),
    ] = DEFAULT_RUN_LIMITS.max_episode_tokens or 0,
    episode_seconds: Annotated[
        float,
        typer.Option(
            min=0,
            help="end an episode after this many seconds (or the environment's limit, "
            "if sooner); 0: off",
        ),
    ] = DEFAULT_RUN_LIMITS.max_episode_s or 0,
    playbook: Annotated[Path | None, typer.Option(help="playbook file to render")] = None,
    progress: bool = True,
    executor: Annotated[str, typer.Option(help="asyncio (this process) or ray")] = "asyncio",
    address: Annotated[
        str | None, typer.Option(help="Ray cluster address (auto, ray://...); none: start one")
    ] = None,
    workers: Annotated[int | None, typer.Option(min=1, help="Ray workers (default: CPUs)")] = None,
    imports: ImportModules = None,
    retry_errors: Annotated[
        bool,
        typer.Option(
            "--retry-errors",
            help="also re-run episodes that ended in a provider or infrastructure error",
        ),
    ] = False,
    timeout: Annotated[
        float | None, typer.Option(min=0.1, help="seconds per model request (openai/)")
    ] = None,
    max_retries: Annotated[
        int | None, typer.Option(min=0, help="retries per model request (openai/)")
    ] = None,
    device: Device = "auto",
    dtype: Dtype = "auto",
) -> None:
    """Evaluate a model on a split; re-running the same command resumes the run."""
    from workgym.run.executors import Executor, resolve_executor
    from workgym.run.options import EvalOptions
    from workgym.run.policy import Policy
    from workgym.run.preflight import models_reachable
    from workgym.run.runner import eval_async

    if executor == "asyncio" and (address is not None or workers is not None):
        _fail("--address and --workers are for --executor ray; add --executor ray")
    use_placement(device, dtype)
    runner: str | Executor = executor
    if executor != "asyncio":
        runner = resolve_executor(executor, address=address, workers=workers)
    text = None
    if playbook is not None:
        if not playbook.exists():
            _fail(f"no playbook file {playbook}")
        text = playbook.read_text()
    sampling = Sampling(temperature=temperature, max_tokens=max_tokens)
    environment = load_env(env, imports)
    environment.taskset.split(split)  # a typo'd split fails here, before anything is spent
    agent = _endpoint_model(model, base_url, api_key, timeout, max_retries)
    policy = Policy(agent, playbook=text, sampling=sampling, base_url=base_url, api_key=api_key)
    # A dead endpoint fails here, in seconds, not after every episode's retries (and before a
    # look at the test split is spent).
    asyncio.run(models_reachable(policy))
    if split in TEST_SPLITS:
        look_at_test(environment, env, "eval", policy.model_name, out_dir)
    run = asyncio.run(
        eval_async(
            environment,
            split=split,
            epochs=epochs,
            out=out_dir,
            options=EvalOptions(
                policy=policy,
                concurrency=concurrency,
                seed=seed,
                limit=limit,
                sample=sample,
                progress=progress,
                executor=runner,
                retry_errors=retry_errors,
                run_limits=RunLimits(
                    max_repeats=max_repeats or None,
                    max_episode_tokens=episode_tokens or None,
                    max_episode_s=episode_seconds or None,
                ),
            ),
        )
    )
    run.summary().print(out)
    out.print(f"episodes: {run.path / 'episodes.jsonl'}")
    out.print(next_line("summary", run.path), highlight=False)


def _endpoint_model(
    model: str,
    base_url: str | None,
    api_key: str | None,
    timeout: float | None,
    retries: int | None,
) -> Model | str:
    """An openai/ model built with the request options (`--timeout`, `--max-retries`); any
    other model name passes through unchanged."""
    if not model.startswith("openai/"):
        if timeout is not None or retries is not None:
            _fail("--timeout and --max-retries are for openai/ models")
        return model
    from workgym.models.openai import OpenAIModel

    agent = OpenAIModel(model, base_url=base_url, api_key=api_key)
    if timeout is not None:
        agent.timeout_s = timeout
    if retries is not None:
        agent.max_retries = retries
    return agent


@app.command()
def summary(run: Annotated[Path, typer.Argument(help="run directory")]) -> None:
    """Print the summary of a run directory."""
    from workgym.run.rundir import RunDir, read_spec
    from workgym.run.runner import Run

    result = Run(RunDir(run, read_spec(run)))
    result.summary().print(out)


@app.command()
def check(
    env: Annotated[str, typer.Argument(help="environment id or directory")],
    out_dir: Annotated[Path | None, typer.Option("--out", help="where the check runs go")] = None,
    fresh: Annotated[
        bool,
        typer.Option("--fresh", help="re-run every check even if the environment is unchanged"),
    ] = False,
    progress: bool = True,
    imports: ImportModules = None,
    admission_dir: Annotated[
        Path | None,
        typer.Option(
            help="where admission.json is recorded [default: runs/check, where `certify` "
            "looks, whatever --out is]"
        ),
    ] = None,
) -> None:
    """Model-free self test: the oracle solves every task, verdicts are deterministic, and a
    policy that answers nothing scores near zero. An unchanged environment re-uses its check."""
    from workgym.guards.admission import DEFAULT_DIR
    from workgym.guards.check import check_async

    environment = load_env(env, imports)
    target = out_dir or DEFAULT_DIR / _slug(environment.id)
    record = admission_dir or DEFAULT_DIR
    report = asyncio.run(
        check_async(environment, target, progress=progress, fresh=fresh, admission_dir=record)
    )
    table = Table("check", "result", "detail", title=f"workgym check {environment.id}")
    for item in report.items:
        mark = "[green]pass[/]" if item.passed else "[red]FAIL[/]"
        detail = item.detail + (f" (e.g. {', '.join(item.failures[:3])})" if item.failures else "")
        table.add_row(escape(item.name), mark, escape(detail))
    out.print(table)
    for item in report.items:  # once, below the table: the cause of a failure in own code
        if item.traceback:
            out.print(f"{item.name}: the first traceback", highlight=False, markup=False)
            out.print(item.traceback.rstrip(), highlight=False, markup=False)
    if report.reused:
        out.print(
            f"re-used the check of {report.checked_at or 'an earlier run'}: the environment is "
            f"unchanged (content hash {report.env_hash[:12]}); data files verified again; "
            "--fresh re-runs everything",
            highlight=False,
        )
    out.print(f"report: {target / 'check.json'}")
    where = "" if record == DEFAULT_DIR else f" (certify reads it with --admission-dir {record})"
    out.print(f"admission record: {record / 'admission.json'}{where}", highlight=False)
    if not report.passed:
        raise typer.Exit(1)
    out.print(
        next_line(
            "eval", env, "--model", "hf/smollm2-135m", "--split", "dev", "--sample", "4",
            imports=imports,
            note="or your own model: --model openai/MODEL --base-url URL",
        ),
        highlight=False,
    )  # fmt: skip


CommandGroup = Callable[[typer.Typer], None]

# Commands that live with the feature they drive, declared as `workgym.commands` entry points
# (a package adds its own the same way). Each names a `register(app)` that keeps its heavy
# imports inside the command functions, so `workgym --help` stays fast.
COMMANDS: Registry[CommandGroup] = Registry("command group", "workgym.commands")


def _register_feature_commands() -> None:
    stale = COMMANDS.stale_install()
    if stale:
        err.print(f"[yellow]warning:[/] {escape(stale)}", highlight=False)
    for name in COMMANDS.names():
        try:
            COMMANDS.load(name)(app)
        except ConfigError as exc:  # one broken plugin must not take the other commands down
            err.print(f"[yellow]warning:[/] {escape(str(exc))}", highlight=False)


_register_feature_commands()


def _warning_line(
    message: Warning | str, category: type[Warning], *_: object, **__: object
) -> None:
    """Warnings as one line on stderr, without the source line Python shows by default."""
    err.print(f"[yellow]warning:[/] {escape(str(message))}", highlight=False)


def _full_short_help(group: Any) -> Any:  # typer's vendored click Command; its type is private
    """Each command's whole first paragraph in `workgym --help`: click cuts it at about 45
    characters ("Evaluate a model on a split; re-running the...") unless short_help is set;
    the formatter then wraps it at the terminal's width instead."""
    for command in getattr(group, "commands", {}).values():
        if command.short_help is None and command.help:
            command.short_help = " ".join(command.help.split("\n\n")[0].split())
        _full_short_help(command)
    return group


def main() -> None:
    """Entry point: user mistakes become one-line errors that say what to do."""
    import warnings

    warnings.showwarning = _warning_line
    try:
        _full_short_help(typer.main.get_command(app))()
    except ConfigError as exc:
        _fail(str(exc))
    except ModelError as exc:
        _fail(str(exc))
    except KeyboardInterrupt:
        _interrupted()
    except SystemExit as exc:
        # typer turns Ctrl-C into a silent exit 130 (Exit(130) raised from the interrupt)
        if exc.code == 130 and isinstance(
            getattr(exc.__context__, "__cause__", None), KeyboardInterrupt
        ):
            _interrupted()
        raise


def _interrupted() -> NoReturn:
    err.print("interrupted (Ctrl-C): what finished is on disk; re-run the same command to resume")
    sys.exit(130)
