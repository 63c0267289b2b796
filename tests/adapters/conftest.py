"""Fixtures for the adapter tests: one scripted double served over HTTP, and the per-task
rewards `workgym eval` gives it, which every other harness must reproduce."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator

import pytest
from adapters_harness import DOUBLE, ENV_ID, run_cli

from workgym.envs.toy.env import ToyShop
from workgym.testing.chat_double import ScriptedChatServer


@pytest.fixture(scope="session")
def double() -> Iterator[ScriptedChatServer]:
    with ScriptedChatServer(ToyShop(), DOUBLE) as server:
        yield server


@pytest.fixture(scope="session")
def workgym_rewards(tmp_path_factory: pytest.TempPathFactory) -> dict[str, float]:
    """`workgym eval` of the double on the dev split: task id -> reward."""
    out = tmp_path_factory.mktemp("wg") / "run"
    run_cli(
        [
            sys.executable,
            "-m",
            "workgym",
            "eval",
            ENV_ID,
            "--model",
            DOUBLE,
            "--split",
            "dev",
            "--out",
            str(out),
        ]
    )
    lines = (out / "episodes.jsonl").read_text().splitlines()
    rewards = {}
    for line in lines:
        episode = json.loads(line)
        rewards[episode["task_id"]] = episode["verdict"]["reward"]
    assert len(rewards) == len(ToyShop().taskset.split("dev"))
    assert 0 < sum(rewards.values()) < len(rewards)  # the comparison is not all-or-nothing
    return rewards
