"""Questions as an analyst writes them, and dated headers as events (issue 40, decision 0181).

Round 6 of docs/warehouse-samples.md judged 68 of 90 sampled tasks "stilted": rows called
"package relation records", conditions read along keys ("its package refers to a package record
whose ..."), raw `table.column` definitions in the prose. These tests pin the new wording and
the lint rules (`warehouse-lint/4`) that count the old one, and the typing that lets a dated
header (a Debian changelog entry, a shop's order) host trends and investigations.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from workgym.core.tasks import Task
from workgym.envs.warehouse.generate.phrasing import COUNT_TEMPLATES, TEMPLATES, Lexicon, render
from workgym.envs.warehouse.runtime.lint import LINT_VERSION, Linter
from workgym.envs.warehouse.schema.card import ColumnCard, SchemaCard, TableCard
from workgym.envs.warehouse.schema.meaning import category
from workgym.envs.warehouse.schema.naming import (
    column_words,
    expansion,
    row_nouns,
    singular_word,
    unglue,
)
from workgym.envs.warehouse.schema.profile import profile_snapshot
from workgym.envs.warehouse.source.snapshot import build_snapshot


def test_rows_are_named_by_their_plural_not_as_records() -> None:
    assert row_nouns("package_relation") == ("package relation", "package relations")
    assert row_nouns("changelog_entry") == ("changelog entry", "changelog entries")
    assert row_nouns("person") == ("person", "people")
    assert row_nouns("customer_address") == ("customer address", "customer addresses")
    assert row_nouns("flights") == ("flight", "flights")  # a plural name stays
    assert row_nouns("date_dim") == ("date", "dates")
    # no plural an analyst would write: a mass noun
    assert row_nouns("inventory") == ("inventory record", "inventory records")
    assert row_nouns("数据") == ("数据 record", "数据 records")  # no ASCII words: the name itself


def test_names_the_held_out_registry_read_badly() -> None:
    """Round 7's held-out EPSG registry: 21 of 22 stilted tasks were names (decision 0183)."""
    # an abbreviation without vowels is an acronym, with an acronym's plural
    assert row_nouns("geodetic_crs") == ("geodetic CRS", "geodetic CRSs")
    # "X of Y": the head noun takes the plural, not "unit of measures"
    assert row_nouns("unit_of_measure") == ("unit of measure", "units of measure")
    # a trailing "table" says what the rows are stored in, not what they are
    assert row_nouns("helmert_transformation_table")[1] == "helmert transformations"
    assert row_nouns("usage") == ("usage", "usages")  # EPSG's usages are countable
    # a whole dictionary word likelier than its parts stays whole
    assert unglue("deprecation") == ["deprecation"] and unglue("flattening") == ["flattening"]
    assert unglue("supersession") == ["supersession"]
    assert unglue("tailnum") == ["tail", "num"] and unglue("shipto") == ["ship", "to"]
    # an abbreviation names the singular: `auth_name` is an authority's name
    assert expansion("auth", ["Code of the authorities"]) == "authority"
    assert singular_word("authorities") == "authority" and singular_word("status") == "status"
    assert singular_word("CRS") == "CRS" and singular_word("addresses") == "address"


def test_a_count_column_reads_as_the_number_of_what_it_counts() -> None:
    """Round 8 judged "the total change count" stilted: `change_count` is a number of changes."""
    entry = TableCard(
        name="changelog_entry", rows=10, source_rows=10,
        columns=[_column("change_count"), _column("dep_count"), _column("closes_bug_count")],
    )  # fmt: skip
    assert column_words(entry, "change_count") == "number of changes"
    assert column_words(entry, "dep_count") == "dep count"  # `dep` is no common word
    assert column_words(entry, "closes_bug_count") == "closes bug count"  # two words: kept


def _column(name: str) -> ColumnCard:
    return ColumnCard(
        name=name, type="INTEGER", family="integer", source_type="INTEGER", null_count=0,
        null_rate=0.0, distinct_count=10, meaning="count",
    )  # fmt: skip


def _card_of(tmp_path: Path, sql: str) -> SchemaCard:
    """The profiled card of a DuckDB warehouse made by `sql`."""
    path = tmp_path / "warehouse.duckdb"
    con = duckdb.connect(str(path))
    con.execute(sql)
    con.close()
    build_snapshot(f"duckdb://{path}", tmp_path / "snap")
    return profile_snapshot(tmp_path / "snap")


