"""What the built-in suites share: an all-test split, answer extraction, the extra's message."""

from __future__ import annotations

import importlib
import re
from types import ModuleType

from workgym.core.errors import ConfigError
from workgym.core.missing_extra import missing
from workgym.core.tasks import SplitSpec

# Every family of a suite is in the test split, so training code (which only ever receives a
# view without the test split) cannot see a suite at all.
SUITE_SPLIT = SplitSpec(salt="workgym-suite", train=0.0, dev=0.0, test=1.0)

_ANSWER = re.compile(r"<answer>(.*?)</answer>", re.DOTALL | re.IGNORECASE)


def require(module: str, suite: str, *, install: str | None = None) -> ModuleType:
    """Import a package of the `[suites]` extra, or say how to install it; `install` is the
    line for a package that no extra installs."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        if install is None:
            raise missing(exc, "suites", suite) from exc
        raise ConfigError(
            f"{suite} needs {module} ({exc}), which no extra installs: {install}"
        ) from exc


def tagged_answer(text: object) -> str | None:
    """The content of the last <answer>...</answer> in a reply, stripped; None when absent.

    The last one, because models restate the question or draft before answering; a reply with no
    tag is unparseable, never "the whole text", so a verbose reply cannot fish for a match.
    """
    if not isinstance(text, str):
        return None
    found = _ANSWER.findall(text)
    return found[-1].strip() if found else None
