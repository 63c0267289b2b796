"""The `hf/` provider's generation on a tiny local model: batching, seeds, prefill, stop texts."""

from __future__ import annotations

import asyncio
import copy
import itertools

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from tiny_models import tiny_model, token_ids  # noqa: E402

import workgym as wg  # noqa: E402
from workgym.core.model import Sampling  # noqa: E402
from workgym.envs.toy.env import ToyShop  # noqa: E402
from workgym.models.hf import HFModel, turn_seed  # noqa: E402
from workgym.models.hf_batching import BatchedGenerator  # noqa: E402
from workgym.models.hf_decode import GenRequest, decode_batch  # noqa: E402
from workgym.models.hf_template import CHATML_TOOLS, ignores_tools  # noqa: E402


def tiny() -> HFModel:
    return tiny_model(0)


def prompts() -> list[list[int]]:
    base = token_ids(tiny(), "the shop sells tea and cocoa nibs")
    return [base[:3], base, base[:7] * 2, base[2:9]]


def test_batched_greedy_equals_sequential_and_model_generate() -> None:
    model = tiny()
    eos, pad = model.tokenizer.eos_token_id, model.tokenizer.pad_token_id
    greedy = Sampling(temperature=0.0)
    batch = [GenRequest(p, greedy, 9 + i) for i, p in enumerate(prompts())]
    together = decode_batch(model.model, batch, eos_id=eos, pad_id=pad)
    for request, (ids, logprobs) in zip(batch, together, strict=True):
        alone = decode_batch(model.model, [GenRequest(request.prompt_ids, greedy, 9)], eos_id=eos,
                             pad_id=pad)[0]  # fmt: skip
        n = min(len(ids), len(alone[0]))
        assert ids[:n] == alone[0][:n] and n > 0
        assert logprobs[:n] == pytest.approx(alone[1][:n], abs=1e-4)
        x = torch.tensor([request.prompt_ids])
        ref = model.model.generate(
            x,
            attention_mask=torch.ones_like(x),
            do_sample=False,
            max_new_tokens=len(ids),
            pad_token_id=pad,
            eos_token_id=eos,
        )
        assert ref[0, x.shape[1] :].tolist() == ids  # fmt: skip


def test_a_sampled_row_depends_on_its_seed_not_on_its_batch() -> None:
    model = tiny()
    eos, pad = model.tokenizer.eos_token_id, model.tokenizer.pad_token_id
    hot = Sampling(temperature=1.0, seed=11)
    target = GenRequest(prompts()[1], hot, 12)
    alone = decode_batch(model.model, [target], eos_id=eos, pad_id=pad)[0]
    others = [GenRequest(p, hot.with_seed(50 + i), 12) for i, p in enumerate(prompts())]
    mixed = decode_batch(model.model, [*others[:2], target, *others[2:]], eos_id=eos, pad_id=pad)
    assert mixed[2][0] == alone[0]
    other_seed = decode_batch(model.model, [GenRequest(prompts()[1], hot.with_seed(12), 12)],
                              eos_id=eos, pad_id=pad)[0]  # fmt: skip
    assert other_seed[0] != alone[0]


def test_concurrent_requests_share_batches_off_the_event_loop() -> None:
    model = tiny()
    generator = BatchedGenerator(model.model, model.tokenizer)
    greedy = Sampling(temperature=0.0)

    async def many() -> list[tuple[list[int], list[float]]]:
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0)

        tick = asyncio.create_task(ticker())
        out = await asyncio.gather(*(generator.agenerate(p, greedy, 8) for p in prompts()))
        tick.cancel()
        assert ticks > 1  # the loop kept running while the worker generated
        return list(out)

    results = asyncio.run(many())
    assert generator.batches[0] == len(prompts())
    eos, pad = model.tokenizer.eos_token_id, model.tokenizer.pad_token_id
    for p, got in zip(prompts(), results, strict=True):
        assert got[0] == decode_batch(model.model, [GenRequest(p, greedy, 8)], eos_id=eos,
                                      pad_id=pad)[0][0]  # fmt: skip


