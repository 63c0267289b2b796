"""The `environment_factory` adapter: workgym tools as TRL environment methods, GRPO through it."""

from __future__ import annotations

import json
from typing import Any

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("trl")

from trainkit import OpeningChar, tiny_dir  # noqa: E402

from workgym.envs.toy.env import ToyShop  # noqa: E402
from workgym.train.trl.env_factory import ToolEnvironmentFactory  # noqa: E402


def test_methods_mirror_the_tools_and_run_through_the_toolkit() -> None:
    from transformers.utils import get_json_schema

    env = ToyShop()
    factory = ToolEnvironmentFactory(env, model_name="hf/tiny")
    instance = factory()
    schema = get_json_schema(type(instance).get_item)["function"]
    assert schema["name"] == "get_item"
    assert schema["parameters"]["required"] == ["name"]
    assert schema["parameters"]["properties"]["name"]["type"] == "string"
    assert "unit price" in schema["description"]

    task = next(t for t in factory.tasks.values() if t.meta["kind"] == "stock")
    instance.reset(task_id=task.id, prompt=[])
    item = json.loads(instance.get_item(name=task.meta["subject"]))
    assert item["stock"] == task.answer
    assert instance.get_item(name=5).startswith("error: invalid arguments")  # strict schema
    assert instance.submit_answer(answer=task.answer) == "answer recorded"
    assert instance.list_items(category="tea").startswith("error: the episode has ended")
    [reward] = factory.workgym_reward([[{"role": "assistant", "content": ""}]], [instance])
    assert reward == 1.0
    assert instance._episode is not None and instance._episode.turns == 3


def test_text_answer_closes_the_episode_for_environments_without_a_final_tool() -> None:
    env = OpeningChar()
    factory = ToolEnvironmentFactory(env, model_name="hf/tiny")
    rows = factory.dataset_rows()
    assert {r["task_id"] for r in rows} == {t.id for t in env.taskset.split("train")}
    wants_letter = next(r for r in rows if factory.tasks[r["task_id"]].answer == "letter")
    instances = [factory(), factory()]
    for instance in instances:
        instance.reset(**wants_letter)
    completions = [
        [{"role": "assistant", "content": "abc"}],
        [{"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "x"}}]}],
    ]
    assert factory.workgym_reward(completions, instances) == [1.0, 0.0]
    assert instances[1]._episode is not None
    assert instances[1]._episode.outcome == "truncated"  # TRL stopped mid tool call


def test_grpo_updates_weights_through_the_environment_factory(tmp_path: Any) -> None:
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    network = AutoModelForCausalLM.from_pretrained(tiny_dir())
    tokenizer = AutoTokenizer.from_pretrained(tiny_dir())
    before = {n: p.detach().clone() for n, p in network.named_parameters()}
    factory = ToolEnvironmentFactory(OpeningChar(), model_name="hf/tiny", num_generations=8)
    config = GRPOConfig(
        output_dir=str(tmp_path), use_cpu=True, bf16=False, gradient_checkpointing=False,
        num_generations=8, per_device_train_batch_size=16, max_steps=2, learning_rate=1e-2,
        save_strategy="no", report_to=[], max_completion_length=4, disable_tqdm=True,
        logging_steps=1,
    )  # fmt: skip
    trainer = GRPOTrainer(
        model=network, processing_class=tokenizer, reward_funcs=[factory.workgym_reward],
        args=config, train_dataset=Dataset.from_list(factory.dataset_rows()),
        environment_factory=factory,
    )  # fmt: skip
    assert [t.__name__ for t in trainer.tools] == ["count_letters"]
    trainer.train()
    assert trainer.state.global_step == 2 and len(factory.history) == 2
    for stats in factory.history:
        assert stats.episodes == 16 and stats.masked == 0
        assert stats.groups_with_variance == stats.groups == 2
    changed = [n for n, p in network.named_parameters() if not torch.equal(before[n], p)]
    assert len(changed) == len(before)
