"""The toy environment of the playbook tests, and helpers the other playbook tests import.

`workgym/toy-rules` and its scripted agent and reflector are test doubles: what they "learn" is
built in, so these tests check the loop's machinery, never that anything learns.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import workgym as wg
from workgym.envs.toy_rules.env import (
    GOOD_RULE,
    HARMFUL_RULE,
    ToyRules,
    ToyRulesAgent,
    ToyRulesReflector,
    rule_id,
)
from workgym.train.playbook.api import train_playbook
from workgym.train.playbook.config import TrainConfig
from workgym.train.playbook.result import TrainResult


def run_toy(out: Path, env: wg.Environment | None = None, **config: Any) -> TrainResult:
    """Train on the toy with its scripted agent and reflector (PLAYBOOK.md defaults)."""
    return train_playbook(
        env or ToyRules(),
        ToyRulesAgent(),
        reflector=ToyRulesReflector(),
        out=out,
        config=TrainConfig(**config),
    )


def success_rate(out: Path, playbook: str | None) -> float:
    run = wg.eval(
        ToyRules(),
        ToyRulesAgent(),
        split="train",
        epochs=4,
        out=out,
        progress=False,
        playbook=playbook,
    )
    return run.summary().success_rate


def test_the_oracle_solves_every_toy_task_and_the_null_agent_none(tmp_path: Path) -> None:
    env = ToyRules()
    oracle = wg.eval(env, "scripted/oracle", split="all", out=tmp_path / "o", progress=False)
    null = wg.eval(env, "scripted/null", split="all", out=tmp_path / "n", progress=False)
    assert oracle.summary().success_rate == 1.0 and null.summary().mean_reward == 0.0
    assert env.taskset.split_record()["tasks"] == {"train": 36, "dev": 18, "test": 6}
    assert "workgym/toy-rules" in wg.registered()


def test_the_scripted_agent_follows_the_rules_in_its_prompt(tmp_path: Path) -> None:
    rule = "### format\n- [pb-001] " + GOOD_RULE
    harmful = "### strategy\n- [pb-002] " + HARMFUL_RULE
    base = success_rate(tmp_path / "base", None)
    good = success_rate(tmp_path / "good", rule)
    bad = success_rate(tmp_path / "bad", harmful)
    assert 0.15 < base < 0.45 and good > 0.8 and bad == 0.0
    assert rule_id(rule, "upper case") == "pb-001" and rule_id("nothing", "upper case") is None
