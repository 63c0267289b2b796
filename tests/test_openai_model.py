"""OpenAIModel against a real local HTTP server (FakeChatServer) through the real openai SDK."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections.abc import Iterator
from typing import Any

import pytest

from fakes.chat_server import (
    DEFAULT_TEXT,
    FakeChatServer,
    error,
    malformed_tool_args,
    raw,
    slow,
    text,
    tool_calls,
    truncated_json,
    with_logprobs,
)
from workgym.core.errors import ConfigError, ModelError
from workgym.core.messages import Message, ToolCall, assistant, system, user
from workgym.core.model import Completion, Model, Sampling
from workgym.core.tools import ToolSpec
from workgym.models.openai import OpenAIModel

LOOKUP = ToolSpec(
    name="lookup",
    description="Look up a city.",
    parameters={
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
        "additionalProperties": False,
    },
)
HELLO = [system("be brief"), user("hello")]


@pytest.fixture
def server() -> Iterator[FakeChatServer]:
    with FakeChatServer() as fake:
        yield fake


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """The developer's own key, endpoint or proxy must never leak into a test."""
    for var in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID"):
        monkeypatch.delenv(var, raising=False)
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):  # keep requests on 127.0.0.1
        monkeypatch.delenv(var, raising=False)
        monkeypatch.delenv(var.lower(), raising=False)


def model_for(server: FakeChatServer, **kwargs: Any) -> OpenAIModel:
    kwargs.setdefault("backoff_s", 0.01)
    kwargs.setdefault("timeout_s", 5.0)
    return OpenAIModel("fake-model", base_url=server.base_url, **kwargs)


def complete(
    model: OpenAIModel,
    messages: list[Message] = HELLO,
    tools: list[ToolSpec] | None = None,
    sampling: Sampling | None = None,
) -> Completion:
    async def go() -> Completion:
        try:
            return await model.complete(messages, tools or [], sampling or Sampling())
        finally:
            await model.aclose()

    return asyncio.run(go())


def test_plain_text_reply_and_usage(server: FakeChatServer) -> None:
    server.script(text("Paris.", prompt_tokens=21, completion_tokens=3, cached_tokens=16))
    model = model_for(server)
    assert isinstance(model, Model)
    assert model.name == "openai/fake-model"
    out = complete(model, sampling=Sampling(temperature=0.7, top_p=0.9, max_tokens=64, seed=7))
    assert out.message == assistant("Paris.")
    assert (out.usage.prompt_tokens, out.usage.completion_tokens) == (21, 3)
    assert out.usage.cached_tokens == 16
    assert out.finish_reason == "stop"
    assert out.retries == 0
    assert out.logprobs is None and out.completion_token_ids is None
    sent = server.requests[0]
    assert sent["model"] == "fake-model"
    assert sent["messages"] == [m.to_openai() for m in HELLO]
    assert (sent["temperature"], sent["top_p"], sent["max_tokens"], sent["seed"]) == (
        0.7,
        0.9,
        64,
        7,
    )
    assert "tools" not in sent and "logprobs" not in sent
    headers = {k.lower(): v for k, v in server.request_headers[0].items()}
    assert headers["authorization"] == "Bearer EMPTY"  # loopback server, no key given


def test_none_content_becomes_empty_text(server: FakeChatServer) -> None:
    server.script(text(None))
    assert complete(model_for(server)).message.content == ""


def test_two_tool_calls_in_one_turn(server: FakeChatServer) -> None:
    server.script(
        tool_calls(("lookup", {"city": "Paris"}, "call_a"), ("lookup", {"city": "Rome"}, None))
    )
    out = complete(model_for(server), tools=[LOOKUP])
    assert out.finish_reason == "tool_calls"
    assert out.message.content == ""
    assert out.message.tool_calls == [
        ToolCall(id="call_a", name="lookup", arguments='{"city": "Paris"}'),
        ToolCall(id="call_1", name="lookup", arguments='{"city": "Rome"}'),  # id generated
    ]


