"""SQL nested 3,000 parentheses deep (issue 18, item 4b): the tool answers with a clear error and
the verifier's verdict is the agent's (parse_error, trainable), not a verifier error."""

from __future__ import annotations

from pathlib import Path

import pytest

from workgym.core.errors import ToolError
from workgym.envs.warehouse.runtime.tools import WarehouseState, query
from workgym.envs.warehouse.schema.card import SchemaCard
from workgym.verifiers.sql import SqlAnswerSpec, verify_sql
from workgym.verifiers.sql_exec import execute_sql
from workgym.verifiers.sql_guard import check_read_only

DEEP = "SELECT " + "(" * 3000 + "1" + ")" * 3000
DEEP_SUBQUERY = "SELECT * FROM " + "(SELECT * FROM " * 3000 + "flights" + ")" * 3000
GOLD = "SELECT count(*) FROM flights"


@pytest.mark.parametrize("sql", [DEEP, DEEP_SUBQUERY], ids=["parens", "subqueries"])
def test_deep_nesting_is_the_agents_parse_error(nyc_dir: Path, sql: str) -> None:
    guard = check_read_only(sql)
    assert not guard.ok and guard.kind == "parse_error" and "nests too deeply" in guard.reason
    assert execute_sql(sql, nyc_dir / "snapshot.duckdb").status == "parse_error"
    verdict = verify_sql(sql, GOLD, SqlAnswerSpec(), [nyc_dir / "snapshot.duckdb"])
    assert verdict.status == "parse_error" and verdict.trainable and not verdict.success
    assert "nests too deeply" in verdict.evidence["reason"]


def test_run_sql_answers_deep_nesting_with_a_clear_error(
    nyc_dir: Path, nyc_card: SchemaCard
) -> None:
    state = WarehouseState(database=nyc_dir / "snapshot.duckdb", card=nyc_card)
    with pytest.raises(ToolError, match="nests too deeply"):
        query(state, DEEP)
