"""Warehouses nobody here designed (issue 17): a star schema with dates behind surrogate keys,
record-versioned dimensions and labels, and a small store; what generation makes of them."""

from __future__ import annotations

import json
import re
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from workgym.apps.cli.main import app
from workgym.core.errors import ConfigError
from workgym.core.tasks import TaskSet
from workgym.envs.warehouse.generate.families.task_choice import ANSWER_SHARE
from workgym.envs.warehouse.generate.phrasing import words_for
from workgym.envs.warehouse.generate.pipeline import GenerateOptions, default_id, generate
from workgym.envs.warehouse.runtime.env import WarehouseEnv
from workgym.envs.warehouse.runtime.lint import Linter, lint_tasks
from workgym.envs.warehouse.schema.card import SchemaCard
from workgym.envs.warehouse.schema.column_roles import versioned_columns
from workgym.envs.warehouse.schema.profile import profile_snapshot
from workgym.envs.warehouse.source.snapshot import build_snapshot

STAR_SQL = """
CREATE TABLE date_dim AS
  SELECT 2450000 + i AS d_date_sk, DATE '2001-01-01' + INTERVAL (i) DAY AS d_date,
         year(DATE '2001-01-01' + INTERVAL (i) DAY) AS d_year
  FROM range(0, 400) t(i);
CREATE TABLE reason (r_reason_sk INTEGER, r_reason_id VARCHAR, r_reason_desc VARCHAR);
INSERT INTO reason VALUES (1, 'AAAA', 'Stopped working'), (2, 'AAAB', 'Did not fit'),
  (3, 'AAAC', 'Found a better price'), (4, 'AAAD', 'Gift exchange'),
  (5, 'AAAE', 'Arrived late'), (6, 'AAAF', 'Wrong colour');
CREATE TABLE item AS
  SELECT i AS i_item_sk, 'ITEM' || lpad(CAST(i // 2 AS VARCHAR), 4, '0') AS i_item_id,
         DATE '1999-01-01' + INTERVAL (i % 2 * 700) DAY AS i_rec_start_date,
         CASE WHEN i % 2 = 0 THEN DATE '2000-12-01' END AS i_rec_end_date,
         'product ' || i AS i_product_name,
         (['Music', 'Books', 'Home', 'Sports', 'Shoes', 'Toys', 'Garden'])[1 + i % 7]
           AS i_category,
         round(5 + (i * 37 % 200) / 3.0, 2) AS i_current_price
  FROM range(1, 121) t(i);
CREATE TABLE customer_demographics AS
  SELECT i AS cd_demo_sk, (['M', 'F'])[1 + i % 2] AS cd_gender, i % 7 AS cd_dep_count
  FROM range(1, 301) t(i);
CREATE TABLE returns AS
  SELECT 2450000 + (i * 7919) % 390 AS rt_returned_date_sk,
         1 + (i * 31) % 120 AS rt_item_sk,
         1 + (i * 13 + i // 7) % 6 AS rt_reason_sk,
         1 + (i * 17) % 300 AS rt_refunded_cdemo_sk,
         1 + (i * 23) % 300 AS rt_returning_cdemo_sk,
         i AS rt_ticket_number,
         1 + (i * 7) % 40 AS rt_return_quantity,
         round(((i * 7) % 9 + 1) * (3.5 + (i * 11 % 50)), 2) AS rt_return_amt,
         round((i * 13 % 40) * 0.75, 2) AS rt_fee
  FROM range(1, 20001) t(i);
"""


def _star(path: Path, sql: str = STAR_SQL) -> Path:
    con = duckdb.connect(str(path))
    con.execute(sql)
    con.close()
    return path


@pytest.fixture(scope="module")
def star_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _star(tmp_path_factory.mktemp("star") / "shopstar.duckdb")


@pytest.fixture(scope="module")
def star_card(star_db: Path, tmp_path_factory: pytest.TempPathFactory) -> SchemaCard:
    out = tmp_path_factory.mktemp("star_snap")
    build_snapshot(f"duckdb://{star_db}", out)
    return profile_snapshot(out)


