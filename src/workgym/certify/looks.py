"""The looks log: every time anyone opens an environment's test split (a certificate, or an
`eval`/`baselines` run on it).

A test split is a held-out sample only for as long as nobody tunes against it. Each certificate
attempt is a look; ten attempts with a 5% test each have a ~40% chance that one passes by luck.
So every look is appended to a log that lives outside the run and certificate folders (a new
--out cannot reset it), and the certificate states which attempt it is.

The log is append-only JSON lines; one write per line with O_APPEND, so concurrent writers do not
interleave. Its default place is ``$WORKGYM_HOME/looks.jsonl`` (``~/.workgym`` when unset).
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel

from workgym.certify.schema import LooksRecord
from workgym.core.errors import ConfigError

if TYPE_CHECKING:
    from workgym.core.environment import Environment

LookKind = Literal["certify", "recompute", "eval", "baselines"]
"""`certify` attempts are counted in the certificate; `eval` and `baselines` are other runs on
the test split, logged next to them so that anyone can see how often the split was seen."""


class Look(BaseModel):
    """One line of the log."""

    at: str
    kind: LookKind
    env_id: str
    env_hash: str
    split: str
    split_hash: str
    baseline: str
    candidate: str
    out: str


def default_log() -> Path:
    home = os.environ.get("WORKGYM_HOME")
    return (Path(home) if home else Path.home() / ".workgym") / "looks.jsonl"


def read_looks(log: Path) -> list[Look]:
    if not log.exists():
        return []
    looks = []
    with log.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                looks.append(Look.model_validate_json(line))
            except ValueError as exc:
                raise ConfigError(
                    f"{log}:{lineno} is not a look record ({exc}); the looks log is append-only: "
                    "restore it from a backup rather than editing it"
                ) from exc
    return looks


def attempts(log: Path, env_hash: str, split_hash: str) -> int:
    """Certificate attempts already made on this exact environment and split."""
    return sum(
        1
        for look in read_looks(log)
        if look.kind == "certify" and look.env_hash == env_hash and look.split_hash == split_hash
    )


def record_look(log: Path, look: Look) -> LooksRecord:
    """Append one look and return its attempt number (counting this one)."""
    previous = attempts(log, look.env_hash, look.split_hash)
    log.parent.mkdir(parents=True, exist_ok=True)
    line = (look.model_dump_json() + "\n").encode()
    fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line)
        os.fsync(fd)
    finally:
        os.close(fd)
    own = previous + 1 if look.kind == "certify" else previous
    return LooksRecord(log=str(log), attempt=own, previous_attempts=previous)


def record_run_look(
    env: Environment, ref: str, kind: LookKind, model: str, out: str, log: Path | None = None
) -> Look:
    """Log an `eval`/`baselines` run that plays the test split (or `all`, which contains it)."""
    from workgym.certify.certificate import env_record

    items = [(t.id, t.family) for t in env.taskset.split("test")]
    record = env_record(env, ref, "test", items)
    look = Look(
        at=now(),
        kind=kind,
        env_id=env.id,
        env_hash=record.hash,
        split="test",
        split_hash=record.split_hash,
        baseline="",
        candidate=model,
        out=out,
    )
    record_look(log or default_log(), look)
    return look


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