def test_a_count_reads_how_many_with_the_same_template_index() -> None:
    for family, templates in COUNT_TEMPLATES.items():
        assert len(templates) == len(TEMPLATES[family])  # held-out template indices still hold
    slots = {"metric": "count", "rows": "flights", "conds": "origin is 'JFK'"}
    assert render("F1", 0, slots) == "How many flights are there where origin is 'JFK'?"
    assert render("F1", 0, {**slots, "metric": "total distance"}).startswith("What is the total")


def test_a_reference_is_named_by_the_row_it_reaches(nyc_card: SchemaCard) -> None:
    lex = Lexicon(nyc_card)
    fks = {(f.table, f.columns[0]): f for f in nyc_card.foreign_keys}
    named = {}
    for column in ("tailnum", "carrier", "origin"):
        fk = fks[("flights", column)]
        named[column] = lex.referenced("flights", column, fk.ref_table, fk.ref_columns[0])
    assert named["tailnum"] == "plane"  # the key's own name: no role to keep
    assert named["carrier"] == "airline"
    assert named["origin"] == "origin airport"  # the role says which of two airports


def test_flags_read_as_words_and_units_leave_the_name(nyc_card: SchemaCard) -> None:
    lex = Lexicon(nyc_card)
    assert lex.condition("flights", "origin", "=", True) == "origin is true"  # not "True"
    assert lex.value("flights", "origin", False) == "false"


def test_a_version_string_is_no_category() -> None:
    """ "The top 3 target versions" ranked '12' first because five unrelated packages had one."""

    def column(name: str) -> ColumnCard:
        return ColumnCard(
            name=name, type="VARCHAR", family="string", source_type="VARCHAR", null_count=0,
            null_rate=0.0, distinct_count=50, meaning="code",
        )  # fmt: skip

    assert not category(column("target_version")) and not category(column("schemaVersion"))
    assert category(column("version_operator")) and category(column("section"))


def _task(family: str, prompt: str, sql: str = "SELECT 1") -> Task:
    return Task(
        id="t",
        family=f"{family}/x",
        prompt=prompt,
        answer={"kind": "integer", "value": 1},
        meta={"family": family, "reference_sql": sql, "tables": ["flights"], "shape": "x"},
    )


def test_the_lint_counts_record_key_path_and_table_column_talk(nyc_card: SchemaCard) -> None:
    assert LINT_VERSION >= 4  # the version that brought these rules; 5 added per-unit sums
    linter = Linter(nyc_card)
    old = _task(
        "F3",
        "How many flight records are there where its tailnum refers to a plane whose "
        "manufacturer is 'BOEING'? A plane matches a flight when flights.tailnum equals "
        'planes.tailnum. Answer with submit_answer, kind "integer": a whole number.',
    )
    new = _task(
        "F3",
        "How many flights are there where the plane's manufacturer is 'BOEING'? A flight "
        "belongs to the plane with the same tail number. Answer with submit_answer, kind "
        '"column": the column as table.column.',
    )
    found = linter.rules(old, warnings=True)
    assert {"key_path_talk", "qualified_name_in_prose"} <= set(found)
    assert not {"record_talk", "key_path_talk", "qualified_name_in_prose"} & set(
        linter.rules(new, warnings=True)
    )  # the answer instruction may name table.column: it says what to return
    # weather's rows are "weather observations": "weather records" is record talk too
    talk = _task("F1", "How many weather records are there where origin is 'JFK'?")
    assert "record_talk" in linter.rules(talk, warnings=True)


def test_an_investigation_brief_is_read_like_any_question(nyc_card: SchemaCard) -> None:
    """Version 6 (decision 0195): F9's brief lost its exemption; its answer clause, which defines
    the predicate's columns (`table.column`), is still left alone."""
    assert LINT_VERSION >= 6
    linter = Linter(nyc_card)
    clause = "\n\nThe predicate selects the affected rows of `flights` (columns of `flights`, or " \
        "table.column of a table its foreign keys reference)."  # fmt: skip
    old = _task(
        "F9",
        "Our dashboard shows the number of flights at 10 for the week 2013-03-04 to 2013-03-11. "
        "Find out why it changed. Each flight's time is the date flights.time_hour refers to "
        "in `weather`." + clause,
    )
    new = _task(
        "F9",
        "Our dashboard shows the number of flights whose plane is on record at 10 for the week "
        "2013-03-04 to 2013-03-11. Find out why it changed. Each flight is dated by its "
        "scheduled time." + clause,
    )
    assert {"key_path_talk", "qualified_name_in_prose"} <= set(linter.rules(old, warnings=True))
    assert not {"key_path_talk", "qualified_name_in_prose", "raw_identifier_in_prompt"} & set(
        linter.rules(new, warnings=True)
    )


