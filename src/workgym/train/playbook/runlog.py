"""The run log: an append-only record of every decision, and the key to exact resumption.

The loop is deterministic given its inputs, and everything expensive or random it consumes is on
disk: episodes in cached run directories, reflector replies in this log. So resuming is replaying:
the loop runs again from the start, reads back what exists, and this log checks that each
decision it makes matches the one already written (a mismatch means the code, the environment or
the model changed, and the run refuses to continue rather than mix two runs). New decisions are
appended and flushed one line at a time; a line torn by a kill is moved aside.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from workgym.core.errors import ConfigError

TRAIN_FORMAT = "workgym-train-playbook/1"
TRAIN_JSON = "train.json"
LOG = "log.jsonl"
_VOLATILE = ("time",)


def _normal(event: dict[str, Any]) -> dict[str, Any]:
    """The comparable form of an event: JSON round-tripped, without volatile fields."""
    value: dict[str, Any] = json.loads(json.dumps(event, default=str))
    for key in _VOLATILE:
        value.pop(key, None)
    return value


class LogDiverged(ConfigError):
    """A resumed run decided differently from the log it is resuming."""


class RunLog:
    def __init__(self, root: Path, existing: list[dict[str, Any]]) -> None:
        self.root = root
        self.existing = existing
        self.cursor = 0
        self._fh: IO[str] | None = None

    @property
    def path(self) -> Path:
        return self.root / LOG

    @classmethod
    def open(cls, root: str | Path, identity: dict[str, Any]) -> RunLog:
        """Start a run in `root`, or resume the one there if it has the same identity."""
        path = Path(root)
        spec = path / TRAIN_JSON
        mine = _normal({"format": TRAIN_FORMAT, **identity})
        if spec.exists():
            try:
                theirs = json.loads(spec.read_text())
            except ValueError as exc:
                raise ConfigError(f"{spec} is corrupt ({exc}); pass a new --out") from exc
            theirs = {k: v for k, v in theirs.items() if k not in ("created_at", "versions")}
            diffs = sorted(k for k in set(mine) | set(theirs) if mine.get(k) != theirs.get(k))
            if diffs:
                raise ConfigError(
                    f"{path} holds a different training run (differs in: {', '.join(diffs)}); "
                    "pass a new --out, or re-run with the same settings to resume it"
                )
        else:
            if path.exists() and any(path.iterdir()):
                raise ConfigError(f"{path} exists and is not a training run; pass a new --out")
            path.mkdir(parents=True, exist_ok=True)
            from workgym.run.rundir import versions

            stamped = {**mine, "created_at": datetime.now(UTC).isoformat(), "versions": versions()}
            tmp = spec.with_suffix(".tmp")
            tmp.write_text(json.dumps(stamped, indent=2, sort_keys=True) + "\n")
            os.replace(tmp, spec)
        return cls(path, _read(path / LOG, repair=True))

    @property
    def replaying(self) -> bool:
        return self.cursor < len(self.existing)

    def recall(self, kind: str) -> dict[str, Any] | None:
        """The next logged event if it is of this kind (consumed), else None."""
        if self.replaying and self.existing[self.cursor].get("kind") == kind:
            event = self.existing[self.cursor]
            self.cursor += 1
            return event
        return None

    def emit(self, event: dict[str, Any]) -> dict[str, Any]:
        """Record a decision; while replaying, check it against the logged one instead."""
        if self.replaying:
            logged = self.existing[self.cursor]
            if _normal(logged) != _normal(event):
                raise LogDiverged(
                    f"{self.path} line {self.cursor + 1}: this run decided "
                    f"{_brief(event)} where the log says {_brief(logged)}; the code, environment "
                    "or model changed since: pass a new --out"
                )
            self.cursor += 1
            return logged
        stamped = {**event, "time": datetime.now(UTC).isoformat(timespec="milliseconds")}
        if self._fh is None:
            self._fh = self.path.open("a", encoding="utf-8")
        self._fh.write(json.dumps(stamped, default=str, sort_keys=True) + "\n")
        self._fh.flush()
        return stamped

    def events(self) -> list[dict[str, Any]]:
        """Every event so far (the logged ones plus the new ones), read back from disk."""
        if self._fh is not None:
            self._fh.flush()
        return _read(self.path)

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None


def _brief(event: dict[str, Any]) -> str:
    text = json.dumps(_normal(event), sort_keys=True)
    return text if len(text) < 160 else text[:157] + "..."


def _read(path: Path, *, repair: bool = False) -> list[dict[str, Any]]:
    """Events of a log; a torn last line (a kill mid-write) is ignored, or with `repair` moved
    aside to log.jsonl.torn (only the process that will append may repair)."""
    if not path.exists():
        return []
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        cut = data.rfind(b"\n") + 1
        if repair:
            with (path.parent / (path.name + ".torn")).open("ab") as torn:
                torn.write(data[cut:] + b"\n")
            path.write_bytes(data[:cut])
        data = data[:cut]
    events = []
    for lineno, line in enumerate(data.decode("utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            events.append(json.loads(line))
        except ValueError as exc:
            raise ConfigError(f"{path}:{lineno} is corrupt ({exc}); pass a new --out") from exc
    return events


def read_events(root: str | Path) -> list[dict[str, Any]]:
    """The events of a training run directory (for reports and tests)."""
    path = Path(root) / LOG
    if not path.exists():
        raise ConfigError(f"{root} is not a playbook training run (no {LOG}); pass its --out")
    return _read(path)
