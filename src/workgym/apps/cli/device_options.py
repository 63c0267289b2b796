"""Options shared by every command that plays a model: `--device`, `--dtype` and `--max-tokens`.

Declared once here so that eval, train, certify, serve-model and imitation-gap spell, default and
explain them alike. The command states them (`use_placement`) before it builds any model; the
`hf/` provider reads them when it loads weights (`workgym.models.placement`). Remote models
(`openai/`) ignore them.
"""

from __future__ import annotations

from typing import Annotated

import typer

from workgym.models.placement import request

Device = Annotated[
    str,
    typer.Option(
        "--device",
        metavar="DEVICE",
        help="where local (hf/) weights go: auto (cuda, then mps, then cpu), cuda, cuda:N, mps "
        "or cpu",
    ),
]
MaxTokens = Annotated[
    int | None,
    typer.Option(
        help="per model call [default: the model's own: 256 new tokens for hf/, the "
        "provider's for openai/]"
    ),
]
Dtype = Annotated[
    str,
    typer.Option(
        "--dtype",
        metavar="DTYPE",
        help="precision of local (hf/) weights: auto (bfloat16 on a GPU that supports it, "
        "float16 on other GPUs, float32 on cpu), bfloat16, float16 or float32",
    ),
]


def use_placement(device: str, dtype: str) -> None:
    """Make `--device`/`--dtype` the process's choice (a typo fails here, before any work)."""
    request(device, dtype)
