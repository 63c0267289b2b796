"""Shared fixtures: tiny environments built in code, never downloaded."""

from __future__ import annotations

import json

import pytest

import workgym as wg
from workgym.envs.toy.env import ToyShop


@pytest.fixture(scope="session")
def toy() -> ToyShop:
    return ToyShop()


def call(name: str, /, call_id: str = "c0", **args: object) -> wg.ToolCall:
    return wg.ToolCall(id=call_id, name=name, arguments=json.dumps(args))


def turn(*calls: wg.ToolCall, text: str = "") -> wg.Message:
    return wg.Message(role="assistant", content=text, tool_calls=list(calls))