def test_tools_and_tool_history_sent_in_wire_shape(server: FakeChatServer) -> None:
    call = ToolCall(id="call_a", name="lookup", arguments='{"city": "Paris"}')
    history = [
        *HELLO,
        assistant(tool_calls=[call]),
        Message(role="tool", content="2.1M people", tool_call_id="call_a", name="lookup"),
    ]
    complete(model_for(server), messages=history, tools=[LOOKUP])
    sent = server.requests[0]
    assert sent["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "lookup",
                "description": "Look up a city.",
                "parameters": LOOKUP.parameters,
            },
        }
    ]
    assert sent["messages"][2]["tool_calls"] == [
        {
            "id": "call_a",
            "type": "function",
            "function": {"name": "lookup", "arguments": '{"city": "Paris"}'},
        }
    ]
    assert sent["messages"][3] == {
        "role": "tool",
        "content": "2.1M people",
        "tool_call_id": "call_a",
        "name": "lookup",
    }


def test_429_then_success_honours_retry_after(server: FakeChatServer) -> None:
    server.script(error(429, "slow down", retry_after="0.3"), text("ok"))
    started = time.perf_counter()
    out = complete(model_for(server, backoff_s=0.001))
    assert time.perf_counter() - started >= 0.3  # the server's wait, not our tiny backoff
    assert out.message.content == "ok"
    assert out.retries == 1
    assert len(server.requests) == 2


def test_retry_after_as_http_date(server: FakeChatServer) -> None:
    server.script(error(429, retry_after="Wed, 21 Oct 2015 07:28:00 GMT"), text("ok"))
    started = time.perf_counter()
    out = complete(model_for(server))
    assert (out.message.content, out.retries) == ("ok", 1)
    assert time.perf_counter() - started < 1.0  # a date in the past means: retry now


def test_500_twice_then_success(server: FakeChatServer) -> None:
    server.script(error(500), error(503), text("ok"))
    out = complete(model_for(server))
    assert (out.message.content, out.retries) == ("ok", 2)


def test_persistent_500_gives_up_retryable(server: FakeChatServer) -> None:
    server.script(*[error(500, "engine died")] * 5)
    with pytest.raises(ModelError) as info:
        complete(model_for(server, max_retries=2))
    assert info.value.retryable is True
    assert "gave up after 2 retries" in str(info.value)
    assert "engine died" in str(info.value)
    assert len(server.requests) == 3  # first try + 2 retries


def test_slow_reply_times_out_then_retry_succeeds(server: FakeChatServer) -> None:
    server.script(slow(text("too late"), 2.0), text("ok"))
    started = time.perf_counter()
    out = complete(model_for(server, timeout_s=0.3))
    assert (out.message.content, out.retries) == ("ok", 1)
    assert time.perf_counter() - started < 1.5


def test_connection_refused_is_retryable() -> None:
    with socket.socket() as sock:  # a port that nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    model = OpenAIModel("m", base_url=f"http://127.0.0.1:{port}/v1", max_retries=1, backoff_s=0.01)
    with pytest.raises(ModelError) as info:
        complete(model)
    assert info.value.retryable is True
    assert "could not connect" in str(info.value)


def test_malformed_tool_arguments_pass_through_raw(server: FakeChatServer) -> None:
    server.script(malformed_tool_args("lookup", '{"city": "Par'))
    out = complete(model_for(server), tools=[LOOKUP])
    assert out.message.tool_calls == [
        ToolCall(id="call_fake_0", name="lookup", arguments='{"city": "Par')
    ]


@pytest.mark.parametrize("on_choice", [False, True])
def test_logprobs_and_token_ids(server: FakeChatServer, on_choice: bool) -> None:
    server.script(
        with_logprobs(
            "hi there",
            [-0.25, -1.5],
            token_ids=[101, 102],
            prompt_token_ids=[1, 2, 3],
            prompt_ids_on_choice=on_choice,
        )
    )
    model = model_for(server, extra_body={"return_token_ids": True})
    out = complete(model, sampling=Sampling(logprobs=True))
    assert out.logprobs == [-0.25, -1.5]
    assert out.completion_token_ids == [101, 102]
    assert out.prompt_token_ids == [1, 2, 3]
    sent = server.requests[0]
    assert sent["logprobs"] is True
    assert sent["return_token_ids"] is True


def test_no_choices_is_retryable_model_error(server: FakeChatServer) -> None:
    server.script(raw({"id": "x", "object": "chat.completion", "choices": []}))
    with pytest.raises(ModelError) as info:
        complete(model_for(server, max_retries=0))
    assert info.value.retryable is True
    assert "no choices" in str(info.value)
    server.script(raw({"id": "x", "object": "chat.completion", "choices": []}), text("back"))
    out = complete(model_for(server))  # retried like any other fault of the server
    assert out.message.content == "back" and out.retries == 1


