"""Abbreviations the data spells out: arithmetic identities and sibling names (decision 0184)."""

from __future__ import annotations

from pathlib import Path

import duckdb

from workgym.envs.warehouse.schema.naming import Namer, spelled_siblings
from workgym.envs.warehouse.schema.profile import profile_snapshot
from workgym.envs.warehouse.source.snapshot import build_snapshot


def _shop(path: Path, *, identities_hold: bool) -> str:
    """Sales lines whose `ext` and `inc` columns follow their identities (or, when not
    `identities_hold`, carry unrelated numbers), and returns whose `amt` has a spelled sibling."""
    con = duckdb.connect(str(path))
    noise = "" if identities_hold else " + 7 * (i % 5) + 1"
    con.execute(
        "CREATE TABLE store_sales AS SELECT i AS ss_id, 1 + i % 4 AS ss_quantity, "
        "CAST(2.5 + i % 7 AS DECIMAL(9,2)) AS ss_sales_price, "
        f"CAST((1 + i % 4) * (2.5 + i % 7){noise} AS DECIMAL(9,2)) AS ss_ext_sales_price, "
        "CAST(10 + i % 9 AS DECIMAL(9,2)) AS ss_net_paid, "
        "CAST(0.5 + i % 3 AS DECIMAL(9,2)) AS ss_tax, "
        f"CAST(10 + i % 9 + 0.5 + i % 3{noise} AS DECIMAL(9,2)) AS ss_net_paid_inc_tax "
        "FROM range(200) t(i)"
    )
    con.execute(
        "CREATE TABLE store_returns AS SELECT i AS sr_id, CAST(i % 11 AS DECIMAL(9,2)) AS "
        "sr_return_amt, CAST(i % 5 AS DECIMAL(9,2)) AS sr_fee FROM range(50) t(i)"
    )
    con.execute(
        "CREATE TABLE catalog_returns AS SELECT i AS cr_id, CAST(i % 13 AS DECIMAL(9,2)) AS "
        "cr_return_amount, CAST(i % 3 AS DECIMAL(9,2)) AS cr_fee FROM range(50) t(i)"
    )
    con.close()
    return f"duckdb:///{path}"


def _names(tmp_path: Path, *, identities_hold: bool) -> Namer:
    url = _shop(tmp_path / "shop.duckdb", identities_hold=identities_hold)
    build_snapshot(url, tmp_path / "snap")
    return Namer(profile_snapshot(tmp_path / "snap"))


def test_an_identity_in_the_rows_spells_out_ext_and_inc(tmp_path: Path) -> None:
    names = _names(tmp_path, identities_hold=True)
    assert names.column("store_sales", "ss_ext_sales_price") == "extended sales price"
    assert names.column("store_sales", "ss_net_paid_inc_tax") == "net paid including tax"
    # a sibling name spells `amt` out (catalog returns' return amount)
    assert names.column("store_returns", "sr_return_amt") == "return amount"


def test_no_identity_no_expansion(tmp_path: Path) -> None:
    names = _names(tmp_path, identities_hold=False)
    assert names.column("store_sales", "ss_ext_sales_price") == "ext sales price"
    assert names.column("store_sales", "ss_net_paid_inc_tax") == "net paid inc tax"
    assert names.card.table("store_sales").abbreviations == {}


def test_siblings_spell_out_only_rare_words_with_one_reading() -> None:
    spelled = spelled_siblings(
        [
            ["return", "amt"],
            ["return", "amount"],
            ["sold", "date"],
            ["sold", "department"],  # `date` is a common word, no abbreviation
            ["source", "crs", "code"],
            ["source", "conversion", "code"],  # an acronym is no abbreviation
            ["mkt", "id"],
            ["market", "id"],
            ["mkt", "class"],
            ["marketing", "class"],  # two readings: left as it is
        ],
        acronyms=["crs"],
    )
    assert spelled == {"amt": "amount"}
