"""A randomly initialised tiny model behind the `hf/` provider, built once per seed per session."""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path

from workgym.models.hf import HFModel


@functools.cache
def tiny_model(seed: int) -> HFModel:
    from workgym.train.tiny import build_tiny

    path = build_tiny(Path(tempfile.mkdtemp(prefix="workgym-tiny-")) / "model", seed=seed)
    return HFModel(f"hf/{path}")


def token_ids(model: HFModel, text: str) -> list[int]:
    ids: list[int] = model.tokenizer(text, add_special_tokens=False)["input_ids"]
    return ids
