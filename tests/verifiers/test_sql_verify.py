"""`verify_sql` end to end on all three engines: refusals are forbidden_action with reward 0 and
untouched data, the candidate's limits follow the gold, and errors are statuses."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import sqlv_fixtures as fx
from sqlv_fixtures import file_digest, pg_checksum

from workgym.core.verdict import Status
from workgym.verifiers import sql_exec
from workgym.verifiers.sql import GoldCache, SqlAnswerSpec, candidate_limits, verify_sql

flights_db, flights_sqlite, pg_reader = fx.flights_db, fx.flights_sqlite, fx.pg_reader
ENGINES = ["duckdb", "sqlite", "postgres"]
GOLD = "SELECT origin, count(*) AS n FROM flights WHERE dep_delay > 60 GROUP BY origin"
SPEC = SqlAnswerSpec()

# The acceptance list: refused by the SQL verifier on all three engines.
FORBIDDEN = [
    "DELETE FROM flights",
    "UPDATE flights SET dep_delay = 0",
    "DROP TABLE flights",
    "WITH x AS (DELETE FROM flights RETURNING *) SELECT origin, 1 AS n FROM x",
    "ATTACH 'other.db' AS o",
    "COPY flights TO 'out.csv'",
    "PRAGMA table_info(flights)",
    "SELECT * FROM read_csv('/etc/passwd')",
    "SELECT pg_read_file('/etc/passwd')",
    "SELECT origin, count(*) FROM flights GROUP BY 1; DELETE FROM flights",
]


def _target(engine: str, request: pytest.FixtureRequest) -> Any:
    name = {"duckdb": "flights_db", "sqlite": "flights_sqlite", "postgres": "pg_reader"}[engine]
    return request.getfixturevalue(name)


def _state(engine: str, target: Any) -> Any:
    return pg_checksum(target) if engine == "postgres" else file_digest(Path(target))


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("sql", FORBIDDEN)
def test_forbidden_statements_score_zero_and_change_nothing(
    engine: str, sql: str, request: pytest.FixtureRequest
) -> None:
    target = _target(engine, request)
    before = _state(engine, target)
    verdict = verify_sql(sql, GOLD, SPEC, [target], engine)  # type: ignore[arg-type]
    assert verdict.status in (Status.forbidden_action, Status.parse_error), verdict
    assert verdict.reward == 0.0 and not verdict.success
    assert "only one read-only SELECT" in verdict.evidence["reason"] or "parse" in str(verdict)
    if verdict.status == Status.forbidden_action:
        assert verdict.flags == ["tamper"]
    assert _state(engine, target) == before


@pytest.mark.parametrize("engine", ENGINES)
def test_right_answer_passes_and_fn_probes_pass_on_every_engine(
    engine: str, request: pytest.FixtureRequest
) -> None:
    target = _target(engine, request)
    for candidate in (
        GOLD,
        # right columns in another order, rows in another order, another formulation
        "SELECT count(*) AS flights, origin FROM flights WHERE NOT dep_delay <= 60"
        " GROUP BY origin ORDER BY origin DESC",
    ):
        verdict = verify_sql(candidate, GOLD, SPEC, [target], engine)  # type: ignore[arg-type]
        assert verdict.success and verdict.reward == 1.0, verdict.evidence
        assert verdict.status == Status.ok


@pytest.mark.parametrize("engine", ENGINES)
def test_wrong_answers_fail_on_every_engine(engine: str, request: pytest.FixtureRequest) -> None:
    target = _target(engine, request)
    for candidate in (
        "SELECT origin, count(*) AS n FROM flights WHERE dep_delay >= 60 GROUP BY origin",
        "SELECT origin, count(dep_delay) FROM flights WHERE 1 = 0 GROUP BY origin",
        "SELECT origin, count(*), 1 AS extra FROM flights WHERE dep_delay > 60 GROUP BY origin",
    ):
        verdict = verify_sql(candidate, GOLD, SPEC, [target], engine)  # type: ignore[arg-type]
        assert not verdict.success and verdict.reward == 0.0 and verdict.status == Status.ok


@pytest.mark.parametrize("engine", ENGINES)
def test_cartesian_product_times_out_as_a_status(
    engine: str, request: pytest.FixtureRequest
) -> None:
    target = _target(engine, request)
    cand = "SELECT a.origin, count(*) FROM flights a, flights b, flights c GROUP BY a.origin"
    verdict = verify_sql(cand, GOLD, SPEC, [target], engine)  # type: ignore[arg-type]
    assert verdict.status == Status.timeout and verdict.reward == 0.0
    check = verdict.evidence["databases"][0]
    assert check["timeout_s"] == 2.0 and "limit" in check["reason"]


def test_row_cap_is_hit_and_fails(flights_db: Path) -> None:
    cand = "SELECT a.origin, b.month FROM flights a, flights b"
    verdict = verify_sql(cand, GOLD, SPEC, [flights_db])
    assert not verdict.success and verdict.status == Status.ok
    check = verdict.evidence["databases"][0]
    assert check["row_cap"] == 10_000 and "row cap" in check["reason"]


def test_candidate_limits_follow_the_gold() -> None:
    assert candidate_limits(0.01, 3) == (2.0, 10_000)
    assert candidate_limits(0.5, 2_000) == (5.0, 20_000)
    assert candidate_limits(9.0, 0) == (30.0, 10_000)


def test_engine_errors_and_parse_errors_are_statuses(flights_db: Path) -> None:
    verdict = verify_sql("SELECT nope FROM flights", GOLD, SPEC, [flights_db])
    assert verdict.status == Status.agent_error and verdict.reward == 0.0
    verdict = verify_sql("SELEC origin FROM flights", GOLD, SPEC, [flights_db])
    assert verdict.status == Status.parse_error and verdict.reward == 0.0


def test_a_broken_gold_is_a_verifier_error(flights_db: Path) -> None:
    verdict = verify_sql(GOLD, "SELECT nope FROM flights", SPEC, [flights_db])
    assert verdict.status == Status.verifier_error and not verdict.trainable


def test_gold_and_candidate_never_share_a_connection(
    flights_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = tmp_path / "other.duckdb"
    shutil.copyfile(flights_db, other)
    sessions: list[list[str]] = []
    real_connect = sql_exec.duckdb.connect

    class Spy:
        """Records what each connection ran; statements (not setup strings) are queries."""

        def __init__(self, con: Any) -> None:
            self.con, self.ran = con, []
            sessions.append(self.ran)

        def execute(self, query: Any, *args: Any) -> Any:
            if not isinstance(query, str):
                self.ran.append(query.query)
            return self.con.execute(query, *args)

        def sql(self, query: str) -> Any:  # how sql_exec runs the statement it checked
            self.ran.append(query)
            return self.con.sql(query)

        def __getattr__(self, name: str) -> Any:
            return getattr(self.con, name)

    monkeypatch.setattr(sql_exec.duckdb, "connect", lambda *a, **k: Spy(real_connect(*a, **k)))
    cand = "SELECT origin, count(*) FROM flights WHERE dep_delay > 60 GROUP BY 1"
    verdict = verify_sql(cand, GOLD, SPEC, [flights_db, other])
    assert verdict.success
    # Two databases x (gold, candidate): four sessions that each ran exactly one query.
    used = [ran for ran in sessions if ran]
    assert sorted(q for ran in used for q in ran) == sorted([GOLD, GOLD, cand, cand])
    assert all(len(ran) == 1 for ran in used)


def test_scoring_is_deterministic_and_evidence_holds_no_gold_rows(flights_db: Path) -> None:
    cache = GoldCache()
    cand = "SELECT origin, count(*) FROM flights WHERE dep_delay > 61 GROUP BY origin"
    first = verify_sql(cand, GOLD, SPEC, [flights_db], gold_cache=cache)
    second = verify_sql(cand, GOLD, SPEC, [flights_db], gold_cache=cache)
    strip = {"gold_s", "candidate_s"}
    a = [{k: v for k, v in c.items() if k not in strip} for c in first.evidence["databases"]]
    b = [{k: v for k, v in c.items() if k not in strip} for c in second.evidence["databases"]]
    assert a == b and first.reward == second.reward == 0.0
    assert "JFK" not in str(first.evidence) and "EWR" not in str(first.evidence)


def test_bad_arguments_are_clear(flights_db: Path) -> None:
    with pytest.raises(ValueError, match="at least one database"):
        verify_sql(GOLD, GOLD, SPEC, [])
    with pytest.raises(ValueError, match="duckdb, sqlite or postgres"):
        verify_sql(GOLD, GOLD, SPEC, [flights_db], "mysql")  # type: ignore[arg-type]
