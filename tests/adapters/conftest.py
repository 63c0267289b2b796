"""Fixtures for the adapter tests: one scripted double served over HTTP, and the per-task
rewards `workgym eval` gives it, which every other harness must reproduce."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from adapters.adapters_harness import DOUBLE, ENV_ID, run_cli
from workgym.core.episode import record_flags
from workgym.envs.toy.env import ToyShop
from workgym.testing.chat_double import ScriptedChatServer


@pytest.fixture(scope="session")
def double() -> Iterator[ScriptedChatServer]:
    with ScriptedChatServer(ToyShop(), DOUBLE) as server:
        yield server


@pytest.fixture(scope="session")
def workgym_episodes(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, object]]:
    """`workgym eval` of the double on the dev split: its episodes.jsonl records."""
    out = tmp_path_factory.mktemp("wg") / "run"
    args = ["eval", ENV_ID, "--model", DOUBLE, "--split", "dev", "--out", str(out)]
    run_cli([sys.executable, "-m", "workgym", *args])
    episodes = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    assert len(episodes) == len(ToyShop().taskset.split("dev"))
    return episodes


@pytest.fixture(scope="session")
def workgym_rewards(workgym_episodes: list[dict[str, Any]]) -> dict[str, float]:
    """Task id -> reward under `workgym eval`; not all-or-nothing, so the comparison bites."""
    rewards = {e["task_id"]: float(e["verdict"]["reward"]) for e in workgym_episodes}
    assert 0 < sum(rewards.values()) < len(rewards)
    return rewards


@pytest.fixture(scope="session")
def workgym_flags(workgym_episodes: list[dict[str, Any]]) -> dict[str, list[str]]:
    """Task id -> the audit's flags under `workgym eval` (some tasks raise some)."""
    flags = {e["task_id"]: sorted(record_flags(e)) for e in workgym_episodes}
    assert any(flags.values()) and not all(flags.values())
    return flags