@pytest.fixture(scope="module")
def star_env(star_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("star_env")
    generate(
        GenerateOptions(db=f"duckdb://{star_db}", out=out, tasks=120, suites=False), progress=False
    )
    return out


def test_role_playing_surrogate_keys_and_time_behind_keys(star_card: SchemaCard) -> None:
    fks = {(f.table, f.columns[0]): (f.ref_table, f.ref_columns[0]) for f in star_card.foreign_keys}
    assert fks[("returns", "rt_returned_date_sk")] == ("date_dim", "d_date_sk")
    assert fks[("returns", "rt_refunded_cdemo_sk")] == ("customer_demographics", "cd_demo_sk")
    assert fks[("returns", "rt_reason_sk")] == ("reason", "r_reason_sk")
    returns = star_card.table("returns")
    assert returns.role == "fact"
    assert {c.name for c in returns.columns if c.role == "measure"} == {
        "rt_return_quantity", "rt_return_amt", "rt_fee"
    }  # fmt: skip
    link = star_card.time_link("returns")
    assert link is not None and (link.dim, link.time_column) == ("date_dim", "d_date")
    assert link.min.startswith("2001-01-01") and link.resolved == 1.0
    item = star_card.table("item")
    assert item.role == "dimension"
    assert versioned_columns(item) == {"i_rec_start_date", "i_rec_end_date"}
    assert star_card.table("reason").label_column().name == "r_reason_desc"  # type: ignore[union-attr]


def test_conservative_name_expansion(star_card: SchemaCard) -> None:
    demo = star_card.table("customer_demographics")
    assert words_for(demo, "cd_dep_count") == "dep count"  # dependents, not departures


def test_star_generation_uses_time_through_keys_and_no_key_arithmetic(
    star_env: Path, star_card: SchemaCard
) -> None:
    report = json.loads((star_env / "generation_report.json").read_text())
    tasks = TaskSet.from_jsonl(star_env / "tasks.jsonl")
    by_family: dict[str, list] = {}
    for t in tasks:
        by_family.setdefault(t.meta["family"], []).append(t)
    f4 = by_family.get("F4", [])
    assert len(f4) >= 5, report["skipped"]
    assert all("date_dim" in t.meta["reference_sql"] for t in f4)
    assert all("rec_start" not in t.meta["reference_sql"] for t in f4)
    assert len(by_family.get("F9", [])) >= 3, report["investigations"]
    lint = lint_tasks(list(tasks), star_card)
    assert not lint.failing, lint.summary()
    for t in tasks:
        sql = (t.meta.get("reference_sql") or "").lower()
        assert "sum(rt_returned_date_sk" not in sql and "avg(rt_item_sk" not in sql
    env = WarehouseEnv(star_env)
    assert env.id == "warehouse/shopstar"
    quality = env.quality_check()
    assert quality.passed, quality.detail


def test_answers_are_balanced_within_each_family(star_env: Path) -> None:
    tasks = TaskSet.from_jsonl(star_env / "tasks.jsonl")
    counts: dict[str, dict[str, int]] = {}
    for t in tasks:
        if t.meta["family"] == "F9":
            continue
        key = json.dumps(t.answer, sort_keys=True, default=str)
        counts.setdefault(t.meta["family"], {}).setdefault(key, 0)
        counts[t.meta["family"]][key] += 1
    for family, answers in counts.items():
        n, top = sum(answers.values()), max(answers.values())
        cap = 0.5 if family == "F10" else ANSWER_SHARE  # F10 has two reason codes
        assert top <= max(1, int(n * cap)), (family, n, top)


def test_lint_rules_fire_on_bad_tasks(star_card: SchemaCard) -> None:
    from workgym.core.tasks import Task

    linter = Linter(star_card)
    bad_sum = Task(
        family="F1/x",
        prompt="What is the total returned date sk of returns?",
        answer={"kind": "integer", "value": 7},
        meta={"family": "F1", "tables": ["returns"],
              "reference_sql": "SELECT sum(rt_returned_date_sk) FROM returns"},
    )  # fmt: skip
    threshold = bad_sum.model_copy(
        update={"meta": bad_sum.meta | {"reference_sql":
                "SELECT count(*) FROM returns WHERE rt_returned_date_sk > 2450100"}}
    )  # fmt: skip
    named = bad_sum.model_copy(
        update={"meta": bad_sum.meta | {"reference_sql":
                "SELECT count(*) FROM returns WHERE rt_reason_sk = 2"}}
    )  # fmt: skip
    f8 = Task(
        family="F8/x",
        prompt="Which column holds the return amt of each return?",
        answer={"kind": "column", "value": "returns.rt_return_amt"},
        meta={"family": "F8", "tables": ["returns"]},
    )
    tie = bad_sum.model_copy(
        update={"meta": bad_sum.meta | {"gap": {"checked": True, "clear": False}}}
    )
    assert "key_aggregate" in linter.rules(bad_sum)
    assert "key_aggregate" in linter.rules(threshold)
    assert "key_named_row" in linter.rules(named)
    assert "column_name_in_prompt" in linter.rules(f8)
    assert "tie_at_cut" in linter.rules(tie)
    report = lint_tasks([bad_sum, f8], star_card)
    assert report.counts["key_aggregate"] == 1 and set(report.failing) >= {"key_aggregate"}


def test_ids_default_from_the_source_and_are_checked(tmp_path: Path) -> None:
    assert default_id("duckdb:///data/tpcds.duckdb") == "warehouse/tpcds"
    assert default_id("builtin:tpch?sf=1") == "warehouse/tpch"
    assert default_id("builtin:nycflights13") == "warehouse/nycflights13"
    assert default_id("sqlite:///x/my shop.db") == "warehouse/my_shop"
    with pytest.raises(ConfigError, match="--id"):
        generate(GenerateOptions(db="builtin:nycflights13", out=tmp_path, env_id="a b"))
    with pytest.raises(ConfigError, match="--threshold-reason"):
        generate(
            GenerateOptions(db="builtin:nycflights13", out=tmp_path, thresholds={"constant": 0.2})
        )


SMALL_SQL = """
CREATE TABLE customers (customer_id INTEGER, name VARCHAR, city VARCHAR);
INSERT INTO customers SELECT i, 'Customer ' || i,
  (['Lyon', 'Paris', 'Nice', 'Lille', 'Metz'])[1 + i % 5] FROM range(1, 41) t(i);
CREATE TABLE invoices AS
  SELECT i AS invoice_id, 1 + (i * 7) % 40 AS customer_id,
         CAST(TIMESTAMP '2023-01-01 09:00:00' + INTERVAL (i * 13) HOUR AS VARCHAR) AS issued_at,
         (['card', 'cash', 'transfer', 'cheque'])[1 + (i * 3 + i // 5) % 4] AS payment,
         round(20 + (i * 37 % 300) * 1.5, 2) AS total
  FROM range(1, 401) t(i);
"""


def test_small_store_gives_fewer_valid_tasks_with_a_clear_shortfall(tmp_path: Path) -> None:
    db = _star(tmp_path / "store.duckdb", SMALL_SQL)
    out = tmp_path / "env"
    result = CliRunner().invoke(
        app,
        ["generate", "warehouse", "--db", f"duckdb://{db}", "--out", str(out), "--tasks", "200",
         "--no-progress", "--no-suites", "--id", "shops/small"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "warning" in result.output and "below its quota" in result.output
    report = json.loads((out / "generation_report.json").read_text())
    assert 0 < report["tasks"] < 200
    inv = report["investigations"]
    assert inv["tasks"] > 0 or "below its quota" in inv["warning"], inv
    env = WarehouseEnv(out)
    assert env.id == "shops/small"
    card = SchemaCard.load(out)
    assert card.table("invoices").column("issued_at").encoding == "iso_text"


def _investigate_finds_nothing(db: Path, tmp_path: Path) -> str:
    """`workgym investigate` on `db`, which must exit 1 saying why; its output."""
    result = CliRunner().invoke(
        app,
        ["investigate", "--db", f"duckdb://{db}", "--model", "scripted/investigator",
         "--out", str(tmp_path / "findings")],
    )  # fmt: skip
    assert result.exit_code == 1, result.output
    assert "no investigation possible" in result.output
    return result.output


def test_investigate_without_a_time_axis_fails_loudly(tmp_path: Path) -> None:
    db = _star(
        tmp_path / "timeless.duckdb",
        "CREATE TABLE stock AS SELECT i AS sku, (['a', 'b', 'c'])[1 + i % 3] AS bin, "
        "i * 3 % 17 AS units FROM range(1, 3001) t(i);",
    )
    output = _investigate_finds_nothing(db, tmp_path)
    assert "no timestamp or date column" in output


TWO_DATES_SQL = """
CREATE TABLE orders AS
  SELECT i AS o_orderkey, (['OPEN', 'SHIPPED', 'HELD'])[1 + i % 3] AS o_status,
         (['AIR', 'RAIL', 'SHIP', 'TRUCK', 'MAIL'])[1 + (i * 7) % 5] AS o_shipmode,
         round(10 + (i * 37 % 500) / 3.0, 2) AS o_amount,
         DATE '2020-01-01' + INTERVAL (i % 360) DAY AS o_orderdate,
         DATE '2020-01-01' + INTERVAL (i % 360 + 1 + i % 9) DAY AS o_shipdate
  FROM range(1, 6001) t(i);
"""


def test_a_table_with_two_dates_says_which_one_times_a_question(tmp_path: Path) -> None:
    """Monthly changes and weekly alerts differ by date column (ordered vs shipped), so the
    question names the one its query uses."""
    db = _star(tmp_path / "two_dates.duckdb", TWO_DATES_SQL)
    out = tmp_path / "env"
    generate(GenerateOptions(db=f"duckdb://{db}", out=out, tasks=100, suites=False), progress=False)
    tasks = TaskSet.from_jsonl(out / "tasks.jsonl")
    f4 = [t for t in tasks if t.meta["family"] == "F4"]
    f9 = [t for t in tasks if t.meta["family"] == "F9"]
    assert f4 and f9
    for t in f4:
        assert "Dates are the order date." in t.prompt, t.prompt
    for t in f9:
        assert re.search(r"Each order is dated by its (order|ship) date\.", t.prompt), t.prompt


def test_investigate_says_why_a_table_it_studied_raised_nothing(tmp_path: Path) -> None:
    """A fact table with a time axis and slices, but about 7 rows a week (so it is studied by
    month, decision 0182) and no real move: every month's change is within sampling noise, and
    the message names that table and why (it listed only skipped tables)."""
    db = _star(
        tmp_path / "thin.duckdb",
        "CREATE TABLE releases AS SELECT i AS id, (['low', 'medium', 'high'])[1 + i % 3] AS "
        "urgency, TIMESTAMP '2020-01-01' + INTERVAL (i * 24) HOUR AS released_at "
        "FROM range(1, 801) t(i);",
    )
    output = _investigate_finds_nothing(db, tmp_path)
    assert "releases:" in output and "months carry no alert" in output
    assert "moves within sampling noise" in output
