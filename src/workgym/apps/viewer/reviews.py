"""Flag reviews as the viewer reads and writes them: RUN/reviews.jsonl, the format of
workgym.guards.review (one JSON object per line: {"task_id", "epoch", "flag",
"decision": "accepted" | "exploit", "note", "at"}; the latest line for a (task, epoch, flag)
wins; nothing is ever rewritten).

This is the one thing the viewer writes. It uses the guards' `Review` model and file name, so the
line is byte-for-byte what `workgym.guards.review.append_review` writes; it checks the episode and
flag through the viewer's index (one seek) instead of loading every episode of the run, which
would take seconds and gigabytes on a 100,000-episode run. Reading here is tolerant (a bad line is
skipped, not fatal), because a page must still open on a file someone edited by hand.
"""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from workgym.core import datafiles
from workgym.guards.review import REVIEWS, Decision, Review, episode_flags

__all__ = ["REVIEWS", "Decision", "Review", "append_review", "episode_flags", "read_reviews"]

_lock = threading.Lock()


def append_review(run: Path, review: Review) -> Review:
    """Append one review line (O_APPEND, one write, flushed), never rewriting earlier ones.

    The file is opened with O_NOFOLLOW and must be a regular file with one link
    (workgym.core.datafiles): a received run whose reviews.jsonl links elsewhere is refused,
    so a click never writes outside the served folder (issue 39, item 1)."""
    if not review.at:
        review = review.model_copy(update={"at": datetime.now(UTC).isoformat(timespec="seconds")})
    line = json.dumps(review.model_dump(), ensure_ascii=False) + "\n"
    with _lock, datafiles.open_text(run / REVIEWS, "a") as fh:
        fh.write(line)
        fh.flush()
    return review


def read_reviews(
    run: Path, task_id: str | None = None, epoch: int | None = None
) -> list[dict[str, Any]]:
    """Review lines in file order, optionally for one episode; unreadable lines are skipped."""
    path = run / REVIEWS
    if not datafiles.present(path):
        return []
    out = []
    with datafiles.open_text(path, errors="replace") as fh:
        for line in fh:
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            if not isinstance(record, dict):
                continue
            if task_id is not None and record.get("task_id") != task_id:
                continue
            if epoch is not None and record.get("epoch") != epoch:
                continue
            out.append(record)
    return out


def latest_by_flag(reviews: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The decision in force for each flag: its last line."""
    latest: dict[str, dict[str, Any]] = {}
    for record in reviews:
        latest[str(record.get("flag"))] = record
    return latest


def review_counts(run: Path) -> dict[str, int]:
    """How many (task, epoch, flag) triples are currently marked accepted / exploit."""
    latest: dict[tuple[Any, Any, Any], str] = {}
    for r in read_reviews(run):
        latest[(r.get("task_id"), r.get("epoch"), r.get("flag"))] = str(r.get("decision"))
    counts = {"accepted": 0, "exploit": 0}
    for decision in latest.values():
        if decision in counts:
            counts[decision] += 1
    return counts
