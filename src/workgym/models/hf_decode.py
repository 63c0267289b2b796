"""The decode loop of the `hf/` provider: a batch of sequences that rows join and leave mid-flight.

Episodes wait on one model turn at a time and spend the time between turns in their tools and
templates. A static batch holds every finished row until its slowest row ends, so an episode
whose turn ended early sat idle, and the next batch started part-empty. Here a row leaves as soon
as it ends (its caller continues at once) and a newly queued prompt joins the running batch:
it is prefilled on its own, then its key/value cache is left-padded to the batch's length and
stacked under the others. Each row keeps its own attention mask and positions, so padding never
changes what it attends to.

The loop is written here rather than calling `model.generate` because each row needs its own
random stream: an episode's sampled tokens must depend on its seed only, never on which other
episodes shared its batch. Each row samples from a `torch.Generator` seeded with the request's
seed, and its logprobs are those of the sampling distribution (logits divided by the
temperature, top-p not applied), as TRL computes them.
"""

from __future__ import annotations

import concurrent.futures
import random
import time
from dataclasses import dataclass, field
from typing import Any

from workgym.core.model import Sampling
from workgym.models.hf_prefix import Prefix, PrefixStore

Result = tuple[list[int], list[float]]
STOP_WINDOW = 12  # tokens decoded to look for a stop text; longer than any stop text's tokens


@dataclass
class GenRequest:
    prompt_ids: list[int]
    sampling: Sampling
    max_new_tokens: int
    stop: tuple[str, ...] = ()  # texts that end the turn once generated (kept in the output)
    future: concurrent.futures.Future[Result] = field(default_factory=concurrent.futures.Future)
    abandoned: bool = False  # its caller gave up (a run's time budget): stop decoding it


def row_generator(torch: Any, sampling: Sampling) -> Any:
    """The random stream of one sequence: its seed's, or a fresh one when no seed is given."""
    if sampling.temperature <= 0:
        return None
    seed = sampling.seed if sampling.seed is not None else random.getrandbits(63)
    return torch.Generator().manual_seed(int(seed) & 0x7FFF_FFFF_FFFF_FFFF)


def _pick(torch: Any, logits: Any, sampling: Sampling, gen: Any) -> int:
    """One token from one row's logits (float32 tensor of vocab size)."""
    if sampling.temperature <= 0:
        return int(torch.argmax(logits))
    probs = torch.softmax(logits / sampling.temperature, dim=-1)
    if sampling.top_p is not None and sampling.top_p < 1.0:
        sorted_probs, order = torch.sort(probs, descending=True)
        keep = torch.cumsum(sorted_probs, dim=-1) - sorted_probs < sampling.top_p
        sorted_probs = torch.where(keep, sorted_probs, torch.zeros_like(sorted_probs))
        choice = torch.multinomial(sorted_probs, 1, generator=gen)
        return int(order[choice])
    return int(torch.multinomial(probs, 1, generator=gen))


@dataclass(eq=False)
class Row:
    """One sequence being decoded: its request, its random stream and what it has produced."""

    request: GenRequest
    gen: Any
    ids: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    done: bool = False
    started: float = field(default_factory=time.monotonic)  # when it was admitted

    @property
    def result(self) -> Result:
        return self.ids, self.logprobs


