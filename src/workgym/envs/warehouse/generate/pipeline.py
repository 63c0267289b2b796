"""`workgym generate warehouse`: from a warehouse URL to an environment directory.

Steps: snapshot the source read-only (`snapshot`), profile it into a schema card (`profile`),
let every family propose drafts from the card and keep those whose reference SQL proves them
(`families.validate`), phrase them (`phrasing`), add investigations when the F9 family is
declared (it sits above this stage and is found through the registry: `runtime.family_plug`),
build the fuzzed SQL test suites, assign splits with leakage checks (`splits`), and write the
directory that `WarehouseEnv` loads. Everything skipped (tables without rows, unsupported
columns, families the warehouse is too small for, drafts that failed a rule) is counted in
generation_report.json and printed, so a user can see what the warehouse gave.
"""

from __future__ import annotations

import random
import re
import shutil
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, Field
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from workgym.core.environment import MANIFEST
from workgym.core.errors import ConfigError
from workgym.core.tasks import Task, TaskSet
from workgym.envs.warehouse.generate.awkward import census
from workgym.envs.warehouse.generate.families import NAMES, Context
from workgym.envs.warehouse.generate.families.task_choice import FamilyReport, select_tasks
from workgym.envs.warehouse.generate.families.validate import Checked, Runner
from workgym.envs.warehouse.generate.phrasing import (
    Lexicon,
    answer_instruction,
    compose,
    make_labeler,
    render,
    template_count,
)
from workgym.envs.warehouse.generate.splits import (
    leakage_checks,
    plan_splits,
    probe_files,
    unit_key,
    write_record,
)
from workgym.envs.warehouse.generate.staging import Staging
from workgym.envs.warehouse.runtime.answers import AnswerSpec, SqlSpec
from workgym.envs.warehouse.runtime.env import CONFIG_FILE, WarehouseConfig, WarehouseEnv
from workgym.envs.warehouse.runtime.family_plug import FAMILIES, WarehouseFamily, family
from workgym.envs.warehouse.runtime.lint import Linter, LintReport, answer_leak, lint_tasks
from workgym.envs.warehouse.schema.card import SchemaCard
from workgym.envs.warehouse.schema.profile import profile_snapshot
from workgym.envs.warehouse.source.contract import SourceError
from workgym.envs.warehouse.source.snapshot import SNAPSHOT_FILE, build_snapshot
from workgym.verifiers.sql_exec import hold_open

GENERATOR_VERSION = "1"
DEFAULT_TASKS = 400
INVESTIGATION_SHARE = 0.1
# The investigation family's name in the registry's group `workgym.warehouse_families`.
INVESTIGATIONS = "F9"
SUITE_WORKERS = 2  # beside the investigations thread; more only adds contention on 2 cores
REPORT_FILE = "generation_report.json"
T = TypeVar("T")


class GenerateOptions(BaseModel):
    db: str
    out: Path
    tables: list[str] | None = None
    seed: int = 0
    tasks: int = DEFAULT_TASKS
    row_cap: int | None = None
    hard: bool = False
    query_budget: int = 30
    suites: bool = True
    investigations: bool = True  # F9, when workgym.envs.warehouse.investigate offers it
    env_id: str | None = None  # default: derived from the source (`warehouse/tpcds`)
    thresholds: dict[str, float] = Field(default_factory=dict)  # baseline ceilings ...
    threshold_reason: str = ""  # ... and why: required with them, shown in admission


class GenerationReport(BaseModel):
    generator_version: str = GENERATOR_VERSION
    source: str
    options: dict[str, Any]
    snapshot_digest: str
    tasks: int
    families: list[FamilyReport]
    awkward: dict[str, Any]
    splits: dict[str, int]
    checks: dict[str, Any]
    skipped: list[str] = Field(default_factory=list)
    investigations: dict[str, Any] = Field(default_factory=dict)
    suites: dict[str, Any] = Field(default_factory=dict)
    timings_s: dict[str, float] = Field(default_factory=dict)
    lint: LintReport | None = None

    def counts(self) -> dict[str, int]:
        out = {f.family: f.kept for f in self.families}
        out["F9"] = int(self.investigations.get("tasks", 0))
        return out


@contextmanager
def _bar(enabled: bool) -> Iterator[Progress | None]:
    if not enabled:
        yield None
        return
    bar = Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
    )
    with bar:
        yield bar


