"""WarehouseEnv: a generated warehouse directory as an environment.

The directory (written by `workgym generate warehouse`) holds snapshot.duckdb + snapshot.json
(the data and its fingerprint), schema_card.json (what describe_table shows), tasks.jsonl (with
hidden answers), splits.json + split_record.json (the explicit split assignment and why),
warehouse.json (tool settings), fuzz/ (the SQL test suites) and manifest.json. Loading checks the
content hash, which covers the tasks, the tools and `data_hash()` (snapshot fingerprint, card,
settings, suites), so an edited snapshot or card is refused rather than silently scored.

Verification dispatches on the task's declared answer kind: typed answers per their declared
semantics (`answers.verify_typed`), SQL answers through `verify_sql` on the snapshot plus the
task's fuzzed copies, and any other kind (F9's investigation conclusions) to the task family
that declares it, found through the registry (`family_plug`): F9 sits above this stage.
An investigation task may name its own database (a planted copy) in `meta["database"]`, relative
to the directory; run_sql and describe_table then read that copy.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import shutil
from contextlib import AbstractContextManager
from functools import cached_property
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, Field

from workgym.core.environment import DataCheck, Environment, Limits, QualityCheck
from workgym.core.episode import Episode
from workgym.core.errors import ConfigError
from workgym.core.messages import Message, ToolCall
from workgym.core.tasks import Task, canonical_json
from workgym.core.verdict import Status, Verdict
from workgym.envs.warehouse.runtime.answers import AnswerSpec, SqlSpec, verify_typed
from workgym.envs.warehouse.runtime.conclusion_answer import parse_conclusion
from workgym.envs.warehouse.runtime.family_plug import family_of_kind
from workgym.envs.warehouse.runtime.lint import MAX_SHARE, RULES_NAME, lint_tasks
from workgym.envs.warehouse.runtime.tools import (
    QUERY_BUDGET,
    RUN_SQL_TIMEOUT_S,
    WarehouseState,
    describe_table,
    list_tables,
    run_sql,
    submit_answer,
)
from workgym.envs.warehouse.schema.card import CARD_FILE, SchemaCard
from workgym.envs.warehouse.source.snapshot import MANIFEST_FILE, SNAPSHOT_FILE, SnapshotManifest
from workgym.guards.capabilities import ResultSet, submit
from workgym.verifiers.duckdb_warm import warm_sessions
from workgym.verifiers.sql import GoldCache, SqlAnswerSpec, verify_sql
from workgym.verifiers.sql_exec import execute_sql

CONFIG_FILE = "warehouse.json"
# Timings differ between runs of the same query; verdicts must not (`workgym check`).
_UNSTABLE_EVIDENCE = ("gold_s", "candidate_s", "timeout_s")

INSTRUCTIONS = """\
You answer questions about a SQL warehouse (DuckDB dialect). Explore it with list_tables and
describe_table, check your reasoning with run_sql (read-only SELECTs, a limited number per task),
and finish with exactly one submit_answer call in the form the question asks for.
Read the question's clauses carefully: they fix rounding, time zones, the population a share
is taken over, how ties are broken, and what counts when a value is missing.
If the warehouse cannot answer a question (no table or column holds what it needs, or it asks
about a period the data does not cover), submit kind "abstain" with reason "missing_data" or
"out_of_range" instead of guessing."""


class WarehouseConfig(BaseModel):
    """Tool settings of a generated environment (warehouse.json)."""

    database: str = SNAPSHOT_FILE
    engine: str = "duckdb"
    hard: bool = False
    query_budget: int = QUERY_BUDGET
    run_sql_timeout_s: float = RUN_SQL_TIMEOUT_S
    source: str = ""
    seed: int = 0
    # The environment's id (`--id`, default `warehouse/<source name>`): run folders,
    # certificates and the viewer keep warehouses apart by it. Empty in older directories.
    env_id: str = ""
    # Baseline ceilings set for this environment, and why (shown in admission and certificate).
    thresholds: dict[str, float] = Field(default_factory=dict)
    threshold_reason: str = ""


class WarehouseEnv(Environment):
    """Questions about one warehouse, answered through SQL tools (see module docs)."""

    id = "workgym/warehouse"
    version = "1"
    tools = [list_tables, describe_table, run_sql, submit_answer]
    limits = Limits(
        max_turns=30,
        tool_timeout_s=20.0,
        max_tool_output_chars=4500,
        episode_timeout_s=900.0,
    )
    instructions = INSTRUCTIONS
    # Guard tags are detected (workgym.guards.capabilities): `sql_answer` from gold_result()
    # (F1-F8 SQL answers), `conclusion` from the ConclusionAnswers methods (F9 investigations).
    # Guard hooks of every warehouse; a directory's warehouse.json may set its own (__init__).
    baseline_thresholds: ClassVar[dict[str, float]] = {}
    threshold_reason: ClassVar[str] = ""
    sql_dialect = "duckdb"
    quality_rules = RULES_NAME

    def __init__(self, root: str | Path | None = None) -> None:
        if root is None:
            raise ConfigError(
                "a warehouse environment is a generated directory: "
                "run `workgym generate warehouse --db URL --out DIR`, then wg.load(DIR)"
            )
        super().__init__(root)
        assert self.root is not None
        for name in (SNAPSHOT_FILE, MANIFEST_FILE, CARD_FILE, CONFIG_FILE):
            if not (self.root / name).is_file():
                raise ConfigError(
                    f"{self.root} has no {name}; re-run `workgym generate warehouse` into it"
                )
        self._gold = GoldCache()
        # Per-directory identity and thresholds shadow the class defaults on this instance.
        if self.config.env_id:
            vars(self)["id"] = self.config.env_id
        if self.config.thresholds:
            vars(self)["baseline_thresholds"] = dict(self.config.thresholds)
            vars(self)["threshold_reason"] = self.config.threshold_reason

    @property
    def dir(self) -> Path:
        assert self.root is not None
        return self.root

    @cached_property
    def config(self) -> WarehouseConfig:
        return WarehouseConfig.model_validate_json((self.dir / CONFIG_FILE).read_text())

    @cached_property
    def card(self) -> SchemaCard:
        return SchemaCard.load(self.dir / CARD_FILE)

    # -- episodes -----------------------------------------------------------------------------

    def database(self, task: Task) -> Path:
        name = str(task.meta.get("database") or self.config.database)
        path = (self.dir / name).resolve()
        if self.dir.resolve() not in path.parents:
            raise ConfigError(f"task {task.id} names a database outside {self.dir}: {name}")
        return path

    def state(self, task: Task) -> WarehouseState:
        database = self.database(task)
        return WarehouseState(
            database=database,
            copy=database != (self.dir / self.config.database).resolve(),
            card=self.card,
            engine="duckdb",
            hard=self.config.hard,
            query_budget=self.config.query_budget,
            timeout_s=self.config.run_sql_timeout_s,
        )

    # -- verification -------------------------------------------------------------------------

    def answer_spec(self, task: Task) -> AnswerSpec | None:
        raw = task.meta.get("answer_spec")
        return AnswerSpec.model_validate(raw) if raw else None

    def answer_kind(self, task: Task) -> str:
        spec = self.answer_spec(task)
        if spec is not None:
            return spec.kind
        answer = task.answer if isinstance(task.answer, dict) else {}
        return str(answer.get("kind", ""))

    def suite(self, task: Task) -> list[Path]:
        """The real database followed by the task's fuzzed copies."""
        return [self.database(task), *[self.dir / p for p in task.meta.get("suite", [])]]

    def verify(self, task: Task, episode: Episode) -> Verdict:
        kind = self.answer_kind(task)
        if kind == "conclusion":
            return self._verify_conclusion(task, episode)
        spec = self.answer_spec(task)
        if spec is None:
            raise ValueError(f"task {task.id} declares no answer_spec; re-generate it")
        submitted = episode.answer
        if kind == "sql" and isinstance(submitted, dict) and submitted.get("kind") == "sql":
            return self._verify_sql(task, spec, submitted)
        return verify_typed(spec, task.answer, submitted)

    def _verify_sql(self, task: Task, spec: AnswerSpec, submitted: dict[str, Any]) -> Verdict:
        assert spec.gold_sql is not None and spec.sql is not None
        sql = submitted.get("sql")
        if not isinstance(sql, str):
            return Verdict.wrong(Status.parse_error, reason="an sql answer needs a query")
        verdict = verify_sql(
            sql,
            spec.gold_sql,
            sql_spec(spec.sql),
            [str(p) for p in self.suite(task)],
            "duckdb",
            gold_cache=self._gold,
        )
        for check in verdict.evidence.get("databases", []):
            for key in _UNSTABLE_EVIDENCE:
                check.pop(key, None)
        return verdict

    def _verify_conclusion(self, task: Task, episode: Episode) -> Verdict:
        return family_of_kind("conclusion").verify(task, episode, self.dir)

    def warm(self) -> AbstractContextManager[None]:
        """Each database file queried stays loaded until the batch ends (duckdb_warm)."""
        return warm_sessions()

    async def score_async(self, task: Task, episode: Episode) -> Verdict:
        # SQL answers run queries (up to seconds): keep them off the event loop.
        return await asyncio.to_thread(self.score, task, episode)

    # -- self-checks and guards ---------------------------------------------------------------

    def quality_check(self) -> QualityCheck:
        """The task-quality lint (`lint`): fails when a rule fires on more than 2%."""
        report = lint_tasks(self.taskset, self.card)
        bad = report.failing
        return QualityCheck(
            name=f"task lint: no rule fires on more than {MAX_SHARE:.0%} of tasks",
            passed=not bad,
            detail=report.summary(),
            failures=[f"{r}: {', '.join(report.examples.get(r, []))}" for r in bad],
        )

    def oracle(self, task: Task) -> list[Message]:
        """Submit the gold answer in the form the task asks for."""
        if self.answer_kind(task) == "conclusion":
            # An investigation counts only with evidence run in the episode: its family runs it.
            return family_of_kind("conclusion").oracle(task)
        args = json.dumps({"answer": task.answer}, default=str)
        call = ToolCall(id="oracle_0", name="submit_answer", arguments=args)
        return [Message(role="assistant", tool_calls=[call])]

    def gold_values(self, task: Task) -> Any:
        """For an investigation, only the scored fields: the manifest and the gold's evidence
        queries are the generator's, and an honest conclusion never repeats them. A column
        answer ("flights.arr_time") is its table and its column, each of which describe_table
        shows, though never joined by a dot."""
        kind = self.answer_kind(task)
        if kind == "column" and isinstance(task.answer.get("value"), str):
            return task.answer["value"].split(".")
        if kind != "conclusion":
            return task.answer
        return parse_conclusion(task.answer).scored()

    def wrong_answer(self, task: Task) -> Any:
        """Another task's gold of the same answer kind (a plausible, well-formed wrong answer)."""
        mine = canonical_json(task.answer)
        kind = self.answer_kind(task)
        fallback: Any = None
        for other in self.taskset:
            if other.id == task.id or canonical_json(other.answer) == mine:
                continue
            if self.answer_kind(other) == kind:
                return other.answer
            if fallback is None:
                fallback = other.answer
        return fallback

    def gold_sql(self, task: Task) -> str:
        spec = self.answer_spec(task)
        if spec is None or spec.kind != "sql" or spec.gold_sql is None:
            raise ValueError(f"task {task.id} takes a {self.answer_kind(task)} answer, not SQL")
        return spec.gold_sql

    def gold_result(self, task: Task) -> ResultSet | None:
        """The gold result of an SQL-answer task on the real snapshot; None for other tasks."""
        spec = self.answer_spec(task)
        if spec is None or spec.kind != "sql" or spec.gold_sql is None or spec.sql is None:
            return None
        result = execute_sql(spec.gold_sql, self.database(task), timeout_s=60.0, max_rows=100_000)
        if not result.ok:
            raise ValueError(f"gold query of task {task.id} failed: {result.error}")
        return ResultSet(
            columns=result.columns,
            rows=[list(r) for r in result.rows],
            ordered=spec.sql.ordered,
            allow_extra_columns=spec.sql.allow_extra_columns,
        )

    def submit_sql(self, task: Task, sql: str) -> list[Message]:
        return submit(self, task, {"kind": "sql", "sql": sql})

    # -- investigations (F9): the guards' ConclusionAnswers surface -----------------------------

    def cause_vocabulary(self) -> dict[str, list[str]]:
        return family_of_kind("conclusion").cause_vocabulary()

    def planted_causes(self, task: Task) -> list[dict[str, Any]]:
        return family_of_kind("conclusion").planted_causes(task)

    def symptom_components(self, task: Task) -> list[str]:
        return []

    def submit_causes(
        self, task: Task, causes: Any, *, observe: bool = True, text: str = ""
    ) -> list[Message]:
        family = family_of_kind("conclusion")
        return family.submit_causes(task, causes, observe=observe, text=text)

    # -- identity and saving ------------------------------------------------------------------

    def verify_data(self) -> DataCheck:
        """The investigations' database copies against the digests in their manifests (too large
        to hash on every load: ~8 GB for TPC-H sf=1)."""
        investigations = [t for t in self.taskset if self.answer_kind(t) == "conclusion"]
        if not investigations:
            return DataCheck()
        return family_of_kind("conclusion").verify_data(self.dir, investigations)

    def data_hash(self) -> str:
        """Snapshot fingerprint, schema card, tool settings and the SQL suites."""
        h = hashlib.sha256()
        h.update(SnapshotManifest.load(self.dir / MANIFEST_FILE).digest().encode())
        for name in (CARD_FILE, CONFIG_FILE):
            h.update(hashlib.sha256((self.dir / name).read_bytes()).digest())
        for suite in sorted((self.dir / "fuzz").glob("*/suite.json")):
            h.update(str(suite.parent.name).encode())
            h.update(hashlib.sha256(_suite_identity(suite)).digest())
        return h.hexdigest()

    def save_data(self, directory: Path) -> None:
        """Copy everything the directory holds besides what `save` writes itself."""
        if directory.resolve() == self.dir.resolve():
            return
        written = {"tasks.jsonl", "splits.json", "manifest.json"}
        for item in self.dir.iterdir():
            if item.name in written:
                continue
            if item.is_dir():
                shutil.copytree(item, directory / item.name, dirs_exist_ok=True)
            else:
                shutil.copy2(item, directory / item.name)


def _suite_identity(path: Path) -> bytes:
    """A fuzz suite's record without where and how fast it was built (the output path and the
    build time), so regenerating the same environment elsewhere gives the same identity."""
    record = json.loads(path.read_text(encoding="utf-8"))
    for volatile in ("source", "build_s"):
        record.pop(volatile, None)
    return canonical_json(record).encode()


def sql_spec(spec: SqlSpec) -> SqlAnswerSpec:
    return SqlAnswerSpec(
        ordered=spec.ordered,
        rounding=spec.rounding,
        allow_extra_columns=spec.allow_extra_columns,
    )
