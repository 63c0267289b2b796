"""Frozen weights, learned playbook (docs/playbook.md), built of small parts.

Data: `entries` (Entry), `playbook` (Playbook, save/load), `deltas` (Delta, apply_deltas),
`ledger` (Ledger). Steps: `sampling` (batches, failure replay), `rollouts` (cached runs on a
sealed view of the environment), `groups` (advantages, contrastive selection), `reflect` (the one
reflection call per iteration, replayed on resume) and `lessons` (what it returns, parsed
defensively), `curator` and `leak_lint` (deterministic checks), `gate` (gates A and B, bisection),
`pruning`, `stopping`, `scoring`. Orchestration: `state` (what the steps share), `loop` (steps
0-9), `runlog` (append-only, replayed on resume), `result` and `report` (files, token-matched
statement, plots), `config`, `api` (`train_playbook`); the command is
`workgym.apps.cli.train_playbook`, and the test environment with its scripted doubles is
`workgym.envs.toy_rules`.
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
