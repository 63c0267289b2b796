"""Continuous batching in the `hf/` provider: rows that join a running batch decode as if alone."""

from __future__ import annotations

import asyncio

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from tiny_models import tiny_model, token_ids  # noqa: E402

import workgym as wg  # noqa: E402
from workgym.core.episode import Episode, TurnTokens  # noqa: E402
from workgym.core.model import Sampling  # noqa: E402
from workgym.envs.toy.env import ToyShop  # noqa: E402
from workgym.models.hf import HFModel  # noqa: E402
from workgym.models.hf_batching import BatchedGenerator  # noqa: E402
from workgym.models.hf_decode import DecodeBatch, GenRequest, Row, decode_batch  # noqa: E402
from workgym.models.hf_prefix import Prefix, PrefixStore  # noqa: E402


def turn_tokens(ep: Episode) -> list[TurnTokens]:
    return ep.trainer.turn_tokens if ep.trainer is not None else []


def tiny() -> HFModel:
    return tiny_model(1)


def prompts() -> list[list[int]]:
    base = token_ids(tiny(), "a warehouse of orders, lines and late shipments")
    return [base[:4], base * 3, base[1:6], base[:2] * 5]


def alone(request: GenRequest) -> tuple[list[int], list[float]]:
    tok = tiny().tokenizer
    fresh = GenRequest(request.prompt_ids, request.sampling, request.max_new_tokens)
    return decode_batch(tiny().model, [fresh], eos_id=tok.eos_token_id, pad_id=tok.pad_token_id)[0]


def staggered(requests: list[GenRequest], gap: int) -> dict[int, Row]:
    """Admit one request every `gap` decode steps into one running batch; rows by index."""
    tok = tiny().tokenizer
    batch = DecodeBatch(tiny().model, eos_id=tok.eos_token_id, pad_id=tok.pad_token_id)
    ended: list[Row] = []
    waiting = list(requests)
    widths = []
    steps = 0
    while waiting or batch.rows:
        if waiting and steps % gap == 0:
            ended += batch.admit([waiting.pop(0)])
            widths.append(batch.width)
        if batch.rows:
            ended += batch.step()
        steps += 1
    assert max(widths) > min(len(p) for p in prompts())  # a longer prompt padded the others
    return {requests.index(row.request): row for row in ended}


def test_rows_joining_mid_flight_match_decoding_alone() -> None:
    greedy = Sampling(temperature=0.0)
    requests = [GenRequest(p, greedy, 10 + 3 * i) for i, p in enumerate(prompts())]
    rows = staggered(requests, gap=3)
    assert sorted(rows) == list(range(len(requests)))
    for i, request in enumerate(requests):
        ids, logprobs = alone(request)
        assert rows[i].ids == ids and len(ids) > 0
        assert rows[i].logprobs == pytest.approx(logprobs, abs=1e-4)


def test_a_sampled_row_joining_late_still_depends_on_its_seed_only() -> None:
    hot = Sampling(temperature=1.0)
    requests = [GenRequest(p, hot.with_seed(20 + i), 12) for i, p in enumerate(prompts())]
    rows = staggered(requests, gap=2)
    for i, request in enumerate(requests):
        assert rows[i].ids == alone(request)[0]


def test_a_short_turn_is_answered_before_the_long_one_it_ran_beside_ends() -> None:
    model = tiny()
    generator = BatchedGenerator(model.model, model.tokenizer, window_s=0.0, max_wait_s=0.0)
    greedy = Sampling(temperature=0.0)
    order: list[str] = []

    lengths: dict[str, int] = {}

    async def both() -> None:
        async def one(name: str, prompt: list[int], tokens: int) -> None:
            ids, _ = await generator.agenerate(prompt, greedy, tokens)
            lengths[name] = len(ids)
            order.append(name)

        long = asyncio.create_task(one("long", prompts()[1], 400))
        while not generator.steps:  # the long turn is decoding when the short one arrives
            await asyncio.sleep(0.001)
        await asyncio.gather(long, one("short", prompts()[0], 2))

    asyncio.run(both())
    assert lengths == {"long": 400, "short": 2} and order == ["short", "long"]
    assert len(generator.batches) == 2 and max(generator.steps) == 2  # it joined, not queued


def finished(batch: DecodeBatch, requests: list[GenRequest]) -> list[Row]:
    ended = batch.admit(requests)
    while batch.rows:
        ended += batch.step()
    return ended


