"""The built-in model providers, as the factories the `workgym.models` entry points name.

Each factory imports its provider only when called, so resolving `openai/...` never imports
torch, and a missing extra is an install hint rather than an ImportError. Another package adds a
provider the same way: a function `(name, *, base_url, api_key) -> Model` declared under
`[project.entry-points."workgym.models"]`.
"""

from __future__ import annotations

import importlib

from workgym.core.errors import ConfigError
from workgym.core.model import Model


def openai(name: str, *, base_url: str | None = None, api_key: str | None = None) -> Model:
    """`openai/<model>`: any OpenAI-compatible endpoint (vLLM, SGLang, Ollama, hosted APIs)."""
    from workgym.models.openai import OpenAIModel

    return OpenAIModel(name, base_url=base_url, api_key=api_key)


def hf(name: str, *, base_url: str | None = None, api_key: str | None = None) -> Model:
    """`hf/<path>`: a local transformers checkpoint (the `[train]` extra)."""
    try:
        module = importlib.import_module("workgym.models.hf")
    except ImportError as exc:
        raise ConfigError(
            f"hf/ models need the [train] extra ({exc}): "
            "pip install torch==2.13.0 && pip install 'workgym[train]'"
        ) from exc
    model: Model = module.HFModel(name)
    return model


def llamacpp(name: str, *, base_url: str | None = None, api_key: str | None = None) -> Model:
    """`llamacpp/<name or path.gguf>`: a GGUF run by llama.cpp in process (the [llamacpp] extra)."""
    from workgym.models.llamacpp import LlamaCppModel

    return LlamaCppModel(name)
