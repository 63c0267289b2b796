"""`workgym serve-model`: the OpenAI protocol over real HTTP, driven by the `openai/` provider.

The model behind the server here is the tiny random-weight one (fast); test_smollm2.py runs the
same path with the real built-in model.
"""

from __future__ import annotations

import asyncio
import functools
import json
import tempfile
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("openai")

from serving import Served

import workgym as wg
from workgym.apps.serve.model_server import MAX_BODY_BYTES, build_app
from workgym.core.model import Sampling
from workgym.envs.toy.env import ToyShop
from workgym.models.hf import HFModel
from workgym.models.openai import OpenAIModel


@functools.cache
def tiny_prefilled() -> HFModel:
    from workgym.train.tiny import build_tiny

    path = build_tiny(Path(tempfile.mkdtemp(prefix="workgym-tiny-")) / "model", seed=0)
    return HFModel(f"hf/{path}", prefill='<tool_call>\n{"name": "', max_new_tokens=8)


@pytest.fixture(scope="module")
def served() -> Iterator[Served]:
    s = Served(build_app(tiny_prefilled(), model_id="tiny"))
    yield s
    s.stop()


def post(url: str, body: bytes) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_openai_provider_gets_tool_calls_usage_and_token_ids(served: Served) -> None:
    env = ToyShop()
    task = env.taskset.split("dev")[0]
    client = OpenAIModel("openai/tiny", base_url=served.url)
    messages = wg.Policy(client).render(env, task)
    specs = env.toolkit(task).specs
    done = asyncio.run(client.complete(messages, specs, Sampling(max_tokens=6, logprobs=True)))
    local = asyncio.run(tiny_prefilled().complete(messages, specs, Sampling(max_tokens=6)))
    assert done.message.tool_calls  # the prefill opened a call
    assert done.completion_token_ids == local.completion_token_ids  # greedy: same tokens
    assert done.prompt_token_ids == local.prompt_token_ids
    assert done.usage.prompt_tokens == len(local.prompt_token_ids or [])
    assert done.usage.completion_tokens == len(local.completion_token_ids or []) > 0
    assert done.logprobs == pytest.approx(local.logprobs, abs=1e-4)


def test_eval_runs_through_the_server(served: Served, tmp_path: Path) -> None:
    run = wg.eval(
        ToyShop(),
        "openai/tiny",
        base_url=served.url,
        split="dev",
        limit=2,
        out=tmp_path / "run",
        progress=False,
        sampling=Sampling(max_tokens=6),
    )
    episodes = list(run.episodes())
    assert len(episodes) == 2 and all(e.outcome != "error" for e in episodes)
    tool_turns = [m for e in episodes for m in e.messages if m.role == "tool"]
    assert tool_turns  # calls went back as tool results and the episodes went on


def test_requests_are_bounded_with_a_sentence_saying_what_to_change(served: Served) -> None:
    url = served.url + "/chat/completions"
    ok = {"model": "tiny", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 2}
    status, body = post(url, json.dumps({**ok, "max_tokens": 10**6}).encode())
    assert status == 400 and "max_tokens" in body["error"]["message"]
    status, body = post(url, json.dumps({**ok, "model": "other"}).encode())
    assert status == 404 and "'tiny'" in body["error"]["message"]
    huge = {**ok, "messages": [{"role": "user", "content": "x" * MAX_BODY_BYTES}]}
    status, body = post(url, json.dumps(huge).encode())
    assert status == 413 and "bytes" in body["error"]["message"]
    status, body = post(url, json.dumps(ok).encode())
    assert status == 200 and body["usage"]["completion_tokens"] <= 2
