"""The served tree: what lives under PATH, and the one gate every requested path goes through.

The browser names things by paths relative to PATH. `Workspace.resolve` is the only way such a
path becomes a filesystem path, and it refuses anything that resolves outside PATH (`..`,
absolute paths, symlinks that point out), so no route can be talked into reading elsewhere.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from workgym.core import datafiles
from workgym.core.errors import ConfigError

RUN_MARKER = "run.json"
ENV_MARKER = "manifest.json"
PLAYBOOK_MARKER = "playbook.md"
CERTIFICATE_MARKER = "certificate.json"
SKIP_DIRS = {".git", ".venv", "venv", "node_modules", "__pycache__", ".mypy_cache", ".ruff_cache"}
MAX_DEPTH = 8
MAX_MANIFEST = 10_000_000  # characters of a manifest.json read for the listing


class OutsideRoot(ValueError):
    """A requested path is not under the served directory."""


class Found(BaseModel):
    """What a scan of PATH found, as paths relative to PATH (forward slashes)."""

    runs: list[str] = []
    environments: list[dict[str, Any]] = []
    playbooks: list[str] = []
    certificates: list[str] = []


class Workspace:
    """PATH, resolved once; every lookup is checked against it."""

    def __init__(self, root: str | Path) -> None:
        path = Path(root)
        if not path.is_dir():
            raise ConfigError(f"{path} is not a directory; pass the folder that holds your runs")
        self.root = path.resolve()

    def resolve(self, rel: str, *, must_exist: bool = True) -> Path:
        """`rel` (relative to PATH) as an absolute path, or OutsideRoot when it leaves PATH."""
        if not rel or rel in (".", "/"):
            return self.root
        if "\x00" in rel or Path(rel).is_absolute() or rel.startswith(("/", "\\")):
            raise OutsideRoot(f"{rel!r} is not a path relative to the served directory")
        target = (self.root / rel).resolve()
        if not target.is_relative_to(self.root):
            raise OutsideRoot(f"{rel!r} is outside the served directory")
        if must_exist and not target.exists():
            raise FileNotFoundError(f"nothing at {rel!r} under the served directory")
        return target

    def relative(self, path: Path) -> str:
        rel = path.resolve().relative_to(self.root).as_posix()
        return "" if rel == "." else rel

    def run_dir(self, rel: str) -> Path:
        path = self.resolve(rel)
        if not (path / RUN_MARKER).is_file():
            raise FileNotFoundError(f"{rel!r} is not a run directory (no {RUN_MARKER})")
        return path

    def scan(self) -> Found:
        """Walk PATH (not following symlinks out of it) and list what the viewer can show."""
        found = Found()
        for current, dirs, files in os.walk(self.root, followlinks=False):
            here = Path(current)
            depth = len(here.relative_to(self.root).parts)
            dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
            if depth >= MAX_DEPTH:
                dirs[:] = []
            names = set(files)
            rel = self.relative(here)
            if RUN_MARKER in names:
                found.runs.append(rel)
            if ENV_MARKER in names:
                found.environments.append(_manifest(here, rel))
            if PLAYBOOK_MARKER in names:
                found.playbooks.append(rel)
            if CERTIFICATE_MARKER in names:
                found.certificates.append(rel)
        return found


def _manifest(path: Path, rel: str) -> dict[str, Any]:
    try:
        data = json.loads(datafiles.read_text(path / ENV_MARKER, limit=MAX_MANIFEST))
    except (OSError, ConfigError, json.JSONDecodeError) as exc:
        return {"path": rel, "error": f"unreadable manifest.json ({exc})"}
    if not isinstance(data, dict):
        return {"path": rel, "error": "manifest.json is not an object"}
    keep = ("id", "version", "tasks", "content_hash", "format")
    return {"path": rel, **{k: data.get(k) for k in keep}}