def generate(
    options: GenerateOptions, *, progress: bool = True, overwrite: bool = False
) -> GenerationReport:
    """Generate the environment directory `options.out`; return (and write) the report.

    The environment is built in a sibling staging folder and renamed into place when complete
    (workgym.envs.warehouse.generate.staging): an existing `options.out` is refused unless
    `overwrite`, and a killed run leaves only the staging folder, which the next run into the
    same `out` finishes.
    """
    if options.tasks < 10:
        raise ConfigError(f"--tasks {options.tasks} is too few; ask for at least 10")
    check_identity(options)
    stage = Staging(Path(options.out), _identity(options))
    work, ready = stage.claim(overwrite=overwrite)
    if ready:  # a killed run had finished generating: only the install was left
        report = GenerationReport.model_validate_json((work / REPORT_FILE).read_text())
    else:
        try:
            report = _generate_into(work, options, progress)
        except Exception:  # a clean failure leaves nothing; only a kill leaves the staging folder
            stage.abandon()
            raise
    stage.install()
    return report


def _identity(options: GenerateOptions) -> dict[str, Any]:
    """What makes two runs the same generation (a staging folder of another is started over)."""
    return options.model_dump(mode="json") | {"generator_version": GENERATOR_VERSION}


def _generate_into(out: Path, options: GenerateOptions, progress: bool) -> GenerationReport:
    """Every step of the generation, writing into `out` (the staging folder)."""
    timings: dict[str, float] = {}
    rng = random.Random(options.seed)
    with _bar(progress) as bar:
        t0 = time.perf_counter()
        phase = bar.add_task("snapshot", total=1) if bar else None
        try:
            manifest = build_snapshot(
                options.db, out, tables=options.tables, row_cap=options.row_cap, seed=options.seed
            )
        except SourceError as exc:
            raise ConfigError(str(exc)) from exc
        timings["snapshot"] = time.perf_counter() - t0
        if bar and phase is not None:
            bar.update(phase, completed=1, description="snapshot + profile")
        t0 = time.perf_counter()
        card = profile_snapshot(out)
        timings["profile"] = time.perf_counter() - t0
        for stale in ("fuzz",):
            shutil.rmtree(out / stale, ignore_errors=True)
        investigate = family(INVESTIGATIONS) if options.investigations else None
        n9 = round(options.tasks * INVESTIGATION_SHARE) if investigate is not None else 0
        # Investigations need only the card and the snapshot: they plant on a second thread
        # while the families are drawn and the SQL suites built. Both sides spend most of their
        # time inside DuckDB, which releases the GIL, so a second core does real work; F9 draws
        # from its own seeded stream, so the output does not depend on the interleaving.
        pool = ThreadPoolExecutor(max_workers=1)
        f9_rng = random.Random(f"{options.seed}/F9")
        planting = pool.submit(_timed, _investigations, investigate, out, card, f9_rng, n9)
        t0 = time.perf_counter()
        database = out / SNAPSHOT_FILE
        with hold_open([database]):
            runner = Runner(database)
            lexicon = Lexicon(card, make_labeler(card, runner.rows))
            ctx = Context(card=card, lexicon=lexicon, rng=rng, lookup=runner.rows)
            chosen, reports = select_tasks(ctx, runner, options.tasks - n9, bar)
        timings["families"] = time.perf_counter() - t0
        drafted = _phrase(chosen, rng, lexicon)
        leaks = [d for d in drafted if answer_leak(d) is not None]
        drafted = [d for d in drafted if answer_leak(d) is None]
        skipped = list(manifest.issues) + ctx.skipped
        skipped += [f"{d.meta['family']}: answer appears in the question ({d.id})" for d in leaks]
        linter = Linter(card)
        flagged = [(d, linter.rules(d)) for d in drafted]
        drafted = [d for d, rules in flagged if not rules]
        skipped += [
            f"{d.meta['family']}: dropped by the task lint ({', '.join(r)}) ({d.id})"
            for d, r in flagged
            if r
        ]
        t0 = time.perf_counter()
        try:
            tasks, suite_info = _suites(drafted, out, manifest.digest(), options, bar)
        finally:
            pool.shutdown(wait=True)
        timings["suites"] = time.perf_counter() - t0
        (investigations, inv_info), timings["investigations"] = planting.result()
        stale = FAMILIES.stale_install() if options.investigations and investigate is None else ""
        if stale:  # asked for, but an install older than pyproject.toml hides the family
            inv_info["warning"] = f"F9: no investigations: {stale}"
        if inv_info.get("warning"):
            skipped.append(str(inv_info["warning"]))
    tasks += investigations
    lint = lint_tasks(tasks, card)
    record = plan_splits(tasks, options.seed)
    taskset = TaskSet(tasks, record.spec())
    _write(out, taskset, options, manifest.source)
    env = WarehouseEnv(out)
    (out / MANIFEST).write_text(_json(env.manifest()))
    record.checks = leakage_checks(tasks, record, probe_files(out))
    write_record(record, out)
    report = GenerationReport(
        source=manifest.source,
        options=options.model_dump(mode="json") | {"db": manifest.source},
        snapshot_digest=manifest.digest(),
        tasks=len(tasks),
        families=reports,
        awkward=census(tasks),
        splits=record.counts,
        checks=record.checks,
        skipped=skipped,
        investigations=inv_info,
        suites=suite_info,
        lint=lint,
        timings_s={k: round(v, 2) for k, v in timings.items()},
    )
    (out / REPORT_FILE).write_text(report.model_dump_json(indent=2) + "\n")
    return report


