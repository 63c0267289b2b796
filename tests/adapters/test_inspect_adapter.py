"""The Inspect adapter, run by `inspect eval` against a local chat server and by Inspect's
`eval()` with `mockllm` playing the same double; the log is read by Inspect's own reader and
served by `inspect view`. (`inspect eval --model mockllm/model` from the command line needs
tiktoken's encoding file for its token counts, which it downloads: not possible offline.)"""

from __future__ import annotations

import json
import socket
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

import workgym as wg
from adapters.adapters_harness import DOUBLE, ENV_ID, bin_path, run_cli
from workgym.envs.toy.env import ToyShop
from workgym.testing.chat_double import ScriptedChatServer, ScriptedReplies
from workgym.testing.scripted import get_scripted

pytest.importorskip("inspect_ai")

import inspect_ai
from inspect_ai.log import read_eval_log
from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessageAssistant,
    ModelOutput,
    ModelUsage,
    get_model,
)
from inspect_ai.tool import ToolCall

from workgym.adapters.inspect_adapter import workgym_task


def inspect_eval(log_dir: Path, model: str, *extra: str, env: dict[str, str] | None = None) -> Path:
    run_cli(
        [
            bin_path("inspect"),
            "eval",
            "workgym/workgym_task",
            "-T",
            f"env={ENV_ID}",
            "--model",
            model,
            "--log-dir",
            str(log_dir),
            "--display",
            "none",
            *extra,
        ],
        env=env,
    )
    (log,) = log_dir.glob("*.eval")
    return log


@pytest.mark.slow
def test_inspect_eval_gives_workgym_eval_rewards_and_flags(
    double: ScriptedChatServer,
    workgym_rewards: dict[str, float],
    workgym_flags: dict[str, list[str]],
    tmp_path: Path,
) -> None:
    log = inspect_eval(
        tmp_path,
        f"openai-api/{double.model_name}",
        "--model-base-url",
        double.base_url,
        env={"SCRIPTED_API_KEY": "unused"},
    )
    result = read_eval_log(str(log))
    assert result.status == "success" and result.samples is not None
    rewards = {str(s.id): s.scores["workgym_verdict"].value for s in result.samples}
    assert rewards == workgym_rewards
    flags = {
        str(s.id): sorted(s.scores["workgym_verdict"].metadata["flags"]) for s in result.samples
    }
    assert flags == workgym_flags  # the audit ran on the Inspect episodes too
    tools = {
        t.name for s in result.samples[:1] for e in s.events if e.event == "model" for t in e.tools
    }
    assert tools == {"list_items", "get_item", "submit_answer"}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def mockllm_playing(double: ScriptedReplies) -> Any:
    """mockllm's `custom_outputs`: the scripted double's next turn for each conversation, with
    usage given (mockllm would otherwise count tokens with tiktoken, which downloads)."""

    async def output(input: list[Any], tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
        seen = [wg.Message(role=m.role, content=m.text) for m in input]
        reply = await double.reply(seen)
        calls = [
            ToolCall(id=c.id, function=c.name, arguments=json.loads(c.arguments))
            for c in reply.tool_calls
        ]
        message = ChatMessageAssistant(content=reply.content, tool_calls=calls or None)
        usage = ModelUsage(input_tokens=0, output_tokens=0, total_tokens=0)
        stop = "tool_calls" if calls else "stop"
        choice = ChatCompletionChoice(message=message, stop_reason=stop)
        return ModelOutput(model="mockllm", choices=[choice], usage=usage)

    return output


@pytest.mark.slow
def test_mockllm_playing_the_double_gives_workgym_eval_rewards_and_the_log_opens_in_view(
    workgym_rewards: dict[str, float], tmp_path: Path
) -> None:
    double = ScriptedReplies(ToyShop(), get_scripted(DOUBLE.removeprefix("scripted/")))
    model = get_model("mockllm/model", custom_outputs=mockllm_playing(double))
    (result,) = inspect_ai.eval(
        workgym_task(env=ENV_ID), model=model, log_dir=str(tmp_path), display="none"
    )
    assert result.status == "success" and result.samples is not None
    rewards = {str(s.id): s.scores["workgym_verdict"].value for s in result.samples}
    assert rewards == workgym_rewards
    statuses = {s.scores["workgym_verdict"].metadata["status"] for s in result.samples}
    assert statuses == {"ok"}  # a wrong answer is status ok with reward 0
    (log,) = tmp_path.glob("*.eval")
    port = _free_port()
    view = subprocess.Popen(
        [bin_path("inspect"), "view", "start", "--log-dir", str(tmp_path), "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        listing = ""
        for _ in range(120):  # up to ~60 s for the viewer to come up
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/logs", timeout=2) as r:
                    listing = r.read().decode()
                break
            except OSError:
                time.sleep(0.5)
        assert log.name in listing
    finally:
        view.terminate()
        view.wait(timeout=20)
