from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import workgym as wg
from workgym.envs.toy.env import ToyShop


def test_registry_and_load_by_id() -> None:
    assert "workgym/toy-shop" in wg.registered()
    env = wg.load("workgym/toy-shop")
    assert isinstance(env, ToyShop) and len(env.taskset) == 60


def test_toy_splits_are_60_20_20_by_family(toy: ToyShop) -> None:
    record = toy.taskset.split_record()
    fams = list(record["families"].values())
    assert (fams.count("train"), fams.count("dev"), fams.count("test")) == (9, 3, 3)


def test_save_and_load_roundtrip(tmp_path: Path, toy: ToyShop) -> None:
    toy.save(tmp_path / "env")
    manifest = json.loads((tmp_path / "env" / "manifest.json").read_text())
    assert manifest["id"] == "workgym/toy-shop" and manifest["version"] == "1"
    assert manifest["content_hash"] == toy.content_hash()
    assert (tmp_path / "env" / "tasks.jsonl").exists() and (
        tmp_path / "env" / "splits.json"
    ).exists()
    back = wg.load(tmp_path / "env")
    assert back.content_hash() == toy.content_hash()


def test_content_hash_changes_with_version_and_tasks(toy: ToyShop) -> None:
    class V2(ToyShop):
        version = "2"

    assert V2().content_hash() != toy.content_hash()


class SavedEnv(wg.Environment):
    id = "test/saved"
    tools = []

    def verify(self, task: wg.Task, episode: Any) -> wg.Verdict:
        return wg.Verdict.correct()


SEED_TASKS = wg.TaskSet([wg.Task(family="f", prompt="hi", answer=1)])


class Seeded(SavedEnv):
    def tasks(self) -> wg.TaskSet:
        return SEED_TASKS if self.root is None else super().tasks()


def test_generic_saved_env_reads_its_tasks_and_detects_tampering(tmp_path: Path) -> None:
    tasks = SEED_TASKS
    env = Seeded()
    env.save(tmp_path / "e")
    back = wg.load(tmp_path / "e", trust=True)  # an unregistered class the test wrote
    assert [t.id for t in back.taskset] == [t.id for t in tasks]
    with (tmp_path / "e" / "tasks.jsonl").open("a") as fh:
        fh.write(wg.Task(family="g", prompt="extra").model_dump_json() + "\n")
    with pytest.raises(wg.ConfigError, match="changed after it was saved"):
        wg.load(tmp_path / "e", trust=True)


def test_load_errors_say_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(wg.ConfigError, match="workgym envs"):
        wg.load("nobody/nothing")
    (tmp_path / "plain").mkdir()
    with pytest.raises(wg.ConfigError, match="not an environment directory"):
        wg.load(tmp_path / "plain")
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "manifest.json").write_text("{")
    with pytest.raises(wg.ConfigError, match="not valid JSON"):
        wg.load(tmp_path / "broken")
    (tmp_path / "alien").mkdir()
    (tmp_path / "alien" / "manifest.json").write_text(
        json.dumps({"format": "workgym-env/1", "entry": "nowhere.mod:Env", "content_hash": ""})
    )
    with pytest.raises(wg.ConfigError, match="install the package"):
        wg.load(tmp_path / "alien", trust=True)


def test_saving_a_class_defined_in_a_function_fails_early(tmp_path: Path) -> None:
    class Local(Seeded):
        pass

    with pytest.raises(TypeError, match="module level"):
        Local().save(tmp_path / "x")


def test_toolkit_state_is_fresh_per_episode() -> None:
    class Counter(SavedEnv):
        id = "test/counter"

        def tasks(self) -> wg.TaskSet:
            return wg.TaskSet([wg.Task(family="f", prompt="x")])

        def state(self, task: wg.Task) -> Any:
            return {"n": 0}

    env = Counter()
    task = next(iter(env.taskset))
    a, b = env.toolkit(task), env.toolkit(task)
    a.ctx.state["n"] = 5
    assert b.ctx.state["n"] == 0
