"""A playbook training directory as the viewer shows it: read from the trainer's files, never
changed.

The trainer (workgym.train.playbook) writes playbook.md (the rendered text), beside it
playbook.history.jsonl (every version: hash, parent, iteration, reason, the full entry records),
log.jsonl (events: curation deltas, gate decisions, checkpoints), checkpoints/*.md, report.json
and learning_curve.png. Whatever of that exists is shown; missing parts are said, not invented.
Parsing is defensive (`.get` everywhere): the page must still open on an older or newer file.
"""

from __future__ import annotations

import difflib
import json
from pathlib import Path
from typing import Any

from workgym.core import datafiles

MAX_TEXT = 2_000_000
MAX_LINES = 50_000
HISTORY = "playbook.history.jsonl"
LOG = "log.jsonl"


def read_text(path: Path) -> str:
    return datafiles.read_text(path, limit=MAX_TEXT, errors="replace")


def read_jsonl(path: Path) -> tuple[list[dict[str, Any]], int]:
    """Object lines of a JSONL file, and how many lines could not be read."""
    rows: list[dict[str, Any]] = []
    bad = 0
    if not datafiles.present(path):
        return rows, bad
    with datafiles.open_text(path, errors="replace") as fh:
        for i, line in enumerate(fh):
            if i >= MAX_LINES:
                break
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except json.JSONDecodeError:
                bad += 1
                continue
            if isinstance(value, dict):
                rows.append(value)
            else:
                bad += 1
    return rows, bad


def _entries(version: dict[str, Any]) -> list[dict[str, Any]]:
    pb = version.get("playbook") or {}
    return [e for e in pb.get("entries") or [] if isinstance(e, dict)]


def version_text(version: dict[str, Any]) -> str:
    """The text a version renders to: the trainer's own render() when it can be imported,
    otherwise one line per live entry (enough to diff what changed)."""
    try:
        from workgym.train.playbook.playbook import Playbook

        return str(Playbook.model_validate(version.get("playbook") or {}).render())
    except Exception:  # the trainer's model changed or is absent: fall back to a plain listing
        lines = []
        for e in _entries(version):
            if e.get("status", "active") in ("active", "candidate"):
                lines.append(f"[{e.get('section', '')}] [{e.get('id', '')}] {e.get('text', '')}")
        return "\n".join(lines)


def _deltas(log: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every proposed delta with what became of it: accepted or rejected by a gate (with the
    gate's reason), refused by the curator, or still pending."""
    rows: dict[str, dict[str, Any]] = {}
    order: list[str] = []
    for event in log:
        kind = event.get("kind")
        if kind == "curation":
            for d in event.get("deltas") or []:
                did = str(d.get("id") or f"?{len(order)}")
                rows[did] = {
                    "iteration": event.get("iteration"),
                    "id": did,
                    "op": d.get("op"),
                    "targets": ", ".join(d.get("target_ids") or []),
                    "section": d.get("section"),
                    "text": d.get("text") or d.get("tag") or "",
                    "rationale": d.get("rationale", ""),
                    "decision": "pending",
                    "reason": "",
                }
                order.append(did)
            for r in event.get("rejected") or []:
                d = r.get("delta") or {}
                did = str(d.get("id") or f"?{len(order)}")
                rows[did] = {
                    "iteration": event.get("iteration"),
                    "id": did,
                    "op": d.get("op"),
                    "targets": ", ".join(d.get("target_ids") or []),
                    "section": d.get("section"),
                    "text": d.get("text") or "",
                    "rationale": d.get("rationale", ""),
                    "decision": "refused by curator",
                    "reason": f"{r.get('stage', '')}: {r.get('reason', '')}",
                }
                order.append(did)
        elif kind == "gate":
            decision = "accepted" if event.get("accepted") else "rejected"
            for did in event.get("deltas") or []:
                row = rows.setdefault(
                    str(did), {"iteration": event.get("iteration"), "id": str(did), "text": ""}
                )
                if str(did) not in order:
                    order.append(str(did))
                # a later gate (bisection of a failed batch) overrides an earlier one
                if row.get("decision") != "accepted":
                    row["decision"] = decision
                    row["reason"] = event.get("reason", "")
    return [rows[d] for d in dict.fromkeys(order)]


def read_playbook(directory: Path, root: Path) -> dict[str, Any]:
    """Everything the playbook page shows."""
    history, bad_history = read_jsonl(directory / HISTORY)
    log, bad_log = read_jsonl(directory / LOG)
    current = history[-1] if history else None
    report: Any = None
    if (directory / "report.json").is_file():
        try:
            report = json.loads(read_text(directory / "report.json"))
        except json.JSONDecodeError:
            report = "report.json is not valid JSON"
    plot = directory / "learning_curve.png"
    return {
        "path": directory.relative_to(root).as_posix(),
        "text": read_text(directory / "playbook.md"),
        "entries": _entries(current) if current else [],
        "versions": [
            {
                "key": str(v.get("hash", i)),
                "hash": v.get("hash"),
                "parent": v.get("parent"),
                "iteration": v.get("iteration"),
                "reason": v.get("reason"),
                "entries": len(_entries(v)),
            }
            for i, v in enumerate(history)
        ],
        "files": [p.relative_to(directory).as_posix() for p in _version_files(directory)],
        "deltas": _deltas(log),
        "checkpoints": [
            {k: e.get(k) for k in ("iteration", "hash", "reward", "se", "tokens_per_task")}
            for e in log
            if e.get("kind") == "checkpoint"
        ],
        "stop": next((e for e in reversed(log) if e.get("kind") == "stop"), None),
        "report": report,
        "plot": plot.relative_to(root).as_posix() if plot.is_file() else None,
        "unreadable": {"history": bad_history, "log": bad_log},
    }


def _version_files(directory: Path) -> list[Path]:
    found = [directory / "playbook.md", directory / "current.md"]
    sub = directory / "checkpoints"
    if sub.is_dir():
        found += sorted(sub.glob("*.md"))
    return [p for p in found if p.is_file()]


def _resolve_version(directory: Path, key: str) -> str:
    history, _ = read_jsonl(directory / HISTORY)
    for i, v in enumerate(history):
        if str(v.get("hash", i)) == key:
            return version_text(v)
    files = {p.relative_to(directory).as_posix(): p for p in _version_files(directory)}
    if key in files:
        return read_text(files[key])
    raise FileNotFoundError(f"no playbook version {key!r} (a version hash or a checkpoint file)")


def diff_versions(directory: Path, a: str, b: str) -> dict[str, Any]:
    """Unified diff of two versions (hashes from the history, or checkpoint file names)."""
    lines = difflib.unified_diff(
        _resolve_version(directory, a).splitlines(),
        _resolve_version(directory, b).splitlines(),
        fromfile=a,
        tofile=b,
        lineterm="",
    )
    return {"a": a, "b": b, "diff": list(lines)}
