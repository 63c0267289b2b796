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
from workgym.envs.warehouse.schema.card import ColumnCard, SchemaCard
from workgym.envs.warehouse.schema.meaning import category
from workgym.envs.warehouse.schema.naming import row_nouns
from workgym.envs.warehouse.schema.profile import profile_snapshot
from workgym.envs.warehouse.source.snapshot import build_snapshot


def test_rows_are_named_by_their_plural_not_as_records() -> None:
    assert row_nouns("package_relation") == ("package relation", "package relations")
    assert row_nouns("changelog_entry") == ("changelog entry", "changelog entries")
    assert row_nouns("person") == ("person", "people")
    assert row_nouns("customer_address") == ("customer address", "customer addresses")
    assert row_nouns("flights") == ("flight", "flights")  # a plural name stays
    assert row_nouns("date_dim") == ("date", "dates")
    # no plural an analyst would write: a mass noun, an abbreviation without vowels
    assert row_nouns("inventory") == ("inventory record", "inventory records")
    assert row_nouns("geodetic_crs") == ("geodetic crs record", "geodetic crs records")
    assert row_nouns("数据") == ("数据 record", "数据 records")  # no ASCII words: the name itself


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
    assert LINT_VERSION == 4
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
