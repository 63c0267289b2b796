"""Shared fixtures: tiny environments built in code, never downloaded."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator

import pytest

import workgym as wg
from workgym.core.loading import reset_user_trust
from workgym.envs.toy.env import ToyShop


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked `qwen15` (the 1.1 GB model) run only when asked for: `pytest -m qwen15`."""
    if "qwen15" in (config.option.markexpr or ""):
        return
    skip = pytest.mark.skip(reason="opt-in: pytest -m qwen15 (after make install-qwen15)")
    for item in items:
        if "qwen15" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session", autouse=True)
def _private_workgym_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Logs that live under $WORKGYM_HOME (looks, served attempts) stay inside the test session:
    attempt counts must not pile up across runs of the suite in the real home."""
    before = os.environ.get("WORKGYM_HOME")
    os.environ["WORKGYM_HOME"] = str(tmp_path_factory.mktemp("workgym-home"))
    yield
    if before is None:
        os.environ.pop("WORKGYM_HOME", None)
    else:
        os.environ["WORKGYM_HOME"] = before


@pytest.fixture(autouse=True)
def _no_trust_carries_over() -> Iterator[None]:
    """`--trust` and `--import` are per process in real use; in-process CLI tests would
    otherwise leave them on for every later test (the viewer's refusal tests saw exactly that)."""
    yield
    reset_user_trust()


@pytest.fixture(scope="session")
def toy() -> ToyShop:
    return ToyShop()


def call(name: str, /, call_id: str = "c0", **args: object) -> wg.ToolCall:
    return wg.ToolCall(id=call_id, name=name, arguments=json.dumps(args))


def turn(*calls: wg.ToolCall, text: str = "") -> wg.Message:
    return wg.Message(role="assistant", content=text, tool_calls=list(calls))
