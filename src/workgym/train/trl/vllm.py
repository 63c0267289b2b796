"""Generate from token ids on a vLLM server (`trl vllm-serve`), for training on GPUs.

The `hf/` provider decides the prompt ids (so multi-turn sequences stay exact); this generator
only sends them to the server's `/v1/completions` endpoint with `return_token_ids` and gets back
the completion ids and their logprobs. TRL keeps the server's weights in sync with the trained
model (`use_vllm=True, vllm_mode="server"`) before each rollout.

Plain `urllib` keeps this free of extra dependencies; one blocking request per model turn is
what the episode loop asks for anyway.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

from workgym.core.errors import ConfigError, ModelError
from workgym.core.model import Sampling


class VLLMTokenGenerator:
    """`TokenGenerator` over HTTP: prompt ids in, completion ids and logprobs out."""

    def __init__(self, base_url: str, *, timeout_s: float = 600.0, model: str | None = None):
        if not base_url.startswith(("http://", "https://")):
            raise ConfigError(
                f"--vllm-url {base_url!r} must start with http://, e.g. http://127.0.0.1:8000 "
                "(the address `trl vllm-serve` prints)"
            )
        self.base_url = base_url.rstrip("/").removesuffix("/v1")
        self.timeout_s = timeout_s
        self._model = model

    def _request(self, path: str, body: dict[str, Any] | None = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self.base_url + path, data=data, headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as exc:
            said = exc.read().decode(errors="replace")[:300]
            raise ModelError(f"vLLM server {self.base_url}{path}: HTTP {exc.code}: {said}") from exc
        except (urllib.error.URLError, TimeoutError, OSError) as exc:
            raise ModelError(
                f"vLLM server {self.base_url} unreachable ({exc}); start it with "
                "`trl vllm-serve --model <model>` and pass its address as --vllm-url"
            ) from exc

    @property
    def model(self) -> str:
        if self._model is None:
            listing = self._request("/v1/models")
            self._model = str(listing["data"][0]["id"])
        return self._model

    def generate(
        self, prompt_ids: list[int], sampling: Sampling, max_new_tokens: int
    ) -> tuple[list[int], list[float]]:
        body: dict[str, Any] = {
            "model": self.model,
            "prompt": [prompt_ids],
            "max_tokens": max_new_tokens,
            "temperature": sampling.temperature,
            "top_p": sampling.top_p if sampling.top_p is not None else 1.0,
            "logprobs": 0,
            "return_token_ids": True,
            "return_tokens_as_token_ids": True,
            "skip_special_tokens": False,
        }
        if sampling.seed is not None:
            body["seed"] = sampling.seed
        reply = self._request("/v1/completions", body)
        try:
            choice = reply["choices"][0]
            ids = [int(t) for t in choice["token_ids"]]
            logprobs = [float(x) for x in choice["logprobs"]["token_logprobs"]]
        except (KeyError, IndexError, TypeError, ValueError) as exc:
            raise ModelError(
                f"vLLM server {self.base_url}: reply without token ids or logprobs ({exc}); "
                "use a vLLM version that supports return_token_ids"
            ) from exc
        if len(logprobs) != len(ids):
            raise ModelError(f"vLLM server returned {len(ids)} ids but {len(logprobs)} logprobs")
        return ids, logprobs


def server_generator(base_url: str) -> Any:
    """A generator factory for `WorkgymRollout(generator_factory=...)`."""

    def factory(trainer: Any) -> VLLMTokenGenerator:
        return VLLMTokenGenerator(base_url)

    return factory