_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*(/[A-Za-z0-9][A-Za-z0-9_.-]*)*$")


def default_id(db: str) -> str:
    """`warehouse/<name>` from the source: the file's stem, the built-in's or database's name
    (duckdb:///data/tpcds.duckdb -> warehouse/tpcds, builtin:tpch?sf=1 -> warehouse/tpch)."""
    rest = db.split("?", 1)[0].rstrip("/")
    if rest.startswith("builtin:"):
        name = rest[len("builtin:") :]
    else:
        name = Path(rest.rpartition("/")[2]).stem or "source"
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("._-") or "source"
    return f"warehouse/{name}"


def check_identity(options: GenerateOptions) -> None:
    """A clear error for a malformed --id, or thresholds without the reason they need."""
    from workgym.guards.baselines import BASELINES

    if options.env_id is not None and not _ID.match(options.env_id):
        raise ConfigError(
            f"--id {options.env_id!r} is not an id: use letters, digits, '_', '.', '-' in "
            "parts separated by '/', e.g. warehouse/sales"
        )
    unknown = sorted(set(options.thresholds) - set(BASELINES))
    if unknown:
        raise ConfigError(f"--threshold for unknown baseline(s) {unknown}: use {BASELINES}")
    if options.thresholds and not options.threshold_reason.strip():
        raise ConfigError(
            "--threshold needs --threshold-reason: say why this warehouse needs another ceiling"
        )


def _json(value: Any) -> str:
    import json

    return json.dumps(value, indent=2) + "\n"


def _timed(fn: Callable[..., T], *args: Any) -> tuple[T, float]:
    t0 = time.perf_counter()
    return fn(*args), time.perf_counter() - t0


def _phrase(chosen: list[Checked], rng: random.Random, lexicon: Lexicon) -> list[Task]:
    """Tasks without suites yet: template chosen per family in rotation from a seeded offset;
    raw identifiers in the prose put in words (`Lexicon.naturalize`; F8 asks for a column)."""
    counters: dict[str, int] = {}
    offsets: dict[str, int] = {}
    tasks = []
    for c in chosen:
        d = c.draft
        n = template_count(d.family)
        offsets.setdefault(d.family, rng.randrange(n))
        index = (offsets[d.family] + counters.get(d.family, 0)) % n
        counters[d.family] = counters.get(d.family, 0) + 1
        template = f"{d.family}.t{index}"
        surface = d.slots.get("surface_kind", d.kind)
        instruction = answer_instruction(
            surface,
            decimals=d.decimals if surface == "number" else None,
            k=d.k,
            phrase=d.answer_phrase,
            may_be_empty=d.may_be_empty,
        )
        question, clauses = render(d.family, index, d.slots), list(d.clauses)
        if d.family != "F8":
            question = lexicon.naturalize(question, d.tables)
            clauses = [lexicon.naturalize(c, d.tables) for c in clauses]
            instruction = lexicon.naturalize(instruction, d.tables, qualify=True)
        prompt = compose(question, clauses, instruction)
        spec = AnswerSpec(
            kind=d.kind,
            decimals=d.decimals if d.kind == "number" else None,
            k=d.k if d.kind == "top_k" else None,
            may_be_empty=d.may_be_empty,
            columns=d.columns,
            sql=SqlSpec(ordered=d.ordered) if d.kind == "sql" else None,
            gold_sql=c.gold_sql if d.kind == "sql" else None,
        )
        meta: dict[str, Any] = {
            "family": d.family,
            "family_name": NAMES[d.family],
            "template": template,
            "shape": d.shape,
            "tables": list(d.tables),
            "answer_spec": spec.model_dump(exclude_none=True, exclude_defaults=True)
            | {"kind": d.kind},
            "reference_sql": c.gold_sql,
            "awkward": c.awkward,
            "gap": c.gap,
            "result_rows": c.rows,
            "result_hash": c.result_hash,
        }
        if d.declared:
            meta["declared_values"] = d.declared
        if d.check_sql is not None:
            meta["check_sql"] = d.check_sql.sql(dialect="duckdb")
        tasks.append(
            Task(
                family=unit_key(d.family, template, d.tables),
                prompt=prompt,
                answer=c.answer,
                meta=meta,
            )
        )
    return tasks


