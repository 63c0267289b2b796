"""`workgym serve --protocol openenv` speaks OpenEnv's message shapes (no OpenEnv install needed
here; `test_openenv_adapter.py` drives it with OpenEnv's own client)."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from workgym.adapters.extras import MissingExtra, require
from workgym.apps.serve.server import build_app
from workgym.envs.toy.env import ToyShop


def test_reset_step_state_close_and_errors(toy: ToyShop) -> None:
    app = build_app(toy, token="t", protocol="openenv")
    task = toy.taskset.split("train")[2]
    with TestClient(app) as client, client.websocket_connect("/ws") as ws:  # no token: OpenEnv
        ws.send_text(json.dumps({"type": "reset", "data": {"task_id": task.id}}))
        reply = json.loads(ws.receive_text())
        assert reply["type"] == "observation" and reply["data"]["done"] is False
        assert reply["data"]["observation"]["task_id"] == task.id
        call = {"id": "s", "function": {"name": "submit_answer", "arguments": '{"answer": -1}'}}
        ws.send_text(json.dumps({"type": "step", "data": {"tool_calls": [call]}}))
        step = json.loads(ws.receive_text())["data"]
        assert step["done"] is True and step["reward"] == 0.0
        ws.send_text(json.dumps({"type": "state"}))
        assert json.loads(ws.receive_text())["data"]["step_count"] == 1
        ws.send_text(json.dumps({"type": "step", "data": {"content": "again"}}))
        error = json.loads(ws.receive_text())
        assert error["type"] == "error" and "reset first" in error["data"]["message"]
        ws.send_text(json.dumps({"type": "reset", "data": {"split": "test"}}))
        assert "sealed" in json.loads(ws.receive_text())["data"]["message"]
        ws.send_text(json.dumps({"type": "dance"}))
        assert json.loads(ws.receive_text())["data"]["code"] == "UNKNOWN_TYPE"
        ws.send_text(json.dumps({"type": "close"}))


def test_workgym_protocol_still_needs_the_token_and_unknown_protocols_are_refused(
    toy: ToyShop,
) -> None:
    with TestClient(build_app(toy, token="t")) as client:
        assert client.get("/info").status_code == 401
    with pytest.raises(ValueError, match="unknown protocol"):
        build_app(toy, token="t", protocol="grpc")


def test_missing_extra_names_the_install_line() -> None:
    with pytest.raises(MissingExtra, match=r"pip install 'workgym\[gymnasium\]'"):
        require("no_such_module_for_workgym", "gymnasium")


def test_cli_refuses_openenv_protocol_off_loopback_and_unknown_protocols() -> None:
    from typer.testing import CliRunner

    from workgym.apps.cli.main import app

    runner = CliRunner()
    args = ["serve", "workgym/toy-shop", "--protocol", "openenv", "--host", "0.0.0.0"]
    result = runner.invoke(app, args)
    assert result.exit_code != 0 and "carries no token" in result.output
    result = runner.invoke(app, ["serve", "workgym/toy-shop", "--protocol", "grpc"])
    assert result.exit_code != 0 and "use workgym or openenv" in result.output
