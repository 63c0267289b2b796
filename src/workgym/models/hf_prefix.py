"""The key/value caches of finished turns, kept so an episode's next turn prefills only what is new.

An episode's next prompt is its previous prompt and completion, token for token, then the new
messages (decision 0017). Prefilling it from scratch repeated the whole history every turn, and
on a CPU that prefill, not the decoding, was most of a multi-turn episode's model time. So a
finished row leaves its cache here, keyed by the tokens it covers, and a later prompt that
extends those tokens takes it and feeds only the rest.

A cache is only valid for the weights that computed it: the store empties itself when the
weights change (a trainer's step between rollouts), judged by torch's version counters, which
every in-place update of a parameter increments.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Any


@dataclass
class Prefix:
    """The cache of `length` tokens: per layer, keys and values shaped [1, heads, length, dim]."""

    length: int
    layers: list[tuple[Any, Any]]


class PrefixStore:
    """Finished turns' caches, most recent last, within `max_tokens` tokens in all."""

    def __init__(self, max_tokens: int) -> None:
        self.max_tokens = max_tokens
        self.hits = 0  # prompts that reused a cache, for benchmarks and tests
        self.reused_tokens = 0
        self._entries: OrderedDict[tuple[int, ...], Prefix] = OrderedDict()
        self._tokens = 0
        self._version: int | None = None

    def __len__(self) -> int:
        return len(self._entries)

    def check_weights(self, model: Any) -> None:
        """Forget every cache if the model's weights changed since the last call."""
        version = sum(int(p._version) for p in model.parameters())
        if version != self._version:
            self.clear()
            self._version = version

    def put(self, tokens: list[int], prefix: Prefix) -> None:
        if prefix.length != len(tokens) or prefix.length > self.max_tokens:
            return
        key = tuple(tokens)
        if key in self._entries:
            self._tokens -= self._entries.pop(key).length
        self._entries[key] = prefix
        self._tokens += prefix.length
        while self._tokens > self.max_tokens:
            _, old = self._entries.popitem(last=False)
            self._tokens -= old.length

    def take(self, prompt: list[int]) -> Prefix | None:
        """The longest stored cache of a proper prefix of `prompt`, removed from the store.

        Removed, because an episode goes on from its newest turn: the turn it feeds will store
        a longer cache of the same history.
        """
        best: tuple[int, ...] | None = None
        for key in self._entries:
            n = len(key)
            if n < len(prompt) and (best is None or n > len(best)) and tuple(prompt[:n]) == key:
                best = key
        if best is None:
            return None
        prefix = self._entries.pop(best)
        self._tokens -= prefix.length
        self.hits += 1
        self.reused_tokens += prefix.length
        return prefix

    def clear(self) -> None:
        self._entries.clear()
        self._tokens = 0
