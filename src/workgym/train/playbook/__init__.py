"""Frozen weights, learned playbook (shared/design/PLAYBOOK.md), built of small parts.

Data: `entries` (Entry), `playbook` (Playbook, save/load), `deltas` (Delta, apply_deltas),
`ledger` (Ledger). Steps: `sampling` (batches, failure replay), `rollouts` (cached runs on a
sealed view of the environment), `gates` (advantages, gate A/B, bisection), `reflector`,
`reflecting` and `reflection` (the one call per iteration, defensive parsing), `curator` and
`lint` (deterministic checks), `pruning`, `stopping`, `scoring`. Orchestration: `loop` and
`gating` (steps 0-9), `runlog` (append-only, replayed on resume), `summary` and `report`
(files, token-matched statement, plots), `config`, `api` (`train_playbook`), `command`
(`workgym train playbook`). `toyrules` is a test environment with scripted doubles.
"""

from workgym.train.playbook.deltas import ApplyResult, Delta, DeltaOp, Rejection, apply_deltas
from workgym.train.playbook.entries import Counters, Entry, EntryStatus, Provenance
from workgym.train.playbook.ledger import BudgetExceeded, Ledger
from workgym.train.playbook.playbook import (
    Playbook,
    PlaybookVersion,
    load_playbook,
    parse_markdown,
    save_playbook,
)

__all__ = [
    "ApplyResult",
    "BudgetExceeded",
    "Counters",
    "Delta",
    "DeltaOp",
    "Entry",
    "EntryStatus",
    "Ledger",
    "Playbook",
    "PlaybookVersion",
    "Provenance",
    "Rejection",
    "apply_deltas",
    "load_playbook",
    "parse_markdown",
    "save_playbook",
]
