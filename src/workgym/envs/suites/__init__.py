"""Regression suites: general abilities a job-specific agent must keep (docs/certificate.md).

Each suite is an ordinary environment, registered by id, so it runs, resumes, checks and views
like any other; a user adds a suite by writing an environment and passing its id to
`workgym certify --suites`. Every item of a suite is in its test split: a suite is never trained
on (training code gets a view without the test split, so it sees nothing of a suite).

- `suites/reasoning`: procedural reasoning from reasoning-gym, scored by its own scorers.
- `suites/bfcl`: function calling on the Berkeley Function Calling Leaderboard data shipped in
  bfcl-eval, scored by workgym's strict tool-call checks.
- `suites/ifeval`: instruction following with verifiable constraints (workgym's own checkers).

The first two need the `[suites]` extra; their data is read from the installed packages, never
downloaded.
"""

from __future__ import annotations

from workgym.envs.suites.bfcl import BFCLSuite
from workgym.envs.suites.ifeval import IFEvalSuite
from workgym.envs.suites.reasoning import ReasoningSuite

SUITE_IDS = (ReasoningSuite.id, BFCLSuite.id, IFEvalSuite.id)

__all__ = ["SUITE_IDS", "BFCLSuite", "IFEvalSuite", "ReasoningSuite"]