def test_a_truncated_json_reply_is_retried(server: FakeChatServer) -> None:
    server.script(truncated_json(), text("whole"))
    out = complete(model_for(server))
    assert out.message.content == "whole" and out.retries == 1
    server.script(truncated_json())
    with pytest.raises(ModelError, match="not valid JSON") as info:
        complete(model_for(server, max_retries=0))
    assert info.value.retryable is True


@pytest.mark.parametrize("status", [401, 403])
def test_rejected_key_is_not_retried(server: FakeChatServer, status: int) -> None:
    server.script(error(status, "Incorrect API key provided"))
    with pytest.raises(ModelError) as info:
        complete(model_for(server, api_key="sk-wrong"))
    assert info.value.retryable is False
    message = str(info.value)
    assert "rejected the API key" in message and "set OPENAI_API_KEY or --api-key" in message
    assert "sk-wrong" not in message
    assert len(server.requests) == 1


def test_unknown_model_is_not_retried(server: FakeChatServer) -> None:
    server.script(error(404, "The model `fake-model` does not exist."))
    with pytest.raises(ModelError) as info:
        complete(model_for(server))
    assert info.value.retryable is False
    assert str(info.value).startswith(
        f"openai/fake-model: model 'fake-model' not found at {server.base_url}"
    )
    assert f"GET {server.base_url}/models" in str(info.value)
    assert len(server.requests) == 1


def test_bad_request_carries_server_message(server: FakeChatServer) -> None:
    vllm_style = {
        "object": "error",
        "message": "max_tokens is too large",
        "type": "BadRequest",
        "param": None,
        "code": 400,
    }
    server.script(raw(vllm_style, status=400))
    with pytest.raises(ModelError) as info:
        complete(model_for(server))
    assert info.value.retryable is False
    assert "max_tokens is too large" in str(info.value)


def test_models_endpoint_lists_served_models(server: FakeChatServer) -> None:
    from openai import OpenAI

    client = OpenAI(base_url=server.base_url, api_key="EMPTY", max_retries=0)
    assert [m.id for m in client.models.list()] == ["fake-model"]
    client.close()


def test_default_reply_when_script_is_empty(server: FakeChatServer) -> None:
    assert complete(model_for(server)).message.content == DEFAULT_TEXT


def test_reusable_across_event_loops(server: FakeChatServer) -> None:
    model = model_for(server)
    replies = [asyncio.run(model.complete(HELLO, [], Sampling())) for _ in range(2)]
    assert [r.message.content for r in replies] == [DEFAULT_TEXT, DEFAULT_TEXT]


def test_no_endpoint_and_no_key_says_what_to_do() -> None:
    with pytest.raises(ConfigError) as info:
        OpenAIModel("gpt-4o")
    message = str(info.value)
    assert "--base-url" in message and "OPENAI_BASE_URL" in message
    assert "OPENAI_API_KEY" in message and "\n" not in message


def test_remote_base_url_without_key_is_refused() -> None:
    with pytest.raises(ConfigError, match="OPENAI_API_KEY or pass --api-key"):
        OpenAIModel("llama", base_url="https://inference.example.com/v1")


def test_base_url_and_key_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "https://inference.example.com/v1/")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    model = OpenAIModel("llama")
    assert model.base_url == "https://inference.example.com/v1"
    assert model.name == "openai/llama"


def test_key_alone_means_api_openai_com(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    assert OpenAIModel("gpt-4o").base_url == "https://api.openai.com/v1"


@pytest.mark.parametrize("url", ["http://localhost:8000/v1", "http://[::1]:8000/v1"])
def test_loopback_hosts_need_no_key(url: str) -> None:
    assert OpenAIModel("m", base_url=url).base_url == url


def test_base_url_without_scheme_is_refused() -> None:
    with pytest.raises(ConfigError, match="http://"):
        OpenAIModel("m", base_url="localhost:8000/v1")


def test_import_workgym_does_not_import_the_sdk() -> None:
    import subprocess
    import sys

    code = "import sys, workgym, workgym.models.openai; print('openai' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout.strip().lower()) is False


def test_a_json_schema_goes_out_as_response_format_and_only_when_set(
    server: FakeChatServer,
) -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}
    server.script(text('{"a": "x"}'), text("free"))
    model = model_for(server)
    complete(model, sampling=Sampling(json_schema=schema))
    complete(model)
    constrained, free = server.requests
    assert constrained["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "reply", "schema": schema},
    }
    assert "response_format" not in free