@pytest.fixture(scope="module")
def changelog(tmp_path_factory: pytest.TempPathFactory) -> SchemaCard:
    """Debian's shape: entries (a dated release each, two a time stamp: a unique stamp would
    read as a date dimension) and their change items, keyed by the entry and an item number;
    no declared foreign key."""
    out = tmp_path_factory.mktemp("changelog")
    path = out / "changelog.duckdb"
    con = duckdb.connect(str(path))
    con.execute(
        "CREATE TABLE changelog_entry (entry_id INTEGER PRIMARY KEY, source_package VARCHAR, "
        "urgency VARCHAR, released_at TIMESTAMP)"
    )
    con.execute(
        "INSERT INTO changelog_entry SELECT i, 'pkg' || (i % 40), "
        "['low', 'medium', 'high'][1 + i % 3], TIMESTAMP '2020-01-01' + INTERVAL (i // 2 * 7) "
        "HOUR FROM range(1, 1201) t(i)"
    )
    con.execute(
        "CREATE TABLE changelog_change (entry_id INTEGER, item_no INTEGER, text VARCHAR, "
        "PRIMARY KEY (entry_id, item_no))"
    )
    con.execute(
        "INSERT INTO changelog_change SELECT e, n, 'fix ' || e || '.' || n "
        "FROM range(1, 1201) a(e), range(1, 4) b(n)"
    )
    con.close()
    snap = out / "snap"
    build_snapshot(f"duckdb://{path}", snap)
    return profile_snapshot(snap)


def test_a_dated_header_is_an_event_and_its_lines_inherit_its_date(changelog: SchemaCard) -> None:
    entry = changelog.table("changelog_entry")
    assert entry.role == "fact" and entry.grain == "event"  # was a dimension of entities
    link = changelog.time_link("changelog_change")
    assert link is not None and link.via == "header"  # names share "changelog", key is a prefix
    assert (link.dim, link.time_column) == ("changelog_entry", "released_at")


def test_changes_in_an_unrelated_table_do_not_inherit_a_date(tmp_path: Path) -> None:
    """A shared first word alone is no header: the line's key must start with the header key."""
    path = tmp_path / "shared.duckdb"
    con = duckdb.connect(str(path))
    con.execute(
        "CREATE TABLE package_release (release_id INTEGER PRIMARY KEY, released_at TIMESTAMP)"
    )
    con.execute(
        "INSERT INTO package_release SELECT i, TIMESTAMP '2020-01-01' + INTERVAL (i // 2 * 5) "
        "HOUR FROM range(1, 301) t(i)"
    )
    con.execute("CREATE TABLE package_tag (tag_id INTEGER PRIMARY KEY, release_id INTEGER)")
    con.execute("INSERT INTO package_tag SELECT i, 1 + i % 300 FROM range(1, 901) t(i)")
    con.close()
    build_snapshot(f"duckdb://{path}", tmp_path / "snap")
    card = profile_snapshot(tmp_path / "snap")
    assert card.time_link("package_tag") is None


def test_investigation_metrics_name_columns_and_references_by_their_words(
    nyc_card: SchemaCard,
) -> None:
    """Round 7 judged "web sales whose web_sales.ws_ship_mode_sk matches a ship mode" stilted,
    and rounds 13-14 the definitions in parentheses too (`store_sales.ss_net_paid`, a key pair):
    a metric and a row's date are said in words (decision 0195)."""
    from workgym.envs.warehouse.investigate.frame import MetricWords, discover, metrics
    from workgym.envs.warehouse.investigate.prompts import clock_of

    frames, _ = discover(nyc_card)
    flights = next(f for f in frames if f.fact == "flights")
    words = MetricWords(nyc_card)
    every = metrics(flights, nyc_card, words)
    labels = {m.kind: m.label for m in every}
    every_label = [m.label for m in every]
    assert "the number of flights whose plane is on record" in every_label
    assert labels["joined_sum"].startswith(
        "the total seats over flights, each flight counting its plane's seats (flights whose "
    )
    assert labels["avg"].endswith("are left out)") and "recorded" in labels["avg"]
    assert labels["hour_avg"].startswith("the average hour of day (0-23, UTC) of flights (the ")
    assert clock_of(flights, words).startswith("Each flight is dated by its ")
    for text in [*every_label, clock_of(flights, words)]:
        assert "." not in text.rstrip(".") and "_" not in text, text


