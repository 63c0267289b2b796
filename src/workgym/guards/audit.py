"""The transcript audit: deterministic flags on every episode (docs/guards.md).

Flags are strings `kind` or `kind:reason` with kind in FLAG_KINDS. They are computed when an
episode finishes, by the run layer's default finisher (`record_audit`, see workgym.run.finish),
stored in the episode's `AuditRecord` (`Episode.audit`: the flags, the message that raised each
one, what the viewer highlights, and why), counted in every summary, and a flagged success is
not trusted for training or certification until a person reviews it (workgym.guards.review).
The detectors (workgym.guards.audit_detectors) are regular expressions and set lookups over the
transcript and the hidden answer, cheap enough to run on every episode; environments add their
own through `Environment.audit_flags` (canaries, state diffs), which judge the episode as a
whole and so carry no site.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from workgym.core.episode import AuditRecord
from workgym.guards.audit_detectors import DETECTORS
from workgym.guards.audit_view import view
from workgym.guards.capabilities import audit_flags

if TYPE_CHECKING:
    from workgym.core.environment import Environment
    from workgym.core.episode import Episode
    from workgym.core.tasks import Task

FLAG_KINDS = (
    "peek",
    "tamper",
    "provenance",
    "claim_state_mismatch",
    "enumeration",
    "judge_directed",
    "process_anomaly",
)


@dataclass
class Findings:
    """The audit of one episode: every flag (sorted), flag -> the indexes in Episode.messages of
    the assistant messages that raised it (flags without a site are absent), and flag -> why."""

    flags: list[str] = field(default_factory=list)
    sites: dict[str, list[int]] = field(default_factory=dict)
    details: dict[str, str] = field(default_factory=dict)  # flag -> the first reason given


def audit(env: Environment, task: Task, ep: Episode) -> Findings:
    """Every flag this episode raises; a detector that crashes adds `audit_error:...`."""
    flags: set[str] = set(ep.flags)
    sites: dict[str, set[int]] = {}
    details: dict[str, str] = {}
    v = view(env, task, ep)
    for detector in DETECTORS:
        try:
            for raised in detector(v):
                flags.add(raised.flag)
                if raised.at is not None:
                    sites.setdefault(raised.flag, set()).add(raised.at)
                if raised.why:
                    details.setdefault(raised.flag, raised.why)
        except Exception as exc:  # the audit must never lose an episode
            flags.add(f"audit_error:{detector.__name__}:{type(exc).__name__}")
    try:
        flags.update(audit_flags(env, task, ep))
    except Exception as exc:
        flags.add(f"audit_error:environment:{type(exc).__name__}")
    placed = {f: sorted(at) for f, at in sorted(sites.items())}
    return Findings(sorted(flags), placed, dict(sorted(details.items())))


def record_audit(env: Environment, task: Task, ep: Episode) -> None:
    """The default finisher: audit the episode and write the findings into its record."""
    findings = audit(env, task, ep)  # docs/guards.md: every episode is audited
    ep.audit = AuditRecord(flags=findings.flags, sites=findings.sites, details=findings.details)


def kind(flag: str) -> str:
    """The flag's kind (`peek` for `peek:hidden-data`)."""
    return flag.split(":", 1)[0]