def test_the_next_turn_feeds_only_its_new_tokens_and_decodes_the_same() -> None:
    tok = tiny().tokenizer
    store = PrefixStore(10_000)
    batch = DecodeBatch(tiny().model, eos_id=tok.eos_token_id, pad_id=tok.pad_token_id,
                        store=store)  # fmt: skip
    greedy = Sampling(temperature=0.0)
    first = finished(batch, [GenRequest(prompts()[1], greedy, 7)])[0]
    assert len(store) == 1
    follow_up = prompts()[1] + first.ids + prompts()[2]  # the next turn: history, then news
    second = finished(batch, [GenRequest(follow_up, greedy, 9)])[0]
    assert store.hits == 1 and store.reused_tokens == len(prompts()[1]) + len(first.ids) - 1
    ids, logprobs = alone(GenRequest(follow_up, greedy, 9))
    assert second.ids == ids and second.logprobs == pytest.approx(logprobs, abs=1e-4)
    unrelated = finished(batch, [GenRequest(prompts()[0] + prompts()[3], greedy, 3)])[0]
    assert store.hits == 1 and unrelated.ids == alone(unrelated.request)[0]


def test_changed_weights_empty_the_store() -> None:
    model = tiny()
    tok = model.tokenizer
    store = PrefixStore(10_000)
    batch = DecodeBatch(model.model, eos_id=tok.eos_token_id, pad_id=tok.pad_token_id,
                        store=store)  # fmt: skip
    greedy = Sampling(temperature=0.0)
    first = finished(batch, [GenRequest(prompts()[1], greedy, 5)])[0]
    with torch.no_grad():
        next(model.model.parameters()).add_(0.0)  # an optimizer step updates in place like this
    finished(batch, [GenRequest(prompts()[1] + first.ids + prompts()[0], greedy, 3)])
    assert store.hits == 0


def test_the_store_keeps_the_longest_proper_prefix_within_its_budget() -> None:
    store = PrefixStore(max_tokens=10)
    store.put([1, 2], Prefix(2, []))
    store.put([1, 2, 3, 4], Prefix(4, []))
    taken = store.take([1, 2, 3, 4])  # only [1, 2] is a proper prefix: taken
    assert taken is not None and taken.length == 2
    assert store.take([1, 2, 3, 4]) is None  # the longer one is not a proper prefix
    store.put([5] * 6, Prefix(6, []))
    store.put([7] * 5, Prefix(5, []))  # over budget: the oldest entries go first
    kept = store.take([7] * 6)
    assert len(store) == 0 and kept is not None and kept.length == 5
    store.put([1, 2], Prefix(3, []))  # a cache that does not match its tokens is not kept
    assert len(store) == 0
    store.put([8], Prefix(1, []))
    store.put([8, 9], Prefix(2, []))
    longest = store.take([8, 9, 10])
    assert longest is not None and longest.length == 2 and len(store) == 1


def test_an_episode_reuses_each_turns_cache_without_changing_its_tokens() -> None:
    base = tiny()

    def episode(cached: int) -> tuple[Episode, BatchedGenerator]:
        generator = BatchedGenerator(base.model, base.tokenizer, max_cached_tokens=cached)
        model = HFModel(base.name, model=base.model, tokenizer=base.tokenizer,
                        generator=generator, prefill='<tool_call>\n{"name": "',
                        stop=("</tool_call>",), max_new_tokens=6)  # fmt: skip
        task = ToyShop().taskset.split("dev")[0]
        got = asyncio.run(wg.run_episode(ToyShop(), task, wg.Policy(model), seed=3))
        return got, generator

    with_store, generator = episode(32_768)
    without, _ = episode(0)
    assert with_store.turns > 1 and generator.prefixes.hits == with_store.turns - 1
    pairs = list(zip(turn_tokens(with_store), turn_tokens(without), strict=True))
    for a, b in pairs:
        assert (a.prompt_token_ids, a.completion_token_ids) == (
            b.prompt_token_ids,
            b.completion_token_ids,
        )
        assert a.logprobs == pytest.approx(b.logprobs, abs=1e-4)


def test_an_abandoned_request_stops_decoding_at_its_next_token() -> None:
    """A run's time budget cancels the model call: the row must not decode to its budget (a
    process waited minutes for abandoned generations once its run was over; issue 37)."""
    tok = tiny().tokenizer
    batch = DecodeBatch(tiny().model, eos_id=tok.eos_token_id, pad_id=tok.pad_token_id)
    never_ends = GenRequest(prompts()[1], Sampling(temperature=0.0), 10_000)
    assert batch.admit([never_ends]) == []
    batch.step()
    never_ends.abandoned = True
    ended = batch.step()
    assert [row.request for row in ended] == [never_ends] and len(ended[0].ids) < 10