def _suites(
    drafted: list[Task], out: Path, digest: str, options: GenerateOptions, bar: Progress | None
) -> tuple[list[Task], dict[str, Any]]:
    """Build the fuzzed test suite of every SQL-answer task; drop a task whose suite fails."""
    from workgym.envs.warehouse.runtime.env import sql_spec
    from workgym.verifiers.sql_fuzz import FuzzSuite, build_suite

    sql_tasks = [t for t in drafted if t.meta["answer_spec"]["kind"] == "sql"]
    info: dict[str, Any] = {"sql_tasks": len(sql_tasks), "built": 0, "failed": [], "fallbacks": 0}
    if not options.suites:
        info["note"] = "suites disabled (--no-suites): SQL answers are checked on the snapshot only"
        return drafted, info
    phase = bar.add_task("SQL test suites", total=len(sql_tasks)) if bar else None

    def build(t: Task) -> FuzzSuite | ValueError | RuntimeError:
        spec = t.meta["answer_spec"]
        try:
            return build_suite(
                out / SNAPSHOT_FILE,
                spec["gold_sql"],
                cache_dir=out / "fuzz",
                spec=sql_spec(SqlSpec.model_validate(spec.get("sql", {}))),
                seed=options.seed,
                fingerprint=digest,
            )
        except (ValueError, RuntimeError) as exc:
            return exc
        finally:
            if bar is not None and phase is not None:
                bar.advance(phase)

    # Each suite is its own DuckDB work on its own connections and depends only on its task,
    # so they are built side by side (decision 0051); map keeps the task order, so the output is
    # the same as one worker's.
    with ThreadPoolExecutor(max_workers=SUITE_WORKERS) as pool:
        built = iter(list(pool.map(build, sql_tasks)))
    done: list[Task] = []
    copies = 0
    for t in drafted:
        if t.meta["answer_spec"]["kind"] != "sql":
            done.append(t)
            continue
        suite = next(built)
        if isinstance(suite, ValueError | RuntimeError):
            info["failed"].append(f"{t.id}: {suite}")
            continue
        paths = [str(Path(p).resolve().relative_to(out.resolve())) for p in suite.paths]
        copies += len(paths)
        info["built"] += 1
        info["fallbacks"] += suite.fallback is not None
        done.append(t.model_copy(update={"meta": t.meta | {"suite": paths}}))
    info["copies"] = copies
    return done, info


def _investigations(
    f9: WarehouseFamily | None, out: Path, card: SchemaCard, rng: random.Random, n: int
) -> tuple[list[Task], dict[str, Any]]:
    """F9, when an installed distribution declares it (`family_plug`, entry point `F9`)."""
    if f9 is None:
        return [], {
            "status": f"off, or no warehouse task family {INVESTIGATIONS} declared in "
            "the entry-point group workgym.warehouse_families",
            "tasks": 0,
        }
    built = f9.build(out / SNAPSHOT_FILE, card, rng, n)
    tasks = []
    for t in built.tasks:
        meta = dict(t.meta)
        meta.setdefault("family", "F9")
        meta.setdefault("family_name", NAMES["F9"])
        meta.setdefault("template", f"F9.{meta.get('cause_type') or 'none'}")
        meta.setdefault("tables", [])
        tasks.append(t.model_copy(update={"meta": meta}))
    report = built.report
    info: dict[str, Any] = {"status": "ok", "tasks": len(tasks), "requested": n}
    rejected = report.rejection_summary()
    if rejected:
        info["rejected"] = report.rejection_records()
    if len(tasks) < n:
        # Each part names the tables it concerns: the rejected attempts per fact table and
        # reason (every attempt counted), then the tables that could not host any.
        why = [rejected] if rejected else []
        missing = Counter(report.missing)
        why += [f"not planted: {m}" + (f" (x{k})" if k > 1 else "") for m, k in missing.items()]
        why += [f"skipped {s}" for s in report.skipped]
        info["status"] = f"short: {len(tasks)} of {n}"
        info["warning"] = (
            f"F9: below its quota: {len(tasks)} of {n} investigations"
            + (f" ({'; '.join(why)})" if why else "")
            + f"; it needs a fact table of {report.min_rows}+ rows with a time axis (a date or "
            "timestamp column, ISO dates in text, a key into a date dimension, or its header's "
            "date through a key) spanning 10+ days and a column of 2-120 values to slice by"
        )
    return tasks, info


def _write(out: Path, taskset: TaskSet, options: GenerateOptions, source: str) -> None:
    import json

    taskset.to_jsonl(out / "tasks.jsonl")
    (out / "splits.json").write_text(json.dumps(taskset.split_record(), indent=2) + "\n")
    config = WarehouseConfig(
        hard=options.hard,
        query_budget=options.query_budget,
        source=source,
        seed=options.seed,
        env_id=options.env_id or default_id(options.db),
        thresholds=options.thresholds,
        threshold_reason=options.threshold_reason,
    )
    (out / CONFIG_FILE).write_text(config.model_dump_json(indent=2) + "\n")
