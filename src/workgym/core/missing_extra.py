"""A missing optional dependency, named by the extra that installs it: one line, not a traceback.

The base install (pyproject.toml's `dependencies`) holds what core, run and the statistics need;
a web server, plotting and the SQL engine are extras of the layers that use them (decision 0125).
The code that needs one says so where it imports it, so `workgym --help`, `workgym envs` and an
evaluation of a toy environment run on the base install, and a command that needs an extra
fails with the extra's name and the install line.
"""

from __future__ import annotations

import importlib.util

from workgym.core.errors import ConfigError


class MissingExtra(ConfigError, ImportError):
    """A package of one of workgym's extras is not installed; the message names the extra.

    A `ConfigError`, so the CLI prints it as one line, and an `ImportError`, so code that already
    treats a failed import as "not installed" keeps doing so."""

    def __init__(self, what: str, extra: str, cause: str) -> None:
        super().__init__(f"{what} needs the [{extra}] extra ({cause}): {install_line(extra)}")
        self.extra = extra


def install_line(extra: str) -> str:
    """The command that installs one of workgym's extras."""
    return f"pip install 'workgym[{extra}]'"


def missing(exc: ImportError, extra: str, what: str) -> MissingExtra:
    """The error to raise (`from exc`) when an import of `extra`'s package failed."""
    return MissingExtra(what, extra, str(exc))


def require(extra: str, what: str, *modules: str) -> None:
    """Raise `MissingExtra` unless every one of `modules` is installed (looked up, not imported:
    a package's `__init__` can check its dependencies for the cost of a path search)."""
    for module in modules:
        try:
            found = importlib.util.find_spec(module) is not None
        except ImportError:  # a parent package is missing, or an import hook refused it
            found = False
        if not found:
            raise MissingExtra(what, extra, f"No module named {module!r}")