def test_turn_seeds_are_reproducible_and_differ_per_turn() -> None:
    seeds = [turn_seed(7, t) for t in range(5)]
    assert len(set(seeds)) == 5 and seeds == [turn_seed(7, t) for t in range(5)]
    assert turn_seed(8, 0) != seeds[0]


def test_prefill_is_context_and_the_next_turn_extends_it_exactly() -> None:
    base = tiny()
    prefill = '<tool_call>\n{"name": "'
    model = HFModel(base.name, model=base.model, tokenizer=base.tokenizer, prefill=prefill,
                    stop=("</tool_call>",), max_new_tokens=6)  # fmt: skip
    env = ToyShop()
    task = env.taskset.split("dev")[0]
    episode = asyncio.run(wg.run_episode(env, task, wg.Policy(model), seed=3))
    turns = episode.trainer.turn_tokens if episode.trainer else []
    assert turns
    forced = model.prefill_ids
    for turn in turns:
        assert turn.prompt_token_ids is not None and turn.completion_token_ids is not None
        assert turn.prompt_token_ids[-len(forced) :] == forced
        assert turn.logprobs is not None and len(turn.logprobs) == len(turn.completion_token_ids)
    first = next(m for m in episode.messages if m.role == "assistant")
    assert first.tool_calls  # the prefill opened a call, so the reply holds one (maybe broken)
    for before, after in itertools.pairwise(turns):
        assert before.prompt_token_ids is not None and before.completion_token_ids is not None
        history = before.prompt_token_ids + before.completion_token_ids
        assert (
            after.prompt_token_ids is not None and after.prompt_token_ids[: len(history)] == history
        )


def test_stop_text_ends_the_turn_where_it_appears() -> None:
    model = tiny()
    eos, pad = model.tokenizer.eos_token_id, model.tokenizer.pad_token_id
    free = decode_batch(model.model, [GenRequest(prompts()[1], Sampling(), 24)], eos_id=eos,
                        pad_id=pad)[0][0]  # fmt: skip
    assert len(free) > 3
    text = model.tokenizer.decode(free[:3], skip_special_tokens=False)
    stop = (text[-1],)  # a stop text the greedy continuation is known to produce by token 3
    cut = decode_batch(model.model, [GenRequest(prompts()[1], Sampling(), 24, stop)], eos_id=eos,
                       pad_id=pad, tokenizer=model.tokenizer)[0][0]  # fmt: skip
    assert cut == free[: len(cut)] and len(cut) <= 3
    assert stop[0] in model.tokenizer.decode(cut, skip_special_tokens=False)


def test_shipped_template_renders_tools_calls_and_results() -> None:
    tokenizer = copy.deepcopy(tiny().tokenizer)
    tokenizer.chat_template = CHATML_TOOLS
    params = {"type": "object", "properties": {"name": {"type": "string"}}}
    tool = {"type": "function", "function": {"name": "get_item", "parameters": params}}
    call = {"type": "function", "id": "c1", "function": {"name": "get_item",
            "arguments": {"name": "sencha"}}}  # fmt: skip
    messages = [
        {"role": "user", "content": "how many?"},
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "content": '{"stock": 3}', "tool_call_id": "c1", "name": "get_item"},
    ]
    text = tokenizer.apply_chat_template(
        messages, tools=[tool], tokenize=False, add_generation_prompt=True
    )
    assert '"name": "get_item"' in text and "# Tools" in text
    assert '<tool_call>\n{"name": "get_item", "arguments": {"name": "..."}}\n</tool_call>' in text
    assert '<|im_start|>assistant\n<tool_call>\n{"name": "get_item", "arguments": {"name": ' in text
    assert '<|im_start|>user\n<tool_response>\n{"stock": 3}\n</tool_response><|im_end|>' in text
    assert text.endswith("<|im_start|>assistant\n")
    assert not ignores_tools(tokenizer)


def test_a_template_that_ignores_tools_is_reported() -> None:
    tokenizer = copy.deepcopy(tiny().tokenizer)
    tokenizer.chat_template = (
        "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
        "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
    )
    assert ignores_tools(tokenizer)
    with pytest.warns(UserWarning, match="ignores tools="):
        HFModel(tiny().name, model=tiny().model, tokenizer=tokenizer)
