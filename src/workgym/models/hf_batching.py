"""The `hf/` provider's scheduler: concurrent requests share one running decode batch.

Episodes run concurrently, each waiting on one model turn at a time. Generating one prompt at a
time inside the event loop serialised them and froze the loop; on a CPU a batch of 8 prompts
costs little more per step than one. So requests go to a worker thread that owns the model's
compute. With nothing running it collects the requests arriving close together (a sliding window
of a few milliseconds, ended early once as many requests as the last run held have come) and
starts a batch; while the batch runs, each newly queued request joins it between two decode
steps, and each finished row's caller gets its answer at once (`hf_decode.DecodeBatch`).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import queue
import threading
import time
from collections import deque
from typing import Any

from workgym.core.model import Sampling
from workgym.models.hf_decode import (
    DecodeBatch,
    GenRequest,
    Result,
    Row,
    decode_batch,
    training_off,
)
from workgym.models.hf_prefix import PrefixStore

# An idle worker retires after this long (a new request starts another): a process never waits
# at exit for more than this, and no thread outlives the model's use.
IDLE_EXIT_S = 1.0
CPU_MAX_BATCH, CPU_MAX_BATCH_TOKENS = 32, 24_576
ACCELERATOR_MAX_BATCH, ACCELERATOR_MAX_BATCH_TOKENS = 256, 131_072


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

    `window_s`: how long an idle worker waits after the latest arrival before it starts a
    batch; `max_wait_s` bounds the wait after the first (both grow to 1% and 5% of the last
    turn's decode time, capped at 0.5 s and 2 s). `max_batch` rows and `max_batch_tokens`
    padded cache tokens bound the memory of the running batch (a prompt longer than the token
    budget still runs, alone). By default 32 rows and 24,576 tokens on a CPU, where a bigger
    batch buys little; 256 rows and 131,072 tokens on an accelerator, where 32 rows held 128
    concurrent episodes to a quarter of what one batch of 128 generates (measured on an H200).
    `max_cached_tokens` bounds the finished turns' caches kept for the turns that continue them
    (`hf_prefix`; 0 keeps none).
    """

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        *,
        max_batch: int | None = None,
        max_batch_tokens: int | None = None,
        window_s: float = 0.02,
        max_wait_s: float = 0.25,
        max_cached_tokens: int = 32_768,
    ) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.eos_id: int = tokenizer.eos_token_id
        self.pad_id = _pad_id(tokenizer)
        on_cpu = next(model.parameters()).device.type == "cpu"
        self.max_batch = max_batch or (CPU_MAX_BATCH if on_cpu else ACCELERATOR_MAX_BATCH)
        self.max_batch_tokens = max_batch_tokens or (
            CPU_MAX_BATCH_TOKENS if on_cpu else ACCELERATOR_MAX_BATCH_TOKENS
        )
        self.window_s = window_s
        self.max_wait_s = max_wait_s
        # For benchmarks and tests: how many requests each admission prefilled together, and
        # how many rows each decode step ran.
        self.batches: list[int] = []
        self.steps: list[int] = []
        self.prefixes = PrefixStore(max_cached_tokens)
        self._queue: queue.Queue[GenRequest] = queue.Queue()
        self._backlog: deque[GenRequest] = deque()
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()
        self._last_size = self.max_batch  # the first batch waits out the window
        self._last_seconds = 0.0

    def submit(
        self,
        prompt_ids: list[int],
        sampling: Sampling,
        max_new_tokens: int,
        stop: tuple[str, ...] = (),
    ) -> concurrent.futures.Future[Result]:
        return self._submit(GenRequest(list(prompt_ids), sampling, max_new_tokens, stop))

    def _submit(self, request: GenRequest) -> concurrent.futures.Future[Result]:
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
        request = GenRequest(list(prompt_ids), sampling, max_new_tokens, stop)
        try:
            return await asyncio.wrap_future(self._submit(request))
        except asyncio.CancelledError:
            # a queued request is cancelled with its future; one being decoded stops at its
            # next token, so an episode ended by a time budget does not keep a core busy (and
            # the process can exit when the run is over)
            request.abandoned = True
            raise

    def _next(self, timeout: float | None) -> GenRequest | None:
        if self._backlog:
            return self._backlog.popleft()
        try:
            return self._queue.get(timeout=timeout)
        except queue.Empty:
            return None

    def _collect(self) -> list[GenRequest] | None:
        """The requests that start a batch, or None when the worker should retire (idle)."""
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
        # Waiting is cheap next to a batch started part-empty: scale both waits with the last
        # turn's decode time (a busy machine renders and runs tools slowly too), within caps.
        window = min(max(self.window_s, 0.01 * self._last_seconds), 0.5)
        patience = min(max(self.max_wait_s, 0.05 * self._last_seconds), 2.0)
        while len(batch) < self.max_batch:
            wait = min(last + window, started + patience) - time.monotonic()
            item = self._next(0.0 if len(batch) >= expected else max(wait, 0.0))
            if item is None:
                break
            batch.append(item)
            last = time.monotonic()
        return self._take(batch, rows=0, width=0)

    def _joining(self, running: DecodeBatch) -> list[GenRequest]:
        """The queued requests that join the running batch now (none wait to be grouped)."""
        if not running.can_join():
            return []
        room = self.max_batch - len(running.rows)
        waiting: list[GenRequest] = []
        while len(waiting) < room and (item := self._next(0.0)) is not None:
            waiting.append(item)
        return self._take(waiting, rows=len(running.rows), width=running.width)

    def _take(self, batch: list[GenRequest], *, rows: int, width: int) -> list[GenRequest]:
        """The longest prefix within the token budget; the rest goes back to wait its turn.

        The budget bounds the padded cache (rows times width); a prompt longer than it still
        runs, alone.
        """
        taken: list[GenRequest] = []
        for request in batch:
            new_width = max(width, len(request.prompt_ids))
            if (rows or taken) and new_width * (rows + len(taken) + 1) > self.max_batch_tokens:
                break
            taken.append(request)
            width = new_width
        self._backlog.extendleft(reversed(batch[len(taken) :]))
        return [r for r in taken if r.future.set_running_or_notify_cancel()]

    def _work(self) -> None:
        running = DecodeBatch(
            self.model,
            eos_id=self.eos_id,
            pad_id=self.pad_id,
            tokenizer=self.tokenizer,
            store=self.prefixes,
        )
        peak = 0  # the most rows the current run has held: how many to wait for next time
        while True:
            if running.rows:
                joining = self._joining(running)
            else:
                if peak:
                    self._last_size, peak = peak, 0
                collected = self._collect()
                if collected is None:
                    return
                joining = collected
                if not joining:
                    continue
            try:
                with training_off(self.model):
                    if joining:
                        self.batches.append(len(joining))
                        self._answer(running.admit(joining))
                    if running.rows:
                        peak = max(peak, len(running.rows))
                        self.steps.append(len(running.rows))
                        self._answer(running.step())
            except BaseException as exc:  # the callers get the error; the worker lives on
                for row in running.fail():
                    row.request.future.set_exception(exc)
                for request in joining:
                    if not request.future.done():
                        request.future.set_exception(exc)

    def _answer(self, ended: list[Row]) -> None:
        now = time.monotonic()
        for row in ended:
            self._last_seconds = now - row.started
            row.request.future.set_result(row.result)


def _pad_id(tokenizer: Any) -> int:
    pad = tokenizer.pad_token_id
    return int(pad if pad is not None else tokenizer.eos_token_id)
