"""The `workgym train` command group, shared by every trainer.

Each trainer adds its own subcommand from its own module, declared as a `workgym.trainers` entry
point naming its `register(train_app: typer.Typer)` (a package adds a trainer the same way); it
keeps heavy imports inside the command function, so `workgym --help` stays fast.
"""

from __future__ import annotations

from collections.abc import Callable

import typer

from workgym.core.registry import Registry

TRAINERS: Registry[Callable[[typer.Typer], None]] = Registry("trainer", "workgym.trainers")


def register(app: typer.Typer) -> None:
    """Add `workgym train ...` with every trainer's subcommand to the main app."""
    train_app = typer.Typer(
        name="train",
        help="Train an agent on an environment's train split (dev selects; test stays sealed).",
        no_args_is_help=True,
        add_completion=False,
    )
    for name in TRAINERS.names():
        TRAINERS.load(name)(train_app)
    app.add_typer(train_app, name="train")
