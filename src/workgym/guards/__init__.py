"""Guards against reward hacking (GUARDS.md): probes, baselines, the transcript audit, reviews
and the admission gate.

Importing this package is cheap: the episode loop imports `workgym.guards.audit` on every run,
so the heavier parts (probe catalog, attack runner) load only when their names are used.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_EXPORTS = {
    "attack_async": "workgym.guards.attack",
    "AttackReport": "workgym.guards.attack",
    "audit": "workgym.guards.audit",
    "run_baselines": "workgym.guards.baselines",
    "require_admitted": "workgym.guards.admission",
    "NotAdmittedError": "workgym.guards.admission",
    "is_trusted": "workgym.guards.review",
    "TrustedOutcomes": "workgym.guards.review",
    "capabilities": "workgym.guards.capabilities",
    "probes": "workgym.guards.catalog",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'workgym.guards' has no attribute {name!r}")
    return getattr(import_module(module), name)
