"""Options shared by every command that takes an environment.

`--import MODULE` (repeatable) imports a module before the environment is looked up, so a class
decorated with `@workgym.register` there resolves by its id, and a saved directory whose class
lives there loads. The current directory is searched first, as `python -m` would, because a
console script does not put it on `sys.path`.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Annotated

import typer

from workgym.core.environment import Environment
from workgym.core.errors import ConfigError
from workgym.core.loading import load, trust_module
from workgym.core.user_code import describe

ImportModules = Annotated[
    list[str] | None,
    typer.Option(
        "--import",
        metavar="MODULE",
        help="import MODULE first (repeatable): where your @workgym.register environment lives",
    ),
]


def import_modules(modules: list[str] | None) -> None:
    """Import each `--import` module (the current directory first on the path)."""
    if not modules:
        return
    cwd = str(Path.cwd())
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    for name in modules:
        trust_module(name)  # the user named it: its classes may load from saved directories
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name is not None and name != exc.name and not name.startswith(f"{exc.name}."):
                raise ConfigError(f"--import {name}: {describe(exc)}") from exc
            raise ConfigError(
                f"--import {name}: cannot import it ({exc}); pass a module name (acme.shop, "
                "not acme/shop.py) that is installed, on PYTHONPATH, or in the current directory"
            ) from exc
        except ConfigError as exc:  # already says what is wrong (a bad tasks.jsonl line)
            raise ConfigError(f"--import {name}: {exc}") from exc
        except Exception as exc:  # the module itself is wrong: its file and line, one line
            raise ConfigError(f"--import {name}: {describe(exc)}") from exc


def load_env(ref: str | Path, modules: list[str] | None) -> Environment:
    """The environment a command was given, after importing its `--import` modules."""
    import_modules(modules)
    return load(ref)
