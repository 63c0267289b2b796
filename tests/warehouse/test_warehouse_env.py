"""WarehouseEnv on a generated directory: oracle, baselines, verdicts, SQL answers, identity."""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
import types
from pathlib import Path
from typing import Any

import pytest

import workgym as wg
from workgym.core.errors import ConfigError
from workgym.core.verdict import Status, Verdict
from workgym.envs.warehouse.runtime.env import WarehouseEnv
from workgym.envs.warehouse.source.snapshot import source_checksum


@pytest.fixture(scope="module")
def env(small_env: Path) -> WarehouseEnv:
    loaded = wg.load(small_env)
    assert isinstance(loaded, WarehouseEnv)
    return loaded


def call(tool_name: str, call_id: str, /, **args: object) -> wg.ToolCall:
    return wg.ToolCall(id=call_id, name=tool_name, arguments=json.dumps(args))


def turn(*calls: wg.ToolCall) -> wg.Message:
    return wg.Message(role="assistant", tool_calls=list(calls))


def play(env: WarehouseEnv, task: wg.Task, *turns: wg.Message) -> wg.Episode:
    model = wg.ScriptedModel("scripted/test", turns=list(turns))
    return asyncio.run(wg.run_episode(env, task, wg.Policy(model), seed=1))


def submit(answer: Any) -> wg.Message:
    return turn(call("submit_answer", "s", answer=answer))


def sql_task(env: WarehouseEnv) -> wg.Task:
    return next(t for t in env.taskset if t.meta["answer_spec"]["kind"] == "sql")


def test_oracle_solves_every_task_and_null_scores_zero(env: WarehouseEnv, tmp_path: Path) -> None:
    oracle = wg.eval(env, "scripted/oracle", split="all", out=tmp_path / "o", progress=False)
    episodes = list(oracle.episodes())
    assert len(episodes) == len(env.taskset) >= 40
    assert all(e.success for e in episodes), [e.task_id for e in episodes if not e.success]
    for ep in episodes[:25]:  # same answer, same verdict
        task = env.taskset[ep.task_id]
        first = env.score(task, ep).model_dump_json()
        assert env.score(task, ep).model_dump_json() == first
    null = wg.eval(env, "scripted/null", split="all", out=tmp_path / "n", progress=False)
    assert null.summary().mean_reward == 0.0


def test_every_family_and_split_is_present(env: WarehouseEnv) -> None:
    families = {t.meta["family"] for t in env.taskset}
    assert families >= {"F1", "F2", "F3", "F4", "F5", "F6", "F7", "F8", "F10"}
    assert all(env.taskset.split(s) for s in ("train", "dev", "test"))
    assert any(t.meta.get("awkward") for t in env.taskset)
    for t in env.taskset:
        assert t.meta["template"].startswith(t.meta["family"] + ".t")
        assert t.family.startswith(f"{t.meta['family']}/{t.meta['template']}/")


def test_an_episode_with_tools_and_a_wrong_answer(env: WarehouseEnv) -> None:
    task = next(t for t in env.taskset if t.meta["answer_spec"]["kind"] == "integer")
    wrong = {"kind": "integer", "value": task.answer["value"] + 1}
    ep = play(
        env,
        task,
        turn(call("list_tables", "a")),
        turn(call("describe_table", "b", name="flights")),
        turn(call("run_sql", "c", sql="SELECT count(*) FROM flights")),
        turn(call("run_sql", "d", sql="DELETE FROM flights")),
        submit(wrong),
    )
    statuses = [c.status for c in ep.tool_calls]
    assert statuses == ["ok", "ok", "ok", "error", "ok"]
    assert "forbidden" in ep.tool_calls[3].content
    assert json.loads(ep.tool_calls[2].content)["rows"] == [[336776]]
    assert ep.submitted and not ep.success and ep.verdict is not None
    assert ep.verdict.status == Status.ok
    right = play(env, task, submit(task.answer))
    assert right.success


def test_sql_answers_go_through_the_suite(env: WarehouseEnv) -> None:
    task = sql_task(env)
    suite = env.suite(task)
    assert len(suite) >= 6 and all(p.exists() for p in suite)
    gold = env.gold_sql(task)
    passed = play(env, task, submit({"kind": "sql", "sql": f"SELECT * FROM ({gold}) AS g"}))
    assert passed.success
    assert all("candidate_s" not in d for d in passed.verdict.evidence["databases"])  # type: ignore[union-attr]
    delete = play(env, task, submit({"kind": "sql", "sql": "DELETE FROM flights"}))
    assert delete.verdict is not None and delete.verdict.status == Status.forbidden_action
    hidden = f"WITH d AS (DELETE FROM flights RETURNING *) {gold}"
    cte = play(env, task, submit({"kind": "sql", "sql": hidden}))
    assert cte.verdict is not None and cte.verdict.status == Status.forbidden_action
    empty = play(env, task, submit({"kind": "sql", "sql": f"SELECT * FROM ({gold}) g WHERE 1=0"}))
    assert not empty.success
    gr = env.gold_result(task)
    assert gr is not None and gr.columns
    assert env.gold_result(next(t for t in env.taskset if t.meta["family"] == "F8")) is None


