"""The one place that imports an ecosystem for an adapter, with the install line when it is
missing: a user who has not installed the extra gets a sentence, not a traceback."""

from __future__ import annotations

import importlib.util


class MissingExtra(ImportError):
    """The ecosystem an adapter needs is not installed; the message names the extra."""


def require(module: str, extra: str) -> None:
    """Raise `MissingExtra` with the install line unless `module` can be imported.

    Name a submodule (`verifiers.envs`) where a bare top-level name could also be a folder on
    sys.path (a namespace package), which find_spec would find without the package."""
    top = module.split(".")[0]
    try:
        found = importlib.util.find_spec(module) is not None
    except ImportError:
        found = False
    if not found:
        raise MissingExtra(
            f"{top} is not installed (the {extra!r} adapter needs it): "
            f"pip install 'workgym[{extra}]'"
        )
