"""The verifiers adapter, run by verifiers' own `vf-eval` against a local chat server."""

from __future__ import annotations

import json

import pytest

from adapters.adapters_harness import ENV_ID, bin_path, run_cli
from workgym.envs.toy.env import ToyShop
from workgym.testing.chat_double import ScriptedChatServer

pytest.importorskip("verifiers.envs")  # not tests/verifiers, a namespace here

from workgym.adapters.verifiers_adapter import load_environment


def test_dataset_is_the_training_view_and_tools_are_the_envs() -> None:
    vf_env = load_environment(ENV_ID)
    toy = ToyShop()
    train = {row["info"]["task_id"] for row in vf_env.get_dataset()}
    dev = {row["info"]["task_id"] for row in vf_env.get_eval_dataset()}
    assert train == {t.id for t in toy.taskset.split("train")}
    assert dev == {t.id for t in toy.taskset.split("dev")}
    assert not (train | dev) & {t.id for t in toy.taskset.split("test")}
    assert [t.name for t in vf_env.tool_defs] == [t.name for t in toy.tools]
    rows = json.dumps(list(vf_env.get_eval_dataset()), default=str)
    assert all(f'"answer": {t.answer}' not in rows for t in toy.taskset.split("dev"))


@pytest.mark.slow
def test_vf_eval_gives_workgym_eval_rewards_and_flags(
    double: ScriptedChatServer,
    workgym_rewards: dict[str, float],
    workgym_flags: dict[str, list[str]],
    tmp_path: object,
) -> None:
    out = f"{tmp_path}/vf"
    args = ["workgym.adapters.verifiers_adapter", "-a", json.dumps({"env": ENV_ID})]
    args += ["-m", double.model_name, "-b", double.base_url, "-k", "DOUBLE_KEY"]
    args += ["-n", str(len(workgym_rewards)), "-r", "1", "-s", "-o", out, "-C", "workgym_flags"]
    run_cli(
        [bin_path("vf-eval"), *args, "--disable-tui", "--disable-env-server"],
        env={"DOUBLE_KEY": "unused"},
    )
    from pathlib import Path

    (results,) = Path(out).rglob("results.jsonl")
    rows = [json.loads(line) for line in results.read_text().splitlines()]
    rewards = {row["info"]["task_id"]: row["reward"] for row in rows}
    assert rewards == workgym_rewards
    flags = {row["info"]["task_id"]: sorted(row["workgym_flags"]) for row in rows}
    assert flags == workgym_flags  # the audit ran on the verifiers rollouts too
    assert all(row.get("error") is None for row in rows)
