"""Viewer fixtures: a PATH with two real runs of the same tasks, and a live server on it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from viewer_support import (
    Served,
    live_viewer,
    make_certificate,
    make_playbook,
    make_run,
    mixed_script,
)

import workgym as wg


@pytest.fixture(scope="session")
def viewer_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """PATH for the viewer: two runs of the same tasks (mixed and oracle) under runs/."""
    root = tmp_path_factory.mktemp("viewer")
    make_run(root / "runs", "mixed", wg.TaskScript("scripted/viewer-mixed", mixed_script))
    make_run(root / "runs", "oracle", "scripted/oracle")
    make_playbook(root / "train" / "pb")
    make_certificate(root / "certs" / "toy", str(root / "runs" / "mixed"), "runs/oracle")
    (root / "secret.txt").write_text("not for the browser")
    return root


@pytest.fixture(scope="session")
def served(viewer_root: Path) -> Iterator[Served]:
    """The real app on a real uvicorn server in a thread, bound to 127.0.0.1."""
    with live_viewer(viewer_root) as served:
        yield served
