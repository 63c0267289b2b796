"""Token generation for the `hf/` provider: one decode loop, and a micro-batcher in front of it.

Episodes run concurrently, each waiting on one model turn at a time. Generating one prompt at a
time inside the event loop serialised them and froze the loop; on a CPU a batch of 8 prompts
costs little more per step than one. So requests go to a worker thread that collects the ones
arriving close together (a sliding window of a few milliseconds, ended early once as many
requests as the last batch answered have come back), pads them on the left and decodes them
together, stopping each sequence at its own end-of-turn token or budget and dropping finished
rows from the batch.

The loop is written here rather than calling `model.generate` because each row needs its own
random stream: an episode's sampled tokens must depend on its seed only, never on which other
episodes shared its batch. Each row samples from a `torch.Generator` seeded with the request's
seed, and its logprobs are those of the sampling distribution (logits divided by the
temperature, top-p not applied), as TRL computes them.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import queue
import random
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from workgym.core.model import Sampling

Result = tuple[list[int], list[float]]
# An idle worker retires after this long (a new request starts another): a process never waits
# at exit for more than this, and no thread outlives the model's use.
IDLE_EXIT_S = 1.0
STOP_WINDOW = 12  # tokens decoded to look for a stop text; longer than any stop text's tokens


@dataclass
class GenRequest:
    prompt_ids: list[int]
    sampling: Sampling
    max_new_tokens: int
    stop: tuple[str, ...] = ()  # texts that end the turn once generated (kept in the output)
    future: concurrent.futures.Future[Result] = field(default_factory=concurrent.futures.Future)


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


def _stopped(tokenizer: Any, ids: list[int], stop: tuple[str, ...]) -> bool:
    """Whether the latest tokens complete one of the stop texts."""
    if not stop or tokenizer is None:
        return False
    tail: str = tokenizer.decode(ids[-STOP_WINDOW:], skip_special_tokens=False)
    return any(text in tail for text in stop)


def decode_batch(
    model: Any,
    requests: list[GenRequest],
    *,
    eos_id: int,
    pad_id: int,
    tokenizer: Any = None,
) -> list[Result]:
    """Generate every request's completion ids and logprobs in one left-padded batch."""
    import torch
    from transformers import DynamicCache

    results: list[Result] = [([], []) for _ in requests]
    active = [i for i, r in enumerate(requests) if r.max_new_tokens > 0 and r.prompt_ids]
    if not active:
        return results
    device = next(model.parameters()).device
    width = max(len(requests[i].prompt_ids) for i in active)
    ids = torch.full((len(active), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(active), width), dtype=torch.long)
    for row, i in enumerate(active):
        prompt = requests[i].prompt_ids
        ids[row, width - len(prompt) :] = torch.tensor(prompt, dtype=torch.long)
        mask[row, width - len(prompt) :] = 1
    positions = (mask.cumsum(-1) - 1).clamp(min=0)
    gens = [row_generator(torch, r.sampling) for r in requests]
    scales = [r.sampling.temperature if r.sampling.temperature > 0 else 1.0 for r in requests]
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            cache = DynamicCache(config=model.config)
            out = model(
                input_ids=ids.to(device),
                attention_mask=mask.to(device),
                position_ids=positions.to(device),
                cache=cache,
                use_cache=True,
                logits_to_keep=1,
            )
            while True:
                logits = out.logits[:, -1, :].float().cpu()
                scale = torch.tensor([scales[i] for i in active]).unsqueeze(1)
                logp = torch.log_softmax(logits / scale, dim=-1)
                step: list[int] = []
                keep: list[int] = []
                for row, i in enumerate(active):
                    token = _pick(torch, logits[row], requests[i].sampling, gens[i])
                    results[i][0].append(token)
                    results[i][1].append(float(logp[row, token]))
                    step.append(token)
                    produced = results[i][0]
                    if (
                        token != eos_id
                        and len(produced) < requests[i].max_new_tokens
                        and not _stopped(tokenizer, produced, requests[i].stop)
                    ):
                        keep.append(row)
                if not keep:
                    break
                if len(keep) < len(active):  # finished rows leave the batch
                    index = torch.tensor(keep, dtype=torch.long)
                    cache.batch_select_indices(index.to(device))
                    mask, positions = mask[index], positions[index]
                    active, step = [active[k] for k in keep], [step[k] for k in keep]
                mask = torch.cat([mask, torch.ones((len(active), 1), dtype=torch.long)], dim=1)
                positions = positions[:, -1:] + 1
                out = model(
                    input_ids=torch.tensor(step, dtype=torch.long).unsqueeze(1).to(device),
                    attention_mask=mask.to(device),
                    position_ids=positions.to(device),
                    cache=cache,
                    use_cache=True,
                )
    finally:
        if was_training:
            model.train()
    return results