class DecodeBatch:
    """Rows decoding together over one key/value cache; rows join (`admit`) and leave (`step`).

    Invariant between calls: every row's last token is sampled but not yet fed, the cache and
    `mask` cover everything fed so far (left-padded to one length), `positions` holds each
    row's position of its last fed token.
    """

    def __init__(
        self,
        model: Any,
        *,
        eos_id: int,
        pad_id: int,
        tokenizer: Any = None,
        store: PrefixStore | None = None,
    ) -> None:
        import torch

        self.torch = torch
        self.model = model
        self.eos_id = eos_id
        self.pad_id = pad_id
        self.tokenizer = tokenizer
        self.store = store  # where finished rows leave their caches for the next turn
        self.device = next(model.parameters()).device
        self.rows: list[Row] = []
        self.cache: Any = None
        # kept on the model's device: no host-to-device copy of the mask every token
        self.mask = torch.zeros((0, 0), dtype=torch.long, device=self.device)
        self.positions = torch.zeros((0, 1), dtype=torch.long, device=self.device)
        # (token id, stop texts) -> whether that token may complete one of them
        self._ends_stop: dict[tuple[int, tuple[str, ...]], bool] = {}

    @property
    def width(self) -> int:
        """Padded length of the cache: the memory one more row would take, in tokens."""
        return int(self.mask.shape[1])

    def can_join(self) -> bool:
        """Whether rows may join mid-flight: only plain caches can be padded and stacked."""
        from transformers.cache_utils import DynamicLayer

        return self.cache is None or all(type(x) is DynamicLayer for x in self.cache.layers)

    def admit(self, requests: list[GenRequest]) -> list[Row]:
        """Prefill `requests` and add them; returns every row that ended on its first token."""
        rows = [Row(r, row_generator(self.torch, r.sampling)) for r in requests]
        live = [row for row in rows if row.request.max_new_tokens > 0 and row.request.prompt_ids]
        empty = [row for row in rows if row not in live]
        for row in empty:
            row.done = True
        fresh = live
        if self.store is not None and self.can_join():
            self.store.check_weights(self.model)
            fresh = []
            for row in live:
                prefix = self.store.take(row.request.prompt_ids)
                if prefix is None:
                    fresh.append(row)
                else:
                    self._extend(row, prefix)
        if fresh:
            self._prefill(fresh)
        return empty + self._leave()

    def _prefill(self, rows: list[Row]) -> None:
        """Prefill whole prompts, left-padded into one forward pass."""
        torch = self.torch
        from transformers import DynamicCache

        width = max(len(row.request.prompt_ids) for row in rows)
        ids = torch.full((len(rows), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for i, row in enumerate(rows):
            prompt = row.request.prompt_ids
            ids[i, width - len(prompt) :] = torch.tensor(prompt, dtype=torch.long)
            mask[i, width - len(prompt) :] = 1
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        ids, mask, positions = (t.to(self.device) for t in (ids, mask, positions))
        cache = DynamicCache(config=self.model.config)
        logits = self._forward(ids, mask, positions, cache)
        self._merge(rows, cache, mask, positions[:, -1:])
        self._sample(logits, first=len(self.rows) - len(rows))

    def _extend(self, row: Row, prefix: Prefix) -> None:
        """Feed only the tokens of `row`'s prompt after a stored cache of its beginning."""
        torch = self.torch
        from transformers import DynamicCache

        cache = DynamicCache(config=self.model.config)
        for i, (keys, values) in enumerate(prefix.layers):
            cache.update(keys.to(self.device), values.to(self.device), i)
        rest = row.request.prompt_ids[prefix.length :]
        total = prefix.length + len(rest)
        ids = torch.tensor([rest], dtype=torch.long, device=self.device)
        mask = torch.ones((1, total), dtype=torch.long, device=self.device)
        positions = torch.arange(prefix.length, total, dtype=torch.long, device=self.device)
        positions = positions.unsqueeze(0)
        logits = self._forward(ids, mask, positions, cache)
        self._merge([row], cache, mask, positions[:, -1:])
        self._sample(logits, first=len(self.rows) - 1)

    def _forward(self, ids: Any, mask: Any, positions: Any, cache: Any) -> Any:
        """The last position's logits of feeding `ids` after what `cache` holds."""
        with self.torch.no_grad():
            out = self.model(
                input_ids=ids.to(self.device),
                attention_mask=mask.to(self.device),
                position_ids=positions.to(self.device),
                cache=cache,
                use_cache=True,
                logits_to_keep=1,
            )
        return out.logits[:, -1, :]

    def step(self) -> list[Row]:
        """Feed every row its last token and sample the next; returns the rows that ended."""
        torch = self.torch
        pending = [row.ids[-1] for row in self.rows]
        self.mask = torch.cat([self.mask, self.mask.new_ones((len(self.rows), 1))], 1)
        self.positions = self.positions + 1
        ids = torch.tensor(pending, dtype=torch.long).unsqueeze(1).to(self.device)
        self._sample(self._forward(ids, self.mask, self.positions, self.cache), first=0)
        return self._leave()

    def fail(self) -> list[Row]:
        """Every row, removed (after an error, so their callers hear of it)."""
        rows, self.rows, self.cache = self.rows, [], None
        self.mask = self.mask[:0, :0]
        self.positions = self.positions[:0]
        return rows

    def _sample(self, logits: Any, first: int) -> None:
        """Pick each row's next token and its logprob, with one device-to-host copy a step.

        Greedy picks and every row's logprob are computed for the whole batch where the logits
        are (on a GPU: no full-vocabulary copy to the host, no per-row kernel launches). A
        sampled row still draws on the host from its own seeded stream (`_pick`), from its own
        row of logits, so its tokens depend on its seed only.
        """
        torch = self.torch
        logits = logits.float()
        rows = self.rows[first:]
        temps = [_scale(row.request.sampling) for row in rows]
        scale = torch.tensor(temps, device=logits.device).unsqueeze(1)
        logp = torch.log_softmax(logits / scale, dim=-1)
        picked = logits.argmax(dim=-1)
        sampled = [i for i, row in enumerate(rows) if row.request.sampling.temperature > 0]
        if sampled:
            chosen = picked.tolist()
            host = logits[sampled].cpu()
            for n, i in enumerate(sampled):
                chosen[i] = _pick(torch, host[n], rows[i].request.sampling, rows[i].gen)
            picked = torch.tensor(chosen, dtype=torch.long, device=logp.device)
        # a greedy batch waits for the device once: both results are queued before either copy
        gathered = logp.gather(1, picked.unsqueeze(1)).squeeze(1)
        tokens: list[int] = picked.tolist()
        values: list[float] = gathered.tolist()
        for row, token, value in zip(rows, tokens, values, strict=True):
            row.ids.append(token)
            row.logprobs.append(value)
            row.done = (
                row.request.abandoned
                or token == self.eos_id
                or len(row.ids) >= row.request.max_new_tokens
                or self._stopped(row.ids, row.request.stop)
            )

    def _stopped(self, ids: list[int], stop: tuple[str, ...]) -> bool:
        """Whether the latest tokens complete one of the stop texts.

        Decoding the window of every row at every step was per-token host work that grew with
        the batch; a stop text can only be completed by a token whose own text holds the stop
        text's last character, so only such tokens (judged once per id) trigger the check.
        """
        if not stop or self.tokenizer is None:
            return False
        key = (ids[-1], stop)
        may_end = self._ends_stop.get(key)
        if may_end is None:
            piece: str = self.tokenizer.decode(ids[-1:], skip_special_tokens=False)
            # a non-ASCII last character may arrive split over tokens: always check those
            may_end = any(not text[-1:].isascii() or text[-1:] in piece for text in stop if text)
            self._ends_stop[key] = may_end
        if not may_end:
            return False
        tail: str = self.tokenizer.decode(ids[-STOP_WINDOW:], skip_special_tokens=False)
        return any(text in tail for text in stop)

    def _merge(self, rows: list[Row], cache: Any, mask: Any, positions: Any) -> None:
        """Stack freshly prefilled rows under the running ones, left-padding the shorter side."""
        torch = self.torch
        if self.cache is None or not self.rows:
            self.rows, self.cache, self.mask, self.positions = rows, cache, mask, positions
            return
        width = max(self.width, int(mask.shape[1]))
        for old, new in zip(self.cache.layers, cache.layers, strict=True):
            old.keys = torch.cat(
                [_pad_left(torch, old.keys, width), _pad_left(torch, new.keys, width)]
            )
            old.values = torch.cat(
                [_pad_left(torch, old.values, width), _pad_left(torch, new.values, width)]
            )
        self.mask = torch.cat([_pad_mask(torch, self.mask, width), _pad_mask(torch, mask, width)])
        self.positions = torch.cat([self.positions, positions])
        self.rows = self.rows + rows

    def _leave(self) -> list[Row]:
        """Drop the rows that ended, and cache columns that no remaining row attends to."""
        torch = self.torch
        ended = [row for row in self.rows if row.done]
        if not ended:
            return []
        keep = [i for i, row in enumerate(self.rows) if not row.done]
        if self.store is not None and self.can_join():
            for i, row in enumerate(self.rows):
                if row.done:
                    self._store(i, row)
        self.rows = [self.rows[i] for i in keep]
        if not keep:
            self.fail()
            return ended
        index = torch.tensor(keep, dtype=torch.long, device=self.device)
        self.cache.batch_select_indices(index)
        self.mask, self.positions = self.mask[index], self.positions[index]
        used = self.mask.any(dim=0).nonzero()
        start = int(used[0]) if len(used) else 0
        if start > 0:
            self.mask = self.mask[:, start:]
            for layer in self.cache.layers:
                layer.keys = layer.keys[:, :, start:, :]
                layer.values = layer.values[:, :, start:, :]
        return ended

    def _store(self, index: int, row: Row) -> None:
        """Keep the cache of everything `row` was fed: its prompt and all but its last token."""
        assert self.store is not None
        fed = row.request.prompt_ids + row.ids[:-1]
        columns = self.mask[index].nonzero().squeeze(1).to(self.device)
        if len(columns) != len(fed):
            return
        layers = [
            (
                layer.keys[index : index + 1].index_select(2, columns),
                layer.values[index : index + 1].index_select(2, columns),
            )
            for layer in self.cache.layers
        ]
        self.store.put(fed, Prefix(len(fed), layers))


def decode_batch(
    model: Any,
    requests: list[GenRequest],
    *,
    eos_id: int,
    pad_id: int,
    tokenizer: Any = None,
) -> list[Result]:
    """Generate every request's completion ids and logprobs in one left-padded batch."""
    batch = DecodeBatch(model, eos_id=eos_id, pad_id=pad_id, tokenizer=tokenizer)
    results: dict[int, Result] = {}
    with training_off(model):
        ended = batch.admit(requests)
        while True:
            for row in ended:
                results[id(row.request)] = row.result
            if not batch.rows:
                break
            ended = batch.step()
    return [results[id(r)] for r in requests]


class training_off:
    """Eval mode for the duration (dropout off), restoring training mode afterwards."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.was_training = bool(model.training)

    def __enter__(self) -> None:
        if self.was_training:  # eval() walks every submodule: not once a decode step for nothing
            self.model.eval()

    def __exit__(self, *exc: object) -> None:
        if self.was_training:
            self.model.train()


def _scale(sampling: Sampling) -> float:
    return sampling.temperature if sampling.temperature > 0 else 1.0


def _pad_left(torch: Any, states: Any, width: int) -> Any:
    """[B, H, T, D] key or value states zero-padded on the left to T = width."""
    short = width - int(states.shape[-2])
    if short == 0:
        return states
    b, h, _, d = states.shape
    return torch.cat([states.new_zeros((b, h, short, d)), states], dim=-2)


def _pad_mask(torch: Any, mask: Any, width: int) -> Any:
    short = width - int(mask.shape[1])
    if short == 0:
        return mask
    return torch.cat([mask.new_zeros((mask.shape[0], short)), mask], dim=1)
