from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fakes.chat_server import FakeChatServer, malformed_tool_args, text, tool_calls
from workgym.apps.cli.main import app
from workgym.envs.toy.env import ToyShop

runner = CliRunner()


def wg(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "workgym", *args], capture_output=True, text=True, cwd=cwd
    )


def test_envs_lists_the_toy() -> None:
    result = runner.invoke(app, ["envs"])
    assert result.exit_code == 0 and "workgym/toy-shop" in result.output


def test_check_passes_on_the_toy(tmp_path: Path) -> None:
    result = runner.invoke(
        app,
        ["check", "workgym/toy-shop", "--out", str(tmp_path), "--no-progress",
         "--admission-dir", str(tmp_path / "admission")],  # not runs/check of the checkout
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "check.json").read_text())
    assert report["passed"] and len(report["items"]) == 7
    assert "data files match the tasks" in [i["name"] for i in report["items"]]
    assert re.search(r"next: \S*workgym eval workgym/toy-shop", result.output), result.output


def test_eval_against_a_real_http_server_end_to_end(tmp_path: Path, toy: ToyShop) -> None:
    task = toy.taskset.split("dev")[0]  # --limit 1 takes the first dev task
    with FakeChatServer() as server:
        server.script(
            malformed_tool_args("list_items", '{"category": "'),
            tool_calls(("list_items", {"category": "tea"})),
            tool_calls(("submit_answer", {"answer": task.answer})),
        )
        result = runner.invoke(
            app,
            [
                "eval",
                "workgym/toy-shop",
                "--model",
                "openai/fake-7b",
                "--base-url",
                server.base_url,
                "--split",
                "dev",
                "--limit",
                "1",
                "--out",
                str(tmp_path / "r"),
                "--no-progress",
                "--seed",
                "5",
            ],
        )
        requests = list(server.requests)
    assert result.exit_code == 0, result.output
    ep = json.loads((tmp_path / "r" / "episodes.jsonl").read_text())
    assert ep["verdict"]["success"] and ep["turns"] == 3
    assert [c["status"] for c in ep["tool_calls"]] == ["invalid_arguments", "ok", "ok"]
    assert ep["usage"]["calls"] == 3 and ep["usage"]["prompt_tokens"] == 30
    # what went over the wire: tools, the seed, and the tool error fed back to the model
    assert requests[0]["model"] == "fake-7b" and requests[0]["seed"] == ep["seed"]
    assert {t["function"]["name"] for t in requests[0]["tools"]} == {
        "list_items",
        "get_item",
        "submit_answer",
    }
    assert requests[1]["messages"][-1]["role"] == "tool"
    assert "not valid JSON" in requests[1]["messages"][-1]["content"]
    assert str(task.answer) not in json.dumps(requests[0])


def test_summary_of_a_run(tmp_path: Path) -> None:
    runner.invoke(
        app,
        [
            "eval",
            "workgym/toy-shop",
            "--model",
            "scripted/oracle",
            "--out",
            str(tmp_path / "r"),
            "--no-progress",
        ],
    )
    result = runner.invoke(app, ["summary", str(tmp_path / "r")])
    assert result.exit_code == 0 and "1.000" in result.output


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["eval", "nobody/nothing", "--model", "scripted/null"], "unknown environment"),
        (["eval", "workgym/toy-shop", "--model", "llama"], "has no provider"),
        (["eval", "workgym/toy-shop", "--model", "vertex/gemini"], "unknown model provider"),
        (["eval", "workgym/toy-shop", "--model", "openai/x"], "needs an endpoint"),
        (
            [
                "eval",
                "workgym/toy-shop",
                "--model",
                "openai/x",
                "--base-url",
                "https://api.example.com/v1",
            ],
            "needs an API key",
        ),
        (["eval", "workgym/toy-shop", "--model", "scripted/nope"], "unknown test double"),
        (["summary", "/nonexistent/run"], "not a run directory"),
    ],
)
def test_bad_input_is_one_line_that_says_what_to_do(
    args: list[str], fragment: str, tmp_path: Path
) -> None:
    env = {k: v for k, v in __import__("os").environ.items() if not k.startswith("OPENAI_")}
    result = subprocess.run(
        [sys.executable, "-m", "workgym", *args],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
    )
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and fragment in lines[0], result.stderr


def test_unreachable_endpoint_is_recorded_as_errors_not_a_crash(
    tmp_path: Path, toy: ToyShop
) -> None:
    from workgym import eval as wg_eval
    from workgym.models.openai import OpenAIModel

    model = OpenAIModel("x", base_url="http://127.0.0.1:9/v1", max_retries=0)
    run = wg_eval(toy, model, limit=1, out=tmp_path / "r", progress=False, retry_backoff_s=0)
    assert run.summary().errors == 1
    ep = json.loads((tmp_path / "r" / "episodes.jsonl").read_text())
    assert ep["outcome"] == "error" and "connect" in ep["error"].lower()


def test_text_reply_model(tmp_path: Path) -> None:
    with FakeChatServer() as server:
        server.script(text("I think 42"))
        result = runner.invoke(
            app,
            [
                "eval",
                "workgym/toy-shop",
                "--model",
                "openai/m",
                "--base-url",
                server.base_url,
                "--limit",
                "1",
                "--out",
                str(tmp_path / "r"),
                "--no-progress",
            ],
        )
    assert result.exit_code == 0
    ep = json.loads((tmp_path / "r" / "episodes.jsonl").read_text())
    assert ep["verdict"]["status"] == "no_answer"
