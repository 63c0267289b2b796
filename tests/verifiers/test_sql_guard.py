"""Read-only proof #1: the parser guard refuses every write, side door and second statement."""

from __future__ import annotations

import pytest

from workgym.verifiers.sql_guard import check_read_only

ENGINES = ["duckdb", "sqlite", "postgres"]

# (sql, words the one-line refusal must contain), refused in every dialect.
REFUSED_EVERYWHERE = [
    ("DELETE FROM flights", "DELETE"),
    ("UPDATE flights SET dep_delay = 0", "UPDATE"),
    ("DROP TABLE flights", "DROP"),
    ("INSERT INTO flights SELECT * FROM flights", "INSERT"),
    ("CREATE TABLE x AS SELECT 1", "CREATE"),
    ("ALTER TABLE flights ADD COLUMN z INT", "ALTER"),
    ("WITH x AS (DELETE FROM flights RETURNING *) SELECT * FROM x", "DELETE inside a CTE"),
    ("WITH x AS (UPDATE flights SET day = 1 RETURNING *) SELECT 1", "UPDATE inside a CTE"),
    ("ATTACH 'other.db' AS o", "ATTACH"),
    ("PRAGMA table_info(flights)", "PRAGMA"),
    ("SELECT 1; SELECT 2", "2 statements"),
    ("SELECT 1; DELETE FROM flights", "2 statements"),
    ("BEGIN", "BEGIN"),
    ("COMMIT", "COMMIT"),
    ("VACUUM", "VACUUM"),
    ("SELECT * FROM read_csv('/etc/passwd')", "read_csv()"),
    ("SELECT * FROM '/etc/passwd'", "file path"),
    ("SELECT load_extension('evil')", "load_extension()"),
    ("SELECT pg_read_file('/etc/passwd')", "pg_read_file()"),
    ("SELECT lo_import('/etc/passwd')", "lo_import()"),
    ("SELECT set_config('default_transaction_read_only', 'off', false)", "set_config()"),
    ("SELECT nextval('seq')", "nextval()"),
]

DUCKDB_ONLY = [
    ("COPY flights TO 'out.csv'", "COPY"),
    ("DETACH other", "DETACH"),
    ("SET threads = 1", "SET"),
    ("RESET threads", "RESET"),
    ("INSTALL httpfs", "INSTALL"),
    ("LOAD httpfs", "LOAD"),
    ("CALL dbgen(sf = 1)", "CALL"),
    ("EXPLAIN SELECT 1", "EXPLAIN"),
    ("USE memory", "USE"),
    ("CHECKPOINT", "CHECKPOINT"),
    ("DESCRIBE flights", "DESCRIBE"),
    ("SELECT * FROM read_parquet('x.parquet')", "read_parquet()"),
    ("SELECT * FROM read_json_auto('x.json')", "read_json_auto()"),
    ("SELECT * FROM read_text('/etc/passwd')", "read_text()"),
    ("SELECT * FROM read_blob('/etc/passwd')", "read_blob()"),
    ("SELECT * FROM glob('/etc/*')", "glob()"),
    ("SELECT * FROM sniff_csv('/etc/passwd')", "sniff_csv()"),
    ("SELECT * FROM sqlite_scan('x.db', 't')", "sqlite_scan()"),
    ("SELECT * FROM postgres_scan('dbname=x', 'public', 't')", "postgres_scan()"),
    ('SELECT * FROM "data/flights.parquet"', "file path"),
    ("SELECT * FROM query('SELECT * FROM read_csv(''x'')')", "query()"),
    ("SELECT * FROM flights FOR UPDATE", "FOR UPDATE"),
]

POSTGRES_ONLY = [
    ("COPY flights TO '/tmp/out.csv'", "COPY"),
    ("COPY flights FROM STDIN", "COPY"),
    ("SELECT * INTO copy_of_flights FROM flights", "SELECT INTO"),
    ("SET TRANSACTION READ WRITE", "SET"),
    ("SELECT * FROM flights FOR UPDATE", "FOR UPDATE"),
    ("DO $$ BEGIN DELETE FROM flights; END $$", "DO"),
    ("LOCK TABLE flights", "LOCK"),
    ("SELECT pg_ls_dir('/')", "pg_ls_dir()"),
    ("SELECT dblink('host=x', 'select 1')", "dblink()"),
]

ALLOWED = [
    "SELECT count(*) FROM flights",
    "select carrier, count(*) AS n from flights group by carrier order by n desc limit 3",
    "WITH d AS (SELECT dest FROM flights) SELECT dest, count(*) FROM d GROUP BY dest",
    "SELECT f.dest FROM flights f LEFT JOIN airports a ON f.dest = a.faa WHERE a.faa IS NULL",
    "SELECT origin FROM flights UNION ALL SELECT dest FROM flights",
    "(SELECT 1)",
    "SELECT 'DELETE FROM flights; DROP TABLE x' AS not_a_statement",
    "SELECT 1 -- DROP TABLE flights",
    "SELECT dest, row_number() OVER (PARTITION BY origin ORDER BY dep_delay) FROM flights",
    "SELECT 1;",
]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(("sql", "words"), REFUSED_EVERYWHERE)
def test_guard_refuses_writes_and_side_doors_on_every_dialect(
    engine: str, sql: str, words: str
) -> None:
    result = check_read_only(sql, engine)  # type: ignore[arg-type]
    assert not result.ok, sql
    assert result.kind in ("forbidden", "parse_error")
    if result.kind == "forbidden":
        assert words in result.reason
    assert "\n" not in result.reason


@pytest.mark.parametrize(("sql", "words"), DUCKDB_ONLY)
def test_guard_refuses_duckdb_side_doors(sql: str, words: str) -> None:
    result = check_read_only(sql, "duckdb")
    assert not result.ok and result.kind == "forbidden", sql
    assert words in result.reason
    assert result.reason.startswith("only one read-only SELECT is allowed")


@pytest.mark.parametrize(("sql", "words"), POSTGRES_ONLY)
def test_guard_refuses_postgres_side_doors(sql: str, words: str) -> None:
    result = check_read_only(sql, "postgres")
    assert not result.ok, sql
    assert words in result.reason


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("sql", ALLOWED)
def test_guard_allows_plain_selects(engine: str, sql: str) -> None:
    if engine == "sqlite" and "row_number" in sql:
        pytest.skip("window syntax is parsed the same way; one dialect is enough")
    result = check_read_only(sql, engine)  # type: ignore[arg-type]
    assert result.ok, result.reason


def test_the_cte_refusal_names_the_hidden_write() -> None:
    reason = check_read_only("WITH x AS (DELETE FROM t RETURNING *) SELECT * FROM x").reason
    assert reason == "only one read-only SELECT is allowed: found DELETE inside a CTE"


@pytest.mark.parametrize("sql", ["", "  ;  ", "SELEC 1", "SELECT (1", "SELECT 'unterminated"])
def test_unparseable_or_empty_text_is_a_parse_error_with_one_line(sql: str) -> None:
    result = check_read_only(sql)
    assert not result.ok and result.kind == "parse_error"
    assert "\n" not in result.reason and "\x1b" not in result.reason
    assert "SELECT" in result.reason


def test_overlong_query_is_refused() -> None:
    result = check_read_only("SELECT " + " + ".join(["1"] * 60_000))
    assert not result.ok and "longer than" in result.reason


def test_unknown_engine_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="use one of"):
        check_read_only("SELECT 1", "oracle")  # type: ignore[arg-type]
