"""Shared pieces of the investigation tests: built environments and a way to play answers.

Fixtures here are imported by the test modules that use them (pytest picks up fixtures imported
into a test module; they are named `<fixture>_fixture` so the import does not shadow the test's
parameter), so the nycflights13 investigation environment is built once per session.
"""

from __future__ import annotations

import asyncio
import random
import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import duckdb
import pytest

import workgym as wg
from workgym.core.messages import Message
from workgym.core.tasks import Task, TaskSet
from workgym.envs.warehouse.investigate.build import Investigations, build_investigations
from workgym.envs.warehouse.investigate.oracle import conclusion_turns
from workgym.envs.warehouse.runtime.env import CONFIG_FILE, WarehouseConfig, WarehouseEnv
from workgym.envs.warehouse.schema.card import CARD_FILE, SchemaCard
from workgym.envs.warehouse.schema.profile import profile_snapshot
from workgym.envs.warehouse.source.snapshot import MANIFEST_FILE, SNAPSHOT_FILE, build_snapshot
from workgym.verifiers.sql_exec import hold_open

N_TASKS = 10  # 8 planted types (one each) + 2 without a plant


def env_dir_from(snapshot_dir: Path, out: Path) -> Path:
    """A warehouse environment directory around an existing snapshot (no other families)."""
    out.mkdir(parents=True, exist_ok=True)
    for name in (SNAPSHOT_FILE, MANIFEST_FILE, CARD_FILE):
        shutil.copy(snapshot_dir / name, out / name)
    (out / CONFIG_FILE).write_text(WarehouseConfig().model_dump_json())
    return out


def finish(out: Path, tasks: Sequence[Task]) -> WarehouseEnv:
    TaskSet(tasks).to_jsonl(out / "tasks.jsonl")
    return WarehouseEnv(out)


_BUILT: dict[str, tuple[WarehouseEnv, Investigations]] = {}


@pytest.fixture(scope="session", name="nyc_inv")
def nyc_inv_fixture(
    nyc_dir: Path, nyc_card: SchemaCard, tmp_path_factory: pytest.TempPathFactory
) -> tuple[WarehouseEnv, Investigations]:
    # Each module that imports this fixture gets its own copy of it; the cache makes the build
    # happen once per session anyway.
    key = str(nyc_dir)
    if key not in _BUILT:
        out = env_dir_from(nyc_dir, tmp_path_factory.mktemp("nyc_inv"))
        built = build_investigations(out / SNAPSHOT_FILE, nyc_card, random.Random(7), N_TASKS)
        _BUILT[key] = (finish(out, built.tasks), built)
    return _BUILT[key]


@pytest.fixture(scope="session", name="nyc_env")
def nyc_env_fixture(nyc_inv: tuple[WarehouseEnv, Investigations]) -> Iterator[WarehouseEnv]:
    env = nyc_inv[0]
    plants = [env.database(t) for t in env.taskset]
    with hold_open(plants):  # one idle pinned session per file: queries reuse it (fast)
        yield env


def make_shop(path: Path, weeks: int = 16, rows: int = 24_000) -> Path:
    """A small synthetic warehouse: stores, and orders with structure an investigator can find
    (amount levels per store, volumes that vary by week) over `weeks` weeks."""
    con = duckdb.connect(str(path))
    con.execute(
        f"""
        CREATE TABLE stores (store_id INTEGER PRIMARY KEY, name VARCHAR, region VARCHAR);
        INSERT INTO stores SELECT i, 'Store ' || i, CASE WHEN i <= 4 THEN 'north' ELSE 'south'
            END FROM range(1, 9) t(i);
        CREATE TABLE orders (order_id BIGINT PRIMARY KEY,
                             store_id INTEGER REFERENCES stores(store_id),
                             channel VARCHAR, amount DOUBLE, placed TIMESTAMP);
        COMMENT ON COLUMN orders.amount IS 'Order amount, in dollars';
        INSERT INTO orders
        SELECT i,
               1 + (hash(i, 1) % 8)::INTEGER AS store_id,
               ['web', 'app', 'phone'][1 + (hash(i, 2) % 3)::INTEGER] AS channel,
               round(20 + 6 * (1 + (hash(i, 1) % 8)) + (hash(i, 3) % 4000) / 100.0, 2),
               TIMESTAMP '2024-01-01' + INTERVAL (i * {weeks * 7 * 24} // {rows}) HOUR
                 + INTERVAL ((hash(i, 4) % 60)) MINUTE
        FROM range({rows}) t(i)
        WHERE hash(i, 5) % 100 < 60 + hash(i * {weeks} // {rows}, 9) % 35;  -- weekly volumes vary
        """
    )
    con.close()
    return path


_SHOP: dict[str, Path] = {}


@pytest.fixture(scope="session", name="shop_db")
def shop_db_fixture(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if "db" not in _SHOP:
        _SHOP["db"] = make_shop(tmp_path_factory.mktemp("shop") / "shop.duckdb")
    return _SHOP["db"]


@pytest.fixture(scope="session", name="shop_snapshot")
def shop_snapshot_fixture(shop_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    if "snapshot" not in _SHOP:
        out = tmp_path_factory.mktemp("shop_snap")
        build_snapshot(f"duckdb:///{shop_db}", out)
        profile_snapshot(out)
        _SHOP["snapshot"] = out
    return _SHOP["snapshot"]


def play(env: wg.Environment, task: Task, turns: Sequence[Message], seed: int = 0) -> wg.Episode:
    """One episode of fixed assistant turns through the real loop, tools and verifier."""
    model = wg.TaskScript("scripted/test-investigate", lambda t, e: list(turns))
    return asyncio.run(wg.run_episode(env, task, wg.Policy(model), seed=seed))


def submit(
    env: wg.Environment, task: Task, answer: dict[str, Any], run: list[str] | None = None
) -> wg.Episode:
    """Run `run` (default: the answer's own evidence) with run_sql, then submit `answer`."""
    return play(env, task, conclusion_turns(answer, run=run, prefix="test"))


def investigator_score(env: WarehouseEnv) -> tuple[int, int]:
    """(solved, total) of `scripted/investigator` over the environment's F9 tasks: a heuristic
    test double's reach, never a learning result."""
    import asyncio

    import workgym as wg
    from workgym.envs.warehouse.investigate.investigator import Investigator

    tasks = [t for t in env.taskset if t.family.startswith("F9")]
    solved = 0
    for task in tasks:
        ep = asyncio.run(wg.run_episode(env, task, wg.Policy(Investigator())))
        solved += bool(ep.verdict is not None and ep.verdict.success)
    return solved, len(tasks)
