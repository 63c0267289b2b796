"""The decode step's host work: stop texts checked only after a token that can end one, and the
running batch sized by device."""

from __future__ import annotations

from typing import Any

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from tiny_models import tiny_model  # noqa: E402

from workgym.models.hf_batching import BatchedGenerator  # noqa: E402
from workgym.models.hf_decode import DecodeBatch  # noqa: E402


class CountingTokenizer:
    """The tiny tokenizer, counting how many ids each decode call was given."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.calls: list[int] = []

    def decode(self, ids: list[int], **kw: Any) -> str:
        self.calls.append(len(ids))
        text: str = self.inner.decode(ids, **kw)
        return text


def ids_of(text: str) -> list[int]:
    ids: list[int] = tiny_model(0).tokenizer(text, add_special_tokens=False)["input_ids"]
    return ids


def test_the_window_is_decoded_only_after_a_token_holding_the_last_character() -> None:
    model = tiny_model(0)
    counting = CountingTokenizer(model.tokenizer)
    batch = DecodeBatch(model.model, eos_id=0, pad_id=0, tokenizer=counting)
    stop = ("</tool_call>",)
    ids = ids_of('{"a": 1}</tool_call>')
    seen = [batch._stopped(ids[: n + 1], stop) for n in range(len(ids))]
    assert seen[-1] and not any(seen[:-1])  # stops exactly where the text completes
    windows = [n for n in counting.calls if n > 1]
    # one window decode per token whose text holds ">" (here only the closing one), plus the
    # single-token look-ups of each distinct token, made once
    assert len(windows) == sum(">" in model.tokenizer.decode([t]) for t in ids)
    assert len([n for n in counting.calls if n == 1]) == len(set(ids))
    again = len(counting.calls)
    batch._stopped(ids[:1], stop)
    assert len(counting.calls) == again  # judged once per token id


def test_a_stop_text_ending_outside_ascii_is_checked_after_every_token() -> None:
    model = tiny_model(0)
    batch = DecodeBatch(model.model, eos_id=0, pad_id=0, tokenizer=model.tokenizer)
    ids = ids_of("tea é")
    assert batch._stopped(ids, ("é",))
    assert not batch._stopped(ids_of("tea"), ("é",))


def test_batches_are_bigger_on_accelerators() -> None:
    model = tiny_model(0)
    on_cpu = BatchedGenerator(model.model, model.tokenizer)
    assert (on_cpu.max_batch, on_cpu.max_batch_tokens) == (32, 24_576)
    meta = torch.nn.Linear(2, 2, device="meta")  # any module whose weights are not on the CPU
    elsewhere = BatchedGenerator(meta, model.tokenizer)
    assert (elsewhere.max_batch, elsewhere.max_batch_tokens) == (256, 131_072)
    given = BatchedGenerator(meta, model.tokenizer, max_batch=8, max_batch_tokens=100)
    assert (given.max_batch, given.max_batch_tokens) == (8, 100)
