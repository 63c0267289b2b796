"""Meanings of columns and grains of tables (schema/meaning.py), and the lint's warning rules
over them (runtime/lint.py, issue 40), on a tiny DuckDB warehouse with known answers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import pytest

from workgym.core.tasks import Task
from workgym.envs.warehouse.runtime.lint import (
    RULES_NAME,
    WARNING_RULES,
    Linter,
    lint_tasks,
)
from workgym.envs.warehouse.schema.card import ForeignKeyCard, SchemaCard
from workgym.envs.warehouse.schema.meaning import ensure_meanings, table_grain, words
from workgym.envs.warehouse.schema.profile import profile_snapshot
from workgym.envs.warehouse.source.snapshot import build_snapshot

SETUP = """
CREATE TABLE people (person_id INTEGER PRIMARY KEY, person_name VARCHAR, birth_day INTEGER,
                     birth_year INTEGER, is_active BOOLEAN);
INSERT INTO people SELECT i, 'Person ' || i, 1 + i % 31, 1950 + i % 40, i % 3 = 0
  FROM range(1, 301) t(i);
CREATE TABLE seasons (person_id INTEGER REFERENCES people(person_id), season_year INTEGER,
                      team_code VARCHAR, games INTEGER, points DOUBLE);
INSERT INTO seasons SELECT 1 + i % 300, 2000 + i % 10, ['AA', 'BB', 'CC', 'DD'][1 + i % 4],
  i % 82, (i * 7) % 1000 / 3.0 FROM range(0, 1200) t(i);
CREATE TABLE items (i_item_sk INTEGER PRIMARY KEY, i_item_id VARCHAR, i_rec_start_date DATE,
                    i_rec_end_date DATE, i_item_desc VARCHAR, i_price DECIMAL(7, 2));
