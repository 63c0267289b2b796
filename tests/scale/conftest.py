"""Served environments count attempts in a log under $WORKGYM_HOME: keep it per test session."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest


@pytest.fixture(scope="session", autouse=True)
def _private_workgym_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    before = os.environ.get("WORKGYM_HOME")
    os.environ["WORKGYM_HOME"] = str(tmp_path_factory.mktemp("workgym-home"))
    yield
    if before is None:
        os.environ.pop("WORKGYM_HOME", None)
    else:
        os.environ["WORKGYM_HOME"] = before
