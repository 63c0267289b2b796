"""Helpers for the training tests: a tiny model built once per session, an environment in which
a random-weight model already earns varied rewards, and a token-level test double.

Nothing here downloads anything: the model is built by `workgym.train.tiny`.
"""

from __future__ import annotations

import functools
import os
import tempfile
from pathlib import Path
from typing import Any

from workgym.core.environment import Environment, Limits
from workgym.core.model import Sampling
from workgym.core.tasks import SplitSpec, Task, TaskSet
from workgym.core.tools import tool
from workgym.core.verdict import Verdict
from workgym.models.hf import LocalGenerator

os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")  # rollout_func/environment_factory notes


@functools.cache
def tiny_dir() -> Path:
    """A tiny chat model directory, built once per test session (about a second)."""
    from transformers.utils import logging

    from workgym.train.tiny import build_tiny

    logging.disable_progress_bar()
    logging.set_verbosity_error()
    return build_tiny(Path(tempfile.mkdtemp(prefix="workgym-tiny-")) / "model", seed=0)


def first_kind(text: str) -> str:
    """`letter` when the text starts with an ASCII letter, else `other`."""
    head = text[:1]
    return "letter" if head.isascii() and head.isalpha() else "other"


@tool
def count_letters(text: str) -> int:
    """Count the ASCII letters in a text.

    Args:
        text: Any text.
    """
    return sum(1 for ch in text if ch.isascii() and ch.isalpha())


class OpeningChar(Environment):
    """Reply starting with a letter, or with anything else, as the prompt asks.

    A random-weight model starts its reply with a letter about a third of the time, so rewards
    vary inside every GRPO group from the first step. No final tool: the text reply is the answer.
    """

    id = "tests/opening-char"
    version = "1"
    tools = [count_letters]
    limits = Limits(max_turns=2)

    def tasks(self) -> TaskSet:
        tasks = []
        for i in range(24):
            kind = "letter" if i % 2 else "other"
            ask = "a letter" if kind == "letter" else "a digit, space or symbol"
            tasks.append(Task(family=f"f{i}", prompt=f"Start your reply with {ask}.", answer=kind))
        return TaskSet(tasks, SplitSpec(salt="opening-char", train=0.5, dev=0.25, test=0.25))

    def verify(self, task: Task, episode: Any) -> Verdict:
        got = first_kind(str(episode.answer or ""))
        if got == task.answer:
            return Verdict.correct(got=got)
        return Verdict.wrong(got=got)


class ScriptedTokens:
    """scripted/tokens: a token generator that plays fixed completions (a test double).

    Each call takes the next text: its canonical token ids plus the end-of-turn token are the
    completion, and their logprobs come from a real forward pass of the model. `None` in the
    script means: sample from the model for real.
    """

    name = "scripted/tokens"

    def __init__(self, model: Any, tokenizer: Any, texts: list[str | None]) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.texts = list(texts)
        self.sampler = LocalGenerator(model, tokenizer)

    def generate(
        self, prompt_ids: list[int], sampling: Sampling, max_new_tokens: int
    ) -> tuple[list[int], list[float]]:
        import torch

        text = self.texts.pop(0) if self.texts else None
        if text is None:
            return self.sampler.generate(prompt_ids, sampling, max_new_tokens)
        ids = self.tokenizer(text, add_special_tokens=False)["input_ids"]
        ids = [*ids, self.tokenizer.eos_token_id]
        with torch.no_grad():
            logits = self.model(torch.tensor([prompt_ids + ids])).logits[0].float()
        logp = torch.log_softmax(logits[len(prompt_ids) - 1 : -1], dim=-1)
        return ids, [float(logp[i, t]) for i, t in enumerate(ids)]