def test_sql_verifier_refuses_on_sqlite_and_duckdb(tmp_path: Path) -> None:
    import sqlite3

    from workgym.verifiers.sql import SqlAnswerSpec, verify_sql

    path = tmp_path / "v.db"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE t (x INTEGER)")
    db.execute("INSERT INTO t VALUES (1), (2)")
    db.commit()
    db.close()
    for sql in ("DELETE FROM t", "WITH d AS (DELETE FROM t RETURNING *) SELECT 1",
                "ATTACH 'x.db' AS y", "PRAGMA table_info(t)", "SELECT 1; SELECT 2"):  # fmt: skip
        v = verify_sql(sql, "SELECT x FROM t", SqlAnswerSpec(), [path], "sqlite")
        assert v.status in (Status.forbidden_action, Status.parse_error) and not v.success, sql


def test_wrong_answer_is_well_formed_and_another_tasks_gold(env: WarehouseEnv) -> None:
    task = next(t for t in env.taskset if t.meta["answer_spec"]["kind"] == "number")
    wrong = env.wrong_answer(task)
    assert wrong["kind"] == "number" and wrong != task.answer
    assert not play(env, task, submit(wrong)).success


def test_a_changed_card_is_refused_and_saving_copies_the_data(
    small_env: Path, tmp_path: Path
) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(small_env, copy)
    saved = wg.load(copy).save(tmp_path / "resaved")
    assert wg.load(saved).content_hash() == wg.load(small_env).content_hash()
    card = copy / "schema_card.json"
    card.write_text(card.read_text().replace('"Airline names."', '"Edited."'))
    with pytest.raises(ConfigError, match="changed after it was saved"):
        wg.load(copy)
    with pytest.raises(ConfigError, match="generated directory"):
        WarehouseEnv()


def test_source_unchanged_after_generation_and_episodes(
    env: WarehouseEnv, nyc_source: Path, tmp_path: Path
) -> None:
    url = f"duckdb://{nyc_source}"
    before = source_checksum(url)
    from workgym.envs.warehouse.generate.pipeline import GenerateOptions, generate

    options = GenerateOptions(
        db=url, out=tmp_path / "again", tasks=10, suites=False, investigations=False
    )
    generate(options, progress=False)
    wg.eval(env, "scripted/oracle", split="dev", out=tmp_path / "run", progress=False)
    assert source_checksum(url) == before


def test_conclusion_answers_dispatch_to_the_investigation_verifier(
    env: WarehouseEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: dict[str, Any] = {}

    def verify_conclusion(*, task: wg.Task, episode: Any, env_dir: Path) -> Verdict:
        seen.update(task=task.id, answer=episode.answer, env_dir=env_dir)
        return Verdict.correct()

    fake = types.ModuleType("workgym.envs.warehouse.investigate.conclusion")
    fake.verify_conclusion = verify_conclusion  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "workgym.envs.warehouse.investigate.conclusion", fake)
    base = env.taskset.split("dev")[0]
    task = base.model_copy(
        update={"id": "f9", "meta": {"answer_spec": {"kind": "conclusion"}}, "answer": {}}
    )
    episode = wg.Episode(task_id="f9", family="F9", split="dev", answer={"kind": "conclusion"})
    episode.submitted = True
    verdict = env.score(task, episode)
    assert verdict.success and seen == {
        "task": "f9",
        "answer": {"kind": "conclusion"},
        "env_dir": env.dir,
    }


def test_an_honest_agent_raises_no_audit_flag(env: WarehouseEnv) -> None:
    """Looking at the schema, running the reference query, then submitting: the transcript
    audit must not flag this on any family, or honest successes would count 0 in training and
    certification (a column answer "t.c" is never shown joined by a dot; an abstain reason is
    the tool schema's vocabulary)."""

    def honest(task: wg.Task, _: wg.Environment) -> list[wg.Message]:
        def say(tool: str, text: str = "", **args: Any) -> wg.Message:
            call = wg.ToolCall(id=tool, name=tool, arguments=json.dumps(args, default=str))
            return wg.Message(role="assistant", content=text, tool_calls=[call])

        out = [say("list_tables", "Looking at the tables first.")]
        out += [say("describe_table", name=t) for t in task.meta.get("tables", [])[:2]]
        if task.meta.get("reference_sql"):
            out.append(say("run_sql", "Running the query.", sql=task.meta["reference_sql"]))
        return [*out, say("submit_answer", "What the query returned.", answer=task.answer)]

    policy = wg.Policy(wg.TaskScript("scripted/honest-sql", honest))
    for task in env.taskset:
        ep = asyncio.run(wg.run_episode(env, task, policy))
        assert ep.success and ep.flags == [], (task.family, ep.flags)


def test_identity_ignores_where_and_how_fast_the_fuzz_suites_were_built(
    small_env: Path, tmp_path: Path
) -> None:
    """Regenerating the same environment elsewhere must give the same content hash (admission
    is keyed by it): a suite's record holds its build path and build time, neither of which is
    content."""
    copy = tmp_path / "elsewhere"
    shutil.copytree(small_env, copy)
    suites = sorted((copy / "fuzz").glob("*/suite.json"))
    assert suites
    for path in suites:
        record = json.loads(path.read_text())
        record["source"], record["build_s"] = "/somewhere/else/snapshot.duckdb", 99.9
        path.write_text(json.dumps(record))
    assert wg.load(copy).content_hash() == wg.load(small_env).content_hash()
    record = json.loads(suites[0].read_text())
    record["strategies"] = [*record["strategies"], "extra"]  # content: the hash must move
    suites[0].write_text(json.dumps(record))
    with pytest.raises(ConfigError, match="changed after it was saved"):
        wg.load(copy)
