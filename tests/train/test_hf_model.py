"""The `hf/<dir>` provider on a tiny model built locally: template, parsing, ids, logprobs."""

from __future__ import annotations

import asyncio
import json

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from trainkit import ScriptedTokens, tiny_dir  # noqa: E402

import workgym as wg  # noqa: E402
from workgym.core.errors import ConfigError  # noqa: E402
from workgym.core.model import Sampling  # noqa: E402
from workgym.envs.toy.env import ToyShop  # noqa: E402
from workgym.models.hf import INVALID_CALL, HFModel, parse_reply  # noqa: E402


@pytest.fixture(scope="module")
def model() -> HFModel:
    return HFModel(f"hf/{tiny_dir()}", max_new_tokens=12)


def test_tiny_template_is_the_one_trl_recognises() -> None:
    trl_templates = pytest.importorskip("trl.chat_template_utils")
    from workgym.train.tiny import QWEN25_CHAT_TEMPLATE

    assert trl_templates.qwen2_5_chat_template == QWEN25_CHAT_TEMPLATE
    tokenizer = HFModel(f"hf/{tiny_dir()}").tokenizer
    assert trl_templates.supports_tool_calling(tokenizer)
    assert trl_templates.is_chat_template_prefix_preserving(tokenizer)


def test_parse_reply_reads_qwen_tool_calls() -> None:
    text = (
        'Looking.<tool_call>\n{"name": "get_item", "arguments": {"name": "sencha"}}\n</tool_call>'
        "<tool_call>not json</tool_call>"
    )
    reply = parse_reply(text)
    assert reply.content == "Looking."
    assert [c.name for c in reply.tool_calls] == ["get_item", INVALID_CALL]
    assert json.loads(reply.tool_calls[0].arguments) == {"name": "sencha"}
    assert reply.tool_calls[1].arguments == "not json"
    assert len({c.id for c in reply.tool_calls}) == 2
    plain = parse_reply("  just text ")
    assert plain.content == "just text" and not plain.tool_calls


def test_missing_model_dir_is_a_one_line_config_error(tmp_path: object) -> None:
    with pytest.raises(ConfigError, match=r"no config\.json.*workgym\.train\.tiny"):
        wg.get_model(f"hf/{tmp_path}/nothing-here")


def test_completion_carries_ids_and_logprobs_of_the_sampled_tokens(model: HFModel) -> None:
    env = ToyShop()
    messages = wg.Policy(model).render(env, env.taskset.split("dev")[0])
    specs = env.toolkit(env.taskset.split("dev")[0]).specs
    sampling = Sampling(temperature=0.7, seed=5, max_tokens=8)
    done = asyncio.run(model.complete(messages, specs, sampling))
    prompt, completion = done.prompt_token_ids, done.completion_token_ids
    assert prompt is not None and completion is not None and done.logprobs is not None
    text = model.tokenizer.apply_chat_template(
        [m.to_openai() for m in messages],
        tools=[s.to_openai() for s in specs],
        tokenize=False,
        add_generation_prompt=True,
    )
    assert prompt == model.tokenizer(text, add_special_tokens=False)["input_ids"]
    assert len(done.logprobs) == len(completion) == done.usage.completion_tokens
    # The logprobs are those of the sampling distribution (logits / temperature) at each
    # position: recompute them with one teacher-forced forward pass.
    with torch.no_grad():
        logits = model.model(torch.tensor([prompt + completion])).logits[0].float() / 0.7
    logp = torch.log_softmax(logits[len(prompt) - 1 : -1], dim=-1)
    expected = [float(logp[i, t]) for i, t in enumerate(completion)]
    assert done.logprobs == pytest.approx(expected, abs=1e-4)
    again = asyncio.run(model.complete(messages, specs, sampling))
    assert again.completion_token_ids == completion  # the seed makes sampling reproducible


def test_next_prompt_extends_the_exact_ids_the_model_wrote() -> None:
    base = HFModel(f"hf/{tiny_dir()}")
    # Compact JSON: the chat template would re-render it as {"category": "tea"}.
    script = ['<tool_call>\n{"name":"list_items","arguments":{"category":"tea"}}\n</tool_call>']
    scripted = ScriptedTokens(base.model, base.tokenizer, [*script, None])
    model = HFModel(base.name, model=base.model, tokenizer=base.tokenizer, generator=scripted)
    env = ToyShop()
    task = env.taskset.split("dev")[0]
    policy = wg.Policy(model, sampling=Sampling(temperature=1.0, max_tokens=6))
    episode = asyncio.run(wg.run_episode(env, task, policy, seed=2))
    assert episode.trainer is not None and len(episode.trainer.turn_tokens) == 2
    first, second = episode.trainer.turn_tokens
    assert first.prompt_token_ids is not None and first.completion_token_ids is not None
    assert second.prompt_token_ids is not None
    history = first.prompt_token_ids + first.completion_token_ids
    assert second.prompt_token_ids[: len(history)] == history
    upto = [m.role for m in episode.messages].index("assistant") + 1
    specs = env.toolkit(task).specs
    rerendered = base.chat.render(episode.messages[:upto], specs, generation=False)
    assert '{"category": "tea"}' in rerendered  # what re-rendering would have trained on
    assert '{"category":"tea"}' in base.tokenizer.decode(history)


def test_eval_runs_hf_models_and_records_turn_tokens(tmp_path: object) -> None:
    run = wg.eval(
        ToyShop(),
        f"hf/{tiny_dir()}",
        split="dev",
        limit=2,
        out=f"{tmp_path}/run",
        progress=False,
        sampling=Sampling(temperature=1.0, max_tokens=6),
    )
    episodes = list(run.episodes())
    assert len(episodes) == 2 and all(e.outcome != "error" for e in episodes)
    assert all(e.trainer and e.trainer.turn_tokens[0].logprobs for e in episodes)
