"""Model providers, chosen by the prefix of a `provider/name` model string."""

from __future__ import annotations

import importlib

from workgym.core.errors import ConfigError
from workgym.core.model import Completion, Model, Sampling, Usage
from workgym.core.task_aware import TaskAwareModel

__all__ = [
    "Completion",
    "Model",
    "Sampling",
    "Usage",
    "get_model",
]

PROVIDERS = ("openai", "hf", "scripted")


def get_model(
    ref: Model | TaskAwareModel | str,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
) -> Model | TaskAwareModel:
    """Resolve `openai/<model>`, `hf/<path>` or `scripted/<name>`; pass model objects through."""
    if not isinstance(ref, str):
        return ref
    provider, sep, name = ref.partition("/")
    if not sep or not name:
        raise ConfigError(
            f"model {ref!r} has no provider: write openai/<model>, hf/<path> or scripted/<name>"
        )
    if provider == "openai":
        from workgym.models.openai import OpenAIModel

        return OpenAIModel(name, base_url=base_url, api_key=api_key)
    if provider == "scripted":
        # The test doubles sit in a layer above this one (workgym.testing), so the provider is
        # named by its import path and resolved on use, as an entry point would be.
        scripted = importlib.import_module("workgym.testing.scripted")
        double: TaskAwareModel = scripted.get_scripted(name)
        return double
    if provider == "hf":
        try:
            hf = importlib.import_module("workgym.models.hf")
        except ImportError as exc:
            raise ConfigError(
                f"hf/ models need the [train] extra ({exc}): "
                "pip install torch==2.13.0 && pip install 'workgym[train]'"
            ) from exc
        model: Model = hf.HFModel(name)
        return model
    raise ConfigError(
        f"unknown model provider {provider!r} in {ref!r}: use one of "
        + ", ".join(f"{p}/..." for p in PROVIDERS)
    )
