"""Swarms: several agents on one task, and comparisons at equal cost (docs/swarms.md).

A swarm is a `Team` (workgym.swarm.team) that plays through its own Policy, a `TeamPolicy`
overriding `Policy.play`: `Attempts(...).policy(playbook=...)` runs through eval, the playbook
trainer and the certificate like any policy (and `eval`, the trainer and `make_policy` take the
team itself where they take a model), and every agent's tokens are recorded in `Episode.team`.

- `Attempts`: independent attempts with a vote (self-consistency) or a judge (best-of-k); with a
  token budget per task it is also the cost-matched single-agent baseline.
- `Roles`: planner, executor and checker in one episode, one playbook with a section per role.
- `workgym.swarm.compare`: reward at matched cost and cost at matched reward, paired CIs
  (`workgym compare RUN...`).
"""

from workgym.swarm.policies import Attempts
from workgym.swarm.roles import Roles
from workgym.swarm.selection import JudgeSelect, MajorityVote, Selector
from workgym.swarm.team import Team, TeamPolicy

__all__ = ["Attempts", "JudgeSelect", "MajorityVote", "Roles", "Selector", "Team", "TeamPolicy"]
