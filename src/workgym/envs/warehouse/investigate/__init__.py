"""F9: investigations with planted causes, their verifier, and findings on real data.

`build_investigation_tasks` plants one cause per task in a copy of the snapshot (or none), gates
it for solvability and phrases it; `verify_conclusion` scores a submitted conclusion by slice IoU
with evidence re-run; `oracle_turns` solves a task through the real tools (for `workgym check`);
`workgym investigate` runs a trained policy on the real, unplanted data (`findings`).

Names are imported lazily: the warehouse answer schema imports `investigate.answer`, and loading
the whole package at that point would import the generator back.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "build_investigation_tasks": "build",
    "build_investigations": "build",
    "verify_conclusion": "conclusion",
    "oracle_turns": "oracle",
    "ConclusionAnswer": "answer",
    "PredicateTerm": "answer",
    "EvidenceQuery": "answer",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
