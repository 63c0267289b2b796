"""The `rollout_func` adapter: exact multi-turn token accounting, and GRPO updates through it."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("trl")

from trainkit import OpeningChar, ScriptedTokens, tiny_dir  # noqa: E402

import workgym as wg  # noqa: E402
from workgym.core.errors import SealedSplitError  # noqa: E402
from workgym.core.model import Sampling  # noqa: E402
from workgym.core.verdict import Status, Verdict  # noqa: E402
from workgym.envs.toy.env import ToyShop  # noqa: E402
from workgym.models.hf import HFModel, LocalGenerator  # noqa: E402
from workgym.train.trl.rollout import WorkgymRollout, workgym_reward  # noqa: E402
from workgym.train.trl.vllm import VLLMTokenGenerator  # noqa: E402


def runs(mask: list[int]) -> list[tuple[int, int, int]]:
    """(value, start, end) of each run of equal values."""
    out: list[tuple[int, int, int]] = []
    start = 0
    for i in range(1, len(mask) + 1):
        if i == len(mask) or mask[i] != mask[start]:
            out.append((mask[start], start, i))
            start = i
    return out


def play(env: wg.Environment, model: HFModel, task: wg.Task) -> tuple[Any, Any]:
    rollout = WorkgymRollout(
        env, model_name=model.name, sampling=Sampling(temperature=1.0, max_tokens=8)
    )
    [episode] = asyncio.run(rollout.play([task], model, step=0))
    return episode, rollout.pack([episode])


def test_multi_turn_mask_puts_model_and_environment_tokens_where_it_says() -> None:
    base = HFModel(f"hf/{tiny_dir()}")
    tok = base.tokenizer
    env = ToyShop()
    task = next(t for t in env.taskset.split("train") if t.meta["kind"] == "price")
    turns = [
        '<tool_call>\n{"name":"list_items","arguments":{"category":"tea"}}\n</tool_call>',
        '<tool_call>\n{"name": "submit_answer", "arguments": {"answer": 7}}\n</tool_call>',
    ]
    scripted = ScriptedTokens(base.model, tok, list(turns))
    model = HFModel(base.name, model=base.model, tokenizer=tok, generator=scripted)
    episode, packed = play(env, model, task)
    assert episode.turns == 2 and episode.submitted and episode.answer == 7
    prompt, completion = packed["prompt_ids"][0], packed["completion_ids"][0]
    mask, logprobs = packed["env_mask"][0], packed["logprobs"][0]
    assert len(completion) == len(mask) == len(logprobs)

    # The opening prompt is exactly the chat template's rendering of what the agent sees.
    specs = env.toolkit(task).specs
    roles = [m.role for m in episode.messages]
    first = roles.index("assistant")  # system and user messages come before it
    assert roles[first:] == ["assistant", "tool", "assistant", "tool"]
    opening = base.chat.render(episode.messages[:first], specs, generation=True)
    assert prompt == tok(opening, add_special_tokens=False)["input_ids"]

    # Mask runs: model turn, environment insert, model turn.
    segments = runs(mask)
    assert [value for value, _, _ in segments] == [1, 0, 1]
    texts = [tok.decode(completion[a:b]) for _, a, b in segments]
    assert texts[0] == turns[0] + "<|im_end|>"
    assert texts[2] == turns[1] + "<|im_end|>"
    tool_text = episode.messages[first + 1].content
    assert texts[1] == (
        f"\n<|im_start|>user\n<tool_response>\n{tool_text}\n</tool_response><|im_end|>\n"
        "<|im_start|>assistant\n"
    )
    assert all(lp == 0.0 for (v, a, b) in segments if v == 0 for lp in logprobs[a:b])
    assert all(lp < 0.0 for (v, a, b) in segments if v == 1 for lp in logprobs[a:b])

    # Re-tokenising the whole sequence's text gives the same ids: nothing was split at a
    # turn boundary, so the mask positions are the token positions of that text.
    whole = prompt + completion
    assert tok(tok.decode(whole), add_special_tokens=False)["input_ids"] == whole
    # Whereas rendering the recorded conversation again would not match what the model wrote
    # (compact JSON re-rendered with spaces): the reason ids are concatenated, never re-rendered.
    rerendered = base.chat.render(episode.messages[: first + 1], specs, generation=False)
    assert tok.decode(whole) != rerendered[: len(tok.decode(whole))]


def test_sampled_turns_keep_their_ids_and_logprobs_exactly() -> None:
    base = HFModel(f"hf/{tiny_dir()}")
    first = '<tool_call>\n{"name": "list_items", "arguments": {"category": "spice"}}\n</tool_call>'
    scripted = ScriptedTokens(base.model, base.tokenizer, [first, None])  # turn 2 is sampled
    model = HFModel(base.name, model=base.model, tokenizer=base.tokenizer, generator=scripted)
    env = ToyShop()
    episode, packed = play(env, model, env.taskset.split("train")[0])
    assert episode.trainer is not None and len(episode.trainer.turn_tokens) == 2
    prompt, completion = packed["prompt_ids"][0], packed["completion_ids"][0]
    mask, logprobs = packed["env_mask"][0], packed["logprobs"][0]
    _, a, b = runs(mask)[2]
    assert completion[a:b] == episode.trainer.turn_tokens[1].completion_token_ids
    # Logprobs at mask-1 positions are what the trainer's own forward pass computes there.
    with torch.no_grad():
        logits = base.model(torch.tensor([prompt + completion])).logits[0].float()
    logp = torch.log_softmax(logits[len(prompt) - 1 : -1], dim=-1)
    recomputed = [float(logp[i, t]) for i, t in enumerate(completion)]
    trained = [i for i, m in enumerate(mask) if m]
    assert [logprobs[i] for i in trained] == pytest.approx(
        [recomputed[i] for i in trained], abs=1e-4
    )


def test_unscorable_episodes_get_no_reward() -> None:
    env = OpeningChar()
    rollout = WorkgymRollout(env, model_name="hf/x")
    task = next(iter(rollout.tasks.values()))
    broken = wg.Episode(task_id=task.id, family=task.family, split="train", outcome="error")
    crashed = wg.Episode(
        task_id=task.id, family=task.family, split="train",
        verdict=Verdict(status=Status.verifier_error),
    )  # fmt: skip
    packed = rollout.pack([broken, crashed], 16)
    assert packed["workgym_reward"] == [None, None]
    assert packed["env_mask"][0] == [0]
    assert workgym_reward([], [], packed["workgym_reward"]) == [None, None]


def test_rollout_sees_only_the_train_split() -> None:
    env = OpeningChar()
    rollout = WorkgymRollout(env, model_name="hf/x")
    train_ids = {t.id for t in env.taskset.split("train")}
    assert {r["prompt"] for r in rollout.dataset_rows()} == train_ids
    test_task = env.taskset.split("test")[0]
    with pytest.raises(wg.ConfigError, match="not a train task"):
        rollout.task(test_task.id)
    with pytest.raises(SealedSplitError):
        env.taskset.training_view().split("test")


def test_grpo_updates_weights_through_the_rollout_adapter(tmp_path: Any) -> None:
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    network = AutoModelForCausalLM.from_pretrained(tiny_dir())
    tokenizer = AutoTokenizer.from_pretrained(tiny_dir())
    before = {n: p.detach().clone() for n, p in network.named_parameters()}
    rollout = WorkgymRollout(
        OpeningChar(), model_name=f"hf/{tiny_dir()}",
        sampling=Sampling(temperature=1.0, max_tokens=3),
    )  # fmt: skip
    config = GRPOConfig(
        output_dir=str(tmp_path), use_cpu=True, bf16=False, gradient_checkpointing=False,
        num_generations=8, per_device_train_batch_size=16, max_steps=2, learning_rate=1e-2,
        save_strategy="no", report_to=[], max_completion_length=32, disable_tqdm=True,
        logging_steps=1,
    )  # fmt: skip
    trainer = GRPOTrainer(
        model=network, processing_class=tokenizer, reward_funcs=[workgym_reward], args=config,
        train_dataset=Dataset.from_list(rollout.dataset_rows()), rollout_func=rollout,
    )  # fmt: skip
    trainer.train()
    assert trainer.state.global_step == 2 and len(rollout.history) == 2
    for stats in rollout.history:
        assert stats.episodes == 16 and stats.masked == 0
        # Rewards vary within a group about 96% of the time; one varied group per step is what
        # GRPO needs for a gradient.
        assert stats.groups == 2 and stats.groups_with_variance >= 1
    changed = [n for n, p in network.named_parameters() if not torch.equal(before[n], p)]
    assert len(changed) == len(before)
    rewards = [log["reward"] for log in trainer.state.log_history if "reward" in log]
    assert rewards == pytest.approx([s.mean_reward for s in rollout.history])


class _FakeVLLM(BaseHTTPRequestHandler):
    """/v1/models and /v1/completions in vLLM's shape, generating with the tiny model."""

    generator: LocalGenerator
    bodies: list[dict[str, Any]]

    def log_message(self, *args: Any) -> None:
        pass

    def _send(self, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self._send({"data": [{"id": "tiny"}]})

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.bodies.append(body)
        sampling = Sampling(temperature=body["temperature"], seed=body.get("seed"))
        ids, logprobs = self.generator.generate(body["prompt"][0], sampling, body["max_tokens"])
        self._send({"choices": [{"token_ids": ids, "logprobs": {"token_logprobs": logprobs}}]})


@pytest.fixture
def fake_vllm() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    base = HFModel(f"hf/{tiny_dir()}")
    handler = type(
        "Handler", (_FakeVLLM,), {"generator": LocalGenerator(base.model, base.tokenizer),
                                  "bodies": []},
    )  # fmt: skip
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", handler.bodies
    server.shutdown()
    server.server_close()


def test_vllm_token_generator_sends_exact_prompt_ids(
    fake_vllm: tuple[str, list[dict[str, Any]]],
) -> None:
    url, bodies = fake_vllm
    base = HFModel(f"hf/{tiny_dir()}")
    model = HFModel(
        base.name, model=base.model, tokenizer=base.tokenizer,
        generator=VLLMTokenGenerator(url + "/v1"),
    )  # fmt: skip
    env = ToyShop()
    episode, packed = play(env, model, env.taskset.split("train")[0])
    assert episode.trainer and episode.trainer.turn_tokens and bodies
    assert bodies[0]["prompt"] == [episode.trainer.turn_tokens[0].prompt_token_ids]
    assert bodies[0]["return_token_ids"] is True and bodies[0]["model"] == "tiny"
    assert packed["completion_ids"][0][
        : len(episode.trainer.turn_tokens[0].completion_token_ids or [])
    ]
    with pytest.raises(wg.ConfigError, match="must start with http"):
        VLLMTokenGenerator("127.0.0.1:8000")
