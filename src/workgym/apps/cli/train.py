"""The `workgym train` command group, shared by every trainer.

Each trainer adds its own subcommand from its own module: list the module in
`TRAIN_COMMAND_MODULES`; it exposes `register(train_app: typer.Typer)` and keeps heavy imports
inside the command function, so `workgym --help` stays fast.
"""

from __future__ import annotations

import importlib

import typer

TRAIN_COMMAND_MODULES: list[str] = [
    "workgym.apps.cli.playbook",
    "workgym.apps.cli.grpo",
]


def register(app: typer.Typer) -> None:
    """Add `workgym train ...` with every trainer's subcommand to the main app."""
    train_app = typer.Typer(
        name="train",
        help="Train an agent on an environment's train split (dev selects; test stays sealed).",
        no_args_is_help=True,
        add_completion=False,
    )
    for name in TRAIN_COMMAND_MODULES:
        importlib.import_module(name).register(train_app)
    app.add_typer(train_app, name="train")