def test_an_acronym_reads_the_same_in_tables_columns_and_references(tmp_path: Path) -> None:
    """Round 8 found "the vertical vertical CRS coordinate system codes": the reference's role
    ("vertical crs") no longer matched its row noun once that read "vertical CRS"."""
    card = _card_of(
        tmp_path,
        "CREATE TABLE vertical_crs (code VARCHAR PRIMARY KEY, name VARCHAR);"
        "CREATE TABLE compound_crs (code VARCHAR PRIMARY KEY, name VARCHAR,"
        " vertical_crs_code VARCHAR REFERENCES vertical_crs(code));"
        "INSERT INTO vertical_crs SELECT 'V' || i, 'height ' || i FROM range(5) t(i);"
        "INSERT INTO compound_crs SELECT 'C' || i, 'compound ' || i, 'V' || (i % 5)"
        " FROM range(40) t(i);",
    )
    lex = Lexicon(card)
    assert lex.rows("compound_crs") == "compound CRSs"
    assert lex.referenced("compound_crs", "vertical_crs_code", "vertical_crs", "code") == (
        "vertical CRS"
    )
    assert lex.column("compound_crs", "vertical_crs_code") == "vertical CRS code"


def test_a_flag_says_what_it_means_about_its_row(tmp_path: Path) -> None:
    """Round 7 judged "legal tender is true" stilted, round 9's blind judge "legal tender flag
    is set": a flag reads as a statement about its row (decision 0184)."""
    card = _card_of(
        tmp_path,
        "CREATE TABLE territory_currency (territory VARCHAR, currency VARCHAR,"
        " legal_tender BOOLEAN, is_active BOOLEAN, has_notes BOOLEAN);"
        "INSERT INTO territory_currency SELECT 'T' || i, 'C' || (i % 7), i % 4 <> 0, i % 3 = 0,"
        " i % 2 = 0 FROM range(60) t(i);",
    )
    lex = Lexicon(card)
    t = "territory_currency"
    row = "the territory currency"
    assert lex.condition(t, "legal_tender", "=", True) == f"{row} is legal tender"
    assert lex.condition(t, "legal_tender", "=", False) == f"{row} is not legal tender"
    assert lex.condition(t, "legal_tender", "!=", True) == f"{row} is not legal tender"
    assert lex.condition(t, "is_active", "=", True) == f"{row} is active"
    assert lex.condition(t, "has_notes", "=", False) == f"{row} does not have notes"
    # about a referenced row: the owner is the subject, not a possessive
    assert lex.condition(t, "legal_tender", "=", True, owner="the currency") == (
        "the currency is legal tender"
    )
    assert lex.condition(t, "currency", "=", "C1", owner="the row") == "the row's currency is 'C1'"


def test_number_of_a_count_column_is_said_once(tmp_path: Path) -> None:
    card = _card_of(
        tmp_path,
        "CREATE TABLE entries (entry_id INTEGER, change_count INTEGER, games INTEGER);"
        "INSERT INTO entries SELECT i, i % 9, i % 5 FROM range(50) t(i);",
    )
    lex = Lexicon(card)
    assert lex.number_of("entries", "change_count") == "number of changes"
    assert lex.number_of("entries", "games") == "number of games"


def test_stock_levels_by_date_are_a_snapshot_not_events(tmp_path: Path) -> None:
    """Round 7 judged "the 3 item colors with the largest number of inventory records"
    meaningless: an inventory row is an item in a warehouse on a date, not a thing that
    happened. Such a table is typed a snapshot, and no family counts or trends its rows."""
    from workgym.envs.warehouse.generate.families.draft import CardView

    card = _card_of(
        tmp_path,
        "CREATE TABLE item (item_id INTEGER PRIMARY KEY, color VARCHAR);"
        "INSERT INTO item SELECT i, ['red', 'blue', 'green'][1 + i % 3] FROM range(30) t(i);"
        "CREATE TABLE inventory (inv_date DATE, item_id INTEGER REFERENCES item(item_id),"
        " warehouse INTEGER, quantity_on_hand INTEGER);"
        "INSERT INTO inventory SELECT DATE '2020-01-06' + INTERVAL (7 * (i // 90)) DAY, i % 30,"
        " (i // 30) % 3, (i * 37) % 1000 FROM range(4500) t(i);"
        "CREATE TABLE sale (sold_at TIMESTAMP, item_id INTEGER REFERENCES item(item_id),"
        " quantity INTEGER);"
        "INSERT INTO sale SELECT TIMESTAMP '2020-01-01' + INTERVAL (i) HOUR, i % 30, 1 + i % 5"
        " FROM range(3000) t(i);",
    )
    assert card.table("inventory").grain == "snapshot"
    assert card.table("sale").grain == "event"
    assert [t.name for t in CardView(card).facts()] == ["sale"]
