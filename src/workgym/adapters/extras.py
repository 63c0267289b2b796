"""The one place that imports an ecosystem for an adapter, with the install line when it is
missing: a user who has not installed the extra gets a sentence, not a traceback."""

from __future__ import annotations

import importlib.util


class MissingExtra(ImportError):
    """The ecosystem an adapter needs is not installed; the message names the extra."""


def require(module: str, extra: str) -> None:
    """Raise `MissingExtra` with the install line unless `module` can be imported."""
    if importlib.util.find_spec(module) is None:
        raise MissingExtra(
            f"{module} is not installed (the {extra!r} adapter needs it): "
            f"pip install 'workgym[{extra}]'"
        )