INSERT INTO items SELECT i, 'ITEM' || lpad(CAST(i // 2 AS VARCHAR), 6, '0'),
  DATE '2000-01-01' + INTERVAL (i % 2 * 365) DAY,
  CASE WHEN i % 2 = 0 THEN DATE '2000-12-31' END, 'an item described ' || i, i % 50 + 0.99
  FROM range(1, 401) t(i);
CREATE TABLE sales (sale_id INTEGER PRIMARY KEY, sold_at TIMESTAMP,
                    person_id INTEGER REFERENCES people(person_id),
                    i_item_sk INTEGER REFERENCES items(i_item_sk), quantity INTEGER,
                    amount DECIMAL(9, 2));
INSERT INTO sales SELECT i, TIMESTAMP '2001-01-01' + INTERVAL (i) HOUR, 1 + i % 300,
  1 + i % 400, 1 + i % 9, (i % 97) * 1.5 FROM range(1, 2001) t(i);
"""


@pytest.fixture(scope="module")
def card(tmp_path_factory: pytest.TempPathFactory) -> SchemaCard:
    root = tmp_path_factory.mktemp("meaning")
    db = root / "src.duckdb"
    con = duckdb.connect(str(db))
    con.execute(SETUP)
    con.close()
    snap = root / "snap"
    build_snapshot(f"duckdb://{db}", snap)
    return profile_snapshot(snap)


def test_columns_are_typed_by_meaning(card: SchemaCard) -> None:
    people, seasons = card.table("people"), card.table("seasons")
    items, sales = card.table("items"), card.table("sales")
    assert people.column("birth_day").meaning == "calendar_part"  # a day of month
    assert people.column("birth_year").meaning == "calendar_part"
    assert people.column("person_id").meaning == "identifier"
    assert people.column("person_name").meaning == "label"
    assert people.column("is_active").meaning == "flag"
    assert seasons.column("games").meaning == "count"  # a count of events
    assert seasons.column("team_code").meaning == "code"
    assert seasons.column("season_year").meaning == "calendar_part"
    assert sales.column("quantity").meaning == "count"
    assert sales.column("amount").meaning == "additive_measure"
    assert sales.column("sold_at").meaning == "time_point"
    assert items.column("i_price").meaning == "nonadditive_measure"
    assert items.column("i_item_sk").meaning == "identifier"
    assert items.column("i_rec_end_date").meaning == "time_point"


def test_tables_say_what_a_row_is(card: SchemaCard) -> None:
    grains = {t.name: t.grain for t in card.tables}
    assert grains == {
        "items": "versioned_entity",  # rec_start / rec_end dates: SCD2
        "people": "entity",
        "sales": "event",
        "seasons": "entity_period",  # a person per season year
    }
    # A fact whose date is reached through a key (TPC-DS ss_sold_date_sk) is an event too.
    keyed = card.table("sales").model_copy(deep=True)
    keyed.columns = [c for c in keyed.columns if c.name != "sold_at"]
    assert table_grain(keyed, linked=False) is None
    assert table_grain(keyed, linked=False, timed=True) == "event"


def test_old_cards_stay_readable_and_are_typed_on_load(card: SchemaCard, tmp_path: Path) -> None:
    raw = card.model_dump(mode="json")
    for t in raw["tables"]:
        t.pop("grain")
        for c in t["columns"]:
            c.pop("meaning")
    old = SchemaCard.model_validate(raw)
    assert old.table("people").column("birth_day").meaning is None
    assert ensure_meanings(old) == card


def test_words_split_snake_camel_and_digits() -> None:
    assert words("birthDay") == ["birth", "day"]
    assert words("i_rec_end_date") == ["i", "rec", "end", "date"]
    assert words("HomeRuns2") == ["home", "runs2"]


def _task(family: str, prompt: str, sql: str | None, tables: list[str], **extra: Any) -> Task:
    answer = extra.pop("answer", {"kind": "integer", "value": 7})
    meta = {"family": family, "tables": tables, "reference_sql": sql, **extra}
    return Task(family=f"{family}/x", prompt=prompt, answer=answer, meta=meta)


def _fires(linter: Linter, task: Task, rule: str) -> bool:
    return rule in linter.rules(task, warnings=True)


def test_meaningless_aggregate(card: SchemaCard) -> None:
    lint = Linter(card)
    rule = "meaningless_aggregate"
    day = _task("F1", "What is the total birth day of people?", "SELECT SUM(birth_day) FROM people",
                ["people"])  # fmt: skip
    code_avg = _task("F1", "Average team?", "SELECT AVG(team_code) FROM seasons", ["seasons"])
    season = _task("F1", "Average season?", "SELECT AVG(season_year) FROM seasons", ["seasons"])
    build = _task("F1", "Average birth year of people?", "SELECT AVG(birth_year) FROM people",
                  ["people"])  # fmt: skip
    amount = _task("F1", "Total amount of sales?", "SELECT SUM(amount) FROM sales", ["sales"])
    assert _fires(lint, day, rule) and _fires(lint, code_avg, rule) and _fires(lint, season, rule)
    assert not _fires(lint, build, rule)  # an entity's average year: an age, meaningful
    assert not _fires(lint, amount, rule)


def test_count_as_category(card: SchemaCard) -> None:
    lint = Linter(card)
    bad = _task("F2", "Top 3 games values by number of seasons?",
                "SELECT games, COUNT(*) AS m FROM seasons GROUP BY games ORDER BY m DESC LIMIT 3",
                ["seasons"])  # fmt: skip
    good = _task("F2", "Top 3 teams by number of seasons?",
                 "SELECT team_code, COUNT(*) AS m FROM seasons GROUP BY team_code "
                 "ORDER BY m DESC LIMIT 3", ["seasons"])  # fmt: skip
    assert _fires(lint, bad, "count_as_category")
    assert not _fires(lint, good, "count_as_category")


def test_raw_identifier_in_prompt(card: SchemaCard) -> None:
    lint = Linter(card)
    rule = "raw_identifier_in_prompt"
    snake = _task("F1", "What is the total season_year of seasons?", None, ["seasons"])
    glued = _task("F1", "What is the highest teamgames of seasons?", None, ["seasons"])
    camel = card.model_copy(deep=True)
    camel.table("people").columns[2].name = "birthDay"
    camel.table("seasons").columns[4].name = "teamgames"  # "team" and "games": the schema's words
    camel_task = _task("F1", "What is the total birthDay of people?", None, ["people"])
    fine = _task(
        "F7",
        "How many sales have no recorded amount? It is missing when sales.amount is NULL; "
        "count team 'season_year' too.",
        None,
        ["sales"],
    )
    assert lint.raw_identifier(snake.prompt) == "season_year" and _fires(lint, snake, rule)
    assert not _fires(lint, glued, rule)  # not a column of this card: an ordinary word
    assert _fires(Linter(camel), glued, rule) and _fires(Linter(camel), camel_task, rule)
    assert not _fires(lint, fine, rule)  # qualified names and quoted values are definitions


def test_duplicate_not_key(card: SchemaCard) -> None:
    lint = Linter(card)
    business_id = _task("F7", "How many items repeat the (i_item_id) of an earlier row?",
                        "SELECT COUNT(*) - COUNT(DISTINCT i_item_id) FROM items", ["items"],
                        shape="duplicate_rows")  # fmt: skip
    measure = _task("F7", "How many sales repeat an amount?",
                    "SELECT COUNT(*) - COUNT(DISTINCT amount) FROM sales", ["sales"],
                    shape="duplicate_rows")  # fmt: skip
    key = _task("F7", "How many sales repeat an earlier sale?",
                "SELECT COUNT(*) - COUNT(DISTINCT sale_id) FROM sales", ["sales"],
                shape="duplicate_rows")  # fmt: skip
    assert _fires(lint, business_id, "duplicate_not_key")  # an SCD2 id repeats by design
    assert _fires(lint, measure, "duplicate_not_key")
    refs = _task("F7", "How many sales repeat the (person_id, i_item_sk) of an earlier row?",
                 "SELECT COUNT(*) - COUNT(DISTINCT (person_id, i_item_sk)) FROM sales", ["sales"],
                 shape="duplicate_rows")  # fmt: skip
    assert not _fires(lint, key, "duplicate_not_key")
    assert _fires(lint, refs, "duplicate_not_key")  # an event's references: a key by chance


def test_vacuous_antijoin_and_total_share(card: SchemaCard) -> None:
    lint = Linter(card)
    sql = ("SELECT r.person_id FROM people AS r WHERE NOT EXISTS(SELECT 1 FROM sales AS t "
           "WHERE t.person_id = r.person_id AND t.quantity = 3) ORDER BY r.person_id")  # fmt: skip
    vacuous = _task("F6", "Which people never bought 3?", sql, ["people", "sales"],
                    shape="unused_keys_sql", result_rows=290)  # fmt: skip
    sound = _task("F6", "Which people never bought 3?", sql, ["people", "sales"],
                  shape="unused_keys_sql", result_rows=100)  # fmt: skip
    active = sql.replace("ORDER BY", "AND r.is_active = true ORDER BY")
    people = card.table("people")
    outer = next(v.count for v in people.column("is_active").top_values if v.value is True)
    filtered = _task("F6", "Which active people never bought 3?", active, ["people", "sales"],
                     shape="unused_keys_sql", result_rows=outer)  # fmt: skip
    assert _fires(lint, vacuous, "vacuous_antijoin")
    assert not _fires(lint, sound, "vacuous_antijoin")
    assert _fires(lint, filtered, "vacuous_antijoin")  # the outer set read from top values
    share = "SELECT COUNT(*) FILTER (WHERE quantity > 0) * 100.0 / COUNT(*) FROM sales"
    total = _task("F5", "What share of sales sold at least one?", share, ["sales"],
                  answer={"kind": "number", "value": 100.0})  # fmt: skip
    part = _task("F5", "What share of sales sold more than 4?", share, ["sales"],
                 answer={"kind": "number", "value": 55.5})  # fmt: skip
    assert _fires(lint, total, "total_share") and not _fires(lint, part, "total_share")


def test_current_as_missing(card: SchemaCard) -> None:
    rule = "current_as_missing"
    end = _task("F7", "What share of items have no recorded rec end date?",
                "SELECT COUNT(*) FILTER (WHERE i_rec_end_date IS NULL) * 100.0 / COUNT(*) "
                "FROM items", ["items"], shape="null_rate")  # fmt: skip
    price = _task("F7", "What share of items have no recorded price?",
                  "SELECT COUNT(*) FILTER (WHERE i_price IS NULL) * 100.0 / COUNT(*) FROM items",
                  ["items"], shape="null_rate")  # fmt: skip
    start = _task("F7", "What share of items have no recorded rec start date?",
                  "SELECT COUNT(*) FILTER (WHERE i_rec_start_date IS NULL) FROM items",
                  ["items"], shape="null_count")  # fmt: skip
    lint = Linter(card)
    assert _fires(lint, end, rule) and not _fires(lint, price, rule)
    assert not _fires(lint, start, rule)  # an open end means current; a missing start does not
    # A self-reference (a manager): its NULL is the top of the hierarchy, not missing data.
    boss = card.model_copy(deep=True)
    fk = ForeignKeyCard(table="people", columns=["birth_year"], ref_table="people",
                        ref_columns=["person_id"], source="declared", evidence="declared",
                        coverage=1.0, row_coverage=1.0, orphan_values=0, orphan_rows=0)  # fmt: skip
    boss.foreign_keys.append(fk)
    top = _task("F7", "How many people have no recorded manager?",
                "SELECT COUNT(*) FILTER (WHERE birth_year IS NULL) FROM people", ["people"],
                shape="null_count")  # fmt: skip
    assert _fires(Linter(boss), top, rule) and not _fires(lint, top, rule)


def test_report_counts_warnings_without_failing(card: SchemaCard) -> None:
    day = _task("F1", "What is the total birth day of people?", "SELECT SUM(birth_day) FROM people",
                ["people"])  # fmt: skip
    report = lint_tasks([day, day], card)
    assert report.counts == {"meaningless_aggregate": 2}
    assert report.failing == [] and report.warnings == ["meaningless_aggregate"]
    assert Linter(card).rules(day) == []  # generation drops on failing rules only
    assert RULES_NAME in report.summary() and "meaningless_aggregate 2" in report.summary()
    assert set(WARNING_RULES) <= set(report.summary().replace(",", " ").split())
