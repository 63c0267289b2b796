"""Reviews of audit flags, and the one question training and certification ask: is this success
trusted?

A person (`workgym review RUN`, or the viewer) marks each flag of an episode as `accepted` (the
flag was a false alarm) or `exploit` (a confirmed reward hack). Reviews are appended to
RUN/reviews.jsonl, one JSON object per line with exactly the keys
{"task_id", "epoch", "flag", "decision", "note", "at"}; the latest line for a (task, epoch, flag)
wins, and nothing is ever rewritten. A success is trusted only when every flag it carries has
been accepted; an unreviewed flag or a confirmed exploit makes it untrusted.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from workgym.core import datafiles
from workgym.core.episode import record_flags
from workgym.core.errors import ConfigError

REVIEWS = "reviews.jsonl"
Decision = Literal["accepted", "exploit"]
Key = tuple[str, int, str]


class Review(BaseModel):
    task_id: str
    epoch: int
    flag: str
    decision: Decision
    note: str = ""
    at: str = ""


def episode_flags(record: dict[str, Any]) -> list[str]:
    """Audit flags plus the verifier's own flags of one episode record, sorted."""
    verdict = record.get("verdict") or {}
    return sorted(set(record_flags(record)) | set(verdict.get("flags") or []))


def is_success(record: dict[str, Any]) -> bool:
    return bool((record.get("verdict") or {}).get("success", False))


def read_reviews(run: str | Path) -> dict[Key, Review]:
    """The latest review of every (task_id, epoch, flag) in RUN/reviews.jsonl."""
    path = Path(run) / REVIEWS
    found: dict[Key, Review] = {}
    if not datafiles.present(path):
        return found
    with datafiles.open_text(path) as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                review = Review.model_validate_json(line)
            except ValidationError as exc:
                raise ConfigError(
                    f"{path}:{lineno} is not a review ({exc.errors()[0]['msg']}); fix or remove "
                    'that line (keys: task_id, epoch, flag, decision "accepted"|"exploit", '
                    "note, at)"
                ) from exc
            found[(review.task_id, review.epoch, review.flag)] = review
    return found


def is_trusted(record: dict[str, Any], reviews: dict[Key, Review]) -> bool:
    """A success with no flags, or whose every flag has been reviewed and accepted."""
    if not is_success(record):
        return False
    task_id, epoch = record["task_id"], int(record.get("epoch", 0))
    for flag in episode_flags(record):
        review = reviews.get((task_id, epoch, flag))
        if review is None or review.decision != "accepted":
            return False
    return True


class TrustSummary(BaseModel):
    episodes: int = 0
    successes: int = 0
    flagged_successes: int = 0
    trusted_successes: int = 0
    unreviewed_flags: int = 0
    exploits: int = 0


class TrustedOutcomes:
    """A run's episodes seen through its reviews: what training and certification may count."""

    def __init__(self, records: Iterable[dict[str, Any]], reviews: dict[Key, Review]) -> None:
        self.records = {(r["task_id"], int(r.get("epoch", 0))): r for r in records}
        self.reviews = reviews

    @classmethod
    def from_run(cls, run: str | Path) -> TrustedOutcomes:
        from workgym.run.rundir import RunDir, read_spec

        path = Path(run)
        return cls(RunDir(path, read_spec(path)).records(), read_reviews(path))

    def trusted(self, task_id: str, epoch: int = 0) -> bool:
        record = self.records.get((task_id, epoch))
        if record is None:
            raise KeyError(f"no episode ({task_id!r}, epoch {epoch}) in this run")
        return is_trusted(record, self.reviews)

    def reward(self, task_id: str, epoch: int = 0) -> float:
        """The reward training may use: 0 for an untrusted success (flagged, not yet accepted)."""
        record = self.records[(task_id, epoch)]
        if is_success(record) and not is_trusted(record, self.reviews):
            return 0.0
        return float((record.get("verdict") or {}).get("reward", 0.0))

    def pending(self) -> list[tuple[str, int, list[str]]]:
        """Flagged successes with at least one flag not yet reviewed."""
        out = []
        for (task_id, epoch), record in sorted(self.records.items()):
            if not is_success(record):
                continue
            open_flags = [
                f for f in episode_flags(record) if (task_id, epoch, f) not in self.reviews
            ]
            if open_flags:
                out.append((task_id, epoch, open_flags))
        return out

    def summary(self) -> TrustSummary:
        s = TrustSummary(episodes=len(self.records))
        for (task_id, epoch), record in self.records.items():
            flags = episode_flags(record)
            reviewed = [self.reviews.get((task_id, epoch, f)) for f in flags]
            s.exploits += sum(1 for r in reviewed if r is not None and r.decision == "exploit")
            if not is_success(record):
                continue
            s.successes += 1
            s.flagged_successes += bool(flags)
            s.unreviewed_flags += sum(1 for r in reviewed if r is None)
            s.trusted_successes += is_trusted(record, self.reviews)
        return s


def append_review(
    run: str | Path,
    task_id: str,
    epoch: int,
    flag: str,
    decision: Decision,
    note: str = "",
) -> Review:
    """Append one review line; the episode must exist and carry the flag."""
    outcomes = TrustedOutcomes.from_run(run)
    record = outcomes.records.get((task_id, epoch))
    if record is None:
        raise ConfigError(
            f"no episode ({task_id}, epoch {epoch}) in {run}; `workgym review {run}` lists the "
            "flagged ones"
        )
    flags = episode_flags(record)
    if flag not in flags:
        raise ConfigError(
            f"episode ({task_id}, epoch {epoch}) has no flag {flag!r}; its flags: "
            f"{', '.join(flags) or 'none'}"
        )
    review = Review(
        task_id=task_id,
        epoch=epoch,
        flag=flag,
        decision=decision,
        note=note,
        at=datetime.now(UTC).isoformat(timespec="seconds"),
    )
    with datafiles.open_text(Path(run) / REVIEWS, "a") as fh:
        fh.write(json.dumps(review.model_dump(), ensure_ascii=False) + "\n")
    return review


def counted(
    record: dict[str, Any], reviews: dict[Key, Review] | None = None
) -> tuple[float, bool, str, list[str]]:
    """The reward a certificate counts for one episode, its success, why it is 0, and flags.

    Errors and limit hits are failures (in both arms alike); a verifier error is a failure that
    is counted separately; a success that carries an audit flag is not a success until a person
    accepted every flag it carries (docs/guards.md; workgym.guards.review), and then it is
    `reviewed` (counted, and reported as such).
    """
    verdict = record.get("verdict") or {}
    flags = episode_flags(record)
    outcome = record.get("outcome", "error")
    if outcome == "error":
        return 0.0, False, "error", flags
    if outcome == "truncated":
        return 0.0, False, "truncated", flags
    if verdict.get("status") == "verifier_error":
        return 0.0, False, "verifier_error", flags
    reward, success = float(verdict.get("reward", 0.0)), bool(verdict.get("success", False))
    if success and flags:
        if reviews and is_trusted(record, reviews):
            return reward, success, "reviewed", flags
        return 0.0, False, "flagged", flags
    return reward, success, "", flags
