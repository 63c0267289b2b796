"""Render a chat template to prompt text without transformers (for runtimes that take text).

llama.cpp takes a prompt as text and tokenises it itself, so `llamacpp/` needs the same prompt
`hf/` would build, without torch or a transformers tokenizer. transformers renders templates with
jinja2 in a sandbox with `trim_blocks`/`lstrip_blocks`, a `tojson` that neither escapes HTML
nor ASCII-fies, and a `raise_exception` global; this module does the same, so a template renders
to the same text under both runtimes (tests/models/test_llamacpp.py compares them).

The template is data (from a GGUF a user has on disk, or one workgym ships): the sandbox keeps
it from reaching Python objects beyond the messages and tools it is given.
"""

from __future__ import annotations

import json
from datetime import datetime
from functools import lru_cache
from typing import Any

from workgym.core.errors import ConfigError


def _tojson(value: Any, indent: int | None = None, **_: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=indent)


def _raise(message: str) -> None:
    raise ConfigError(f"the chat template refused the conversation: {message}")


@lru_cache(maxsize=16)
def _compiled(template: str) -> Any:
    try:
        from jinja2.ext import loopcontrols
        from jinja2.sandbox import ImmutableSandboxedEnvironment
    except ImportError as exc:
        raise ConfigError(
            f"llamacpp/ models need jinja2 ({exc}): pip install 'workgym[llamacpp]'"
        ) from exc
    env = ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols]
    )
    env.filters["tojson"] = _tojson
    env.globals["raise_exception"] = _raise
    env.globals["strftime_now"] = lambda fmt: datetime.now().strftime(fmt)
    return env.from_string(template)


def render(
    template: str,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]] | None,
    *,
    generation: bool,
    bos_token: str = "",
    eos_token: str = "",
) -> str:
    """The prompt text of `messages` (template dicts) with `tools` offered."""
    text: str = _compiled(template).render(
        messages=messages,
        tools=tools,
        add_generation_prompt=generation,
        bos_token=bos_token,
        eos_token=eos_token,
    )
    return text