class LocalGenerator:
    """Generation on the caller's thread, one prompt at a time (tests and scripted doubles)."""

    def __init__(self, model: Any, tokenizer: Any) -> None:
        self.model = model
        self.tokenizer = tokenizer

    def generate(
        self,
        prompt_ids: list[int],
        sampling: Sampling,
        max_new_tokens: int,
        stop: tuple[str, ...] = (),
    ) -> Result:
        request = GenRequest(list(prompt_ids), sampling, max_new_tokens, stop)
        return decode_batch(
            self.model,
            [request],
            eos_id=self.tokenizer.eos_token_id,
            pad_id=_pad_id(self.tokenizer),
            tokenizer=self.tokenizer,
        )[0]


class BatchedGenerator:
    """Micro-batches concurrent requests onto one worker thread that owns the model's compute.

    The thread is not a daemon (a daemon thread inside torch at interpreter exit aborted the
    process) and retires when idle, so exiting waits at most `IDLE_EXIT_S`.

    `window_s`: how long the batch stays open after the latest arrival; `max_wait_s` bounds the
    wait after the first; `max_batch` rows and `max_batch_tokens` padded prompt tokens bound the
    memory of one batch (a prompt longer than the token budget still runs, alone).
    """

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        *,
        max_batch: int = 32,
        max_batch_tokens: int = 24_576,
        window_s: float = 0.02,
        max_wait_s: float = 0.25,
    ) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.eos_id: int = tokenizer.eos_token_id
        self.pad_id = _pad_id(tokenizer)
        self.max_batch = max_batch
        self.max_batch_tokens = max_batch_tokens
        self.window_s = window_s
        self.max_wait_s = max_wait_s
        self.batches: list[int] = []  # sizes of the batches run, for benchmarks and tests
        self._queue: queue.Queue[GenRequest] = queue.Queue()
        self._backlog: deque[GenRequest] = deque()
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()
        self._last_size = max_batch  # the first batch waits out the window

    def submit(
        self,
        prompt_ids: list[int],
        sampling: Sampling,
        max_new_tokens: int,
        stop: tuple[str, ...] = (),
    ) -> concurrent.futures.Future[Result]:
        request = GenRequest(list(prompt_ids), sampling, max_new_tokens, stop)
        with self._start_lock:  # the worker retires under this lock only with an empty queue
            self._queue.put(request)
            if self._thread is None:
                self._thread = threading.Thread(target=self._work, name="workgym-hf-batcher")
                self._thread.start()
        return request.future

    def generate(
        self,
        prompt_ids: list[int],
        sampling: Sampling,
        max_new_tokens: int,
        stop: tuple[str, ...] = (),
    ) -> Result:
        return self.submit(prompt_ids, sampling, max_new_tokens, stop).result()

    async def agenerate(
        self,
        prompt_ids: list[int],
        sampling: Sampling,
        max_new_tokens: int,
        stop: tuple[str, ...] = (),
    ) -> Result:
        return await asyncio.wrap_future(self.submit(prompt_ids, sampling, max_new_tokens, stop))

    def _next(self, timeout: float | None) -> GenRequest | None:
        if self._backlog:
            return self._backlog.popleft()
        try:
            return self._queue.get(timeout=timeout)
        except queue.Empty:
            return None

    def _collect(self) -> list[GenRequest] | None:
        """The next batch, or None when the worker should retire (idle, nothing queued)."""
        first = self._next(IDLE_EXIT_S)
        if first is None:
            with self._start_lock:
                if self._queue.empty():
                    self._thread = None
                    return None
            return []
        batch = [first]
        started = last = time.monotonic()
        expected = min(self.max_batch, self._last_size)
        while len(batch) < self.max_batch:
            wait = min(last + self.window_s, started + self.max_wait_s) - time.monotonic()
            item = self._next(0.0 if len(batch) >= expected else max(wait, 0.0))
            if item is None:
                break
            batch.append(item)
            last = time.monotonic()
        taken = self._fit(batch)
        self._backlog.extendleft(reversed(batch[len(taken) :]))
        return [r for r in taken if r.future.set_running_or_notify_cancel()]

    def _fit(self, batch: list[GenRequest]) -> list[GenRequest]:
        """The longest prefix within the token budget; the rest waits for the next batch."""
        taken: list[GenRequest] = []
        width = 0
        for request in batch:
            new_width = max(width, len(request.prompt_ids))
            if taken and new_width * (len(taken) + 1) > self.max_batch_tokens:
                break
            taken.append(request)
            width = new_width
        return taken

    def _work(self) -> None:
        while True:
            batch = self._collect()
            if batch is None:
                return
            if not batch:
                continue
            self.batches.append(len(batch))
            self._last_size = len(batch)
            try:
                results = decode_batch(
                    self.model,
                    batch,
                    eos_id=self.eos_id,
                    pad_id=self.pad_id,
                    tokenizer=self.tokenizer,
                )
            except BaseException as exc:  # the callers get the error; the worker lives on
                for request in batch:
                    request.future.set_exception(exc)
                continue
            for request, result in zip(batch, results, strict=True):
                request.future.set_result(result)


def _pad_id(tokenizer: Any) -> int:
    pad = tokenizer.pad_token_id
    return int(pad if pad is not None else tokenizer.eos_token_id)
