"""Model providers, chosen by the prefix of a `provider/name` model string."""

from __future__ import annotations

from typing import Protocol

from workgym.core.errors import ConfigError, ModelError
from workgym.core.model import Completion, Model, Sampling, Usage
from workgym.core.registry import Registry
from workgym.core.task_aware import TaskAwareModel

__all__ = [
    "PROVIDERS",
    "Completion",
    "Model",
    "ModelError",
    "Provider",
    "Sampling",
    "Usage",
    "get_model",
]


class Provider(Protocol):
    """What a `workgym.models` entry point names: builds the model for `provider/<name>`."""

    def __call__(
        self, name: str, *, base_url: str | None = None, api_key: str | None = None
    ) -> Model | TaskAwareModel: ...


PROVIDERS: Registry[Provider] = Registry(
    "model provider",
    "workgym.models",
    hint="write openai/<model>, hf/<path> or scripted/<name>",
)


def get_model(
    ref: Model | TaskAwareModel | str,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
) -> Model | TaskAwareModel:
    """Resolve `provider/name` (openai/<model>, hf/<path>, scripted/<name>, or a provider
    another package declares); model objects pass through."""
    if not isinstance(ref, str):
        return ref
    provider, sep, name = ref.partition("/")
    if not sep or not name:
        raise ConfigError(
            f"model {ref!r} has no provider: write openai/<model>, hf/<path> or scripted/<name>"
        )
    if provider not in PROVIDERS:
        raise ConfigError(f"model {ref!r}: {PROVIDERS.unknown(provider)}")
    return PROVIDERS.load(provider)(name, base_url=base_url, api_key=api_key)
