"""`llamacpp/<name or path.gguf>`: a GGUF model run by llama.cpp in this process (inference).

transformers de-quantises a GGUF to float32 and runs it with torch: exact, and what training
needs, but slow and large on CPU (the 1.5B: ~100 s to load, 7-8.7 GB, 0.5-1.5 tok/s on two busy
cores, issue 34). llama.cpp runs the quantised file as it is. The prebuilt `xllamacpp` wheel
(MIT, no compiler needed) embeds llama.cpp's own server engine: parallel slots with continuous
batching, prompt-prefix caching per slot, per-request seeds, and the log-probability of each
sampled token. This provider drives it in process (`Server.handle_completions`, blocking and
thread-safe, called from a thread pool with one worker per slot).

Same prompts and same call parsing as `hf/`: the template workgym ships for a built-in name
(`hf_template.TEMPLATES`) or the GGUF's own, rendered with jinja2 (`chat_render`), the built-in
model's prefill forced at the start of a tool-offered turn, its stop texts, and `hf_calls` to
read the reply, so a model's score does not depend on the runtime's prompt. What differs: the
prompt is text that llama.cpp tokenises (so `prompt_token_ids` is not reported: this runtime is
for inference and evaluation; trainers use `hf/`, decision 0086), and a token's logprob is
llama.cpp's probability of it under the model's distribution before temperature.

The engine also listens on a random loopback port (its HTTP front end, unused here); nothing
outside this machine can reach it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import math
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workgym.core.errors import ConfigError, ModelError
from workgym.core.messages import Message
from workgym.core.model import Completion, Sampling, Usage
from workgym.models.chat_render import render
from workgym.models.hf import to_template_messages, turn_seed
from workgym.models.hf_builtin import BuiltinModel, builtin, gguf_file
from workgym.models.hf_calls import malformed, parse_reply
from workgym.models.hf_template import TEMPLATES
from workgym.models.hf_threads import idle_cores

if TYPE_CHECKING:
    from workgym.core.tools import ToolSpec

log = logging.getLogger("workgym.models.llamacpp")
THREADS_ENV = "WORKGYM_LLAMACPP_THREADS"
DEFAULT_MAX_NEW_TOKENS = 256
INSTALL = "pip install 'workgym[llamacpp]'"
AUTO = "auto"
# llguidance's JSON options (top-level "x-guidance" of a schema): one space after ":" and ",",
# no free whitespace, so a constrained reply cannot stall in a run of blanks.
COMPACT_JSON = {"whitespace_flexible": False, "item_separator": ", ", "key_separator": ": "}


@dataclass(frozen=True)
class GGUFChat:
    """What rendering needs from a GGUF: its chat template and its BOS/EOS token texts."""

    template: str
    bos: str
    eos: str


def gguf_chat(path: Path) -> GGUFChat:
    """The chat template and special-token texts stored in a GGUF file's metadata."""
    try:
        import gguf
    except ImportError as exc:
        raise ConfigError(f"reading {path.name}: needs gguf ({exc}): {INSTALL}") from exc
    try:
        reader = gguf.GGUFReader(str(path))
    except (ValueError, OSError) as exc:
        raise ConfigError(f"{path}: not a readable GGUF file ({exc})") from exc
    fields = reader.fields

    def text(key: str) -> str:
        field = fields.get(key)
        return "" if field is None else bytes(field.parts[field.data[0]]).decode("utf-8")

    def token(key: str) -> str:
        field, tokens = fields.get(key), fields.get("tokenizer.ggml.tokens")
        if field is None or tokens is None:
            return ""
        index = int(field.parts[field.data[0]][0])
        return bytes(tokens.parts[tokens.data[index]]).decode("utf-8", "replace")

    template = text("tokenizer.chat_template")
    if not template:
        raise ConfigError(f"{path}: the GGUF has no chat template (tokenizer.chat_template)")
    return GGUFChat(
        template, token("tokenizer.ggml.bos_token_id"), token("tokenizer.ggml.eos_token_id")
    )


def resolve(name: str) -> tuple[Path, BuiltinModel | None]:
    """The GGUF behind `llamacpp/<name>`: a built-in name's (joined, verified) or a file path."""
    spec = builtin(name)
    if spec is not None:
        return gguf_file(spec), spec
    path = Path(name).expanduser()
    if path.suffix != ".gguf" or not path.is_file():
        raise ConfigError(
            f"llamacpp/{name}: no such GGUF file; write llamacpp/<path.gguf> or a built-in name "
            "(llamacpp/qwen2.5-coder-0.5b, llamacpp/qwen2.5-coder-1.5b, llamacpp/smollm2-135m)"
        )
    return path, None


class LlamaCppModel:
    """A GGUF model served by llama.cpp in process; `slots` requests decode together.

    `prefill`/`stop` default to the built-in model's (none for a file path); `threads` to the
    cores the load average leaves idle (`WORKGYM_LLAMACPP_THREADS` overrides); each slot holds
    `context` tokens.
    """

    def __init__(
        self,
        name: str,
        *,
        slots: int = 8,
        context: int = 4096,
        threads: int | None = None,
        prefill: str | None = AUTO,
        stop: tuple[str, ...] | None = None,
        max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS,
    ) -> None:
        path = name.removeprefix("llamacpp/")
        self.name = f"llamacpp/{path}"
        self.path, spec = resolve(path)
        if spec is not None:
            self.chat = GGUFChat(TEMPLATES[spec.template], "", "<|im_end|>")
        else:
            self.chat = gguf_chat(self.path)
        if prefill == AUTO:
            prefill = spec.prefill if spec is not None else None
        self.prefill = prefill or ""
        self.stop = stop if stop is not None else (spec.stop if spec is not None else ())
        self.max_new_tokens = max_new_tokens
        self.slots = slots
        self.threads = threads or int(os.environ.get(THREADS_ENV, 0) or idle_cores())
        started = time.perf_counter()
        self.server = _start(self.path, slots=slots, context=context, threads=self.threads)
        self.load_seconds = time.perf_counter() - started
        self._pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=slots, thread_name_prefix="workgym-llamacpp"
        )

    def __repr__(self) -> str:
        return f"LlamaCppModel({self.name!r})"

    def prompt(self, messages: list[Message], tools: list[ToolSpec]) -> str:
        """The prompt text: the rendered conversation, then the prefill when tools are offered."""
        text = render(
            self.chat.template,
            to_template_messages(messages),
            [t.to_openai() for t in tools] or None,
            generation=True,
            bos_token=self.chat.bos,
            eos_token=self.chat.eos,
        )
        return text + (self.prefill if tools else "")

    def request(
        self, prompt: str, sampling: Sampling, budget: int, stop: list[str]
    ) -> dict[str, Any]:
        """The llama.cpp completion request: plain temperature sampling, like `hf/`, constrained
        to `sampling.json_schema` when one is set."""
        body: dict[str, Any] = {
            "prompt": prompt,
            "n_predict": budget,
            "temperature": sampling.temperature,
            "top_p": sampling.top_p if sampling.top_p is not None else 1.0,
            "top_k": 0,
            "min_p": 0.0,
            "repeat_penalty": 1.0,
            "n_probs": 1,
            "cache_prompt": True,
            "stop": stop,
        }
        if sampling.seed is not None:
            body["seed"] = sampling.seed & 0xFFFF_FFFF
        if sampling.json_schema is not None:
            # llama.cpp compiles it with llguidance, whose default lets whitespace run between
            # tokens: the 0.5B filled a 400-token budget with spaces after `"target_ids": [],`.
            body["json_schema"] = {**sampling.json_schema, "x-guidance": COMPACT_JSON}
        return body

    async def generate(
        self, messages: list[Message], tools: list[ToolSpec], sampling: Sampling
    ) -> dict[str, Any]:
        """llama.cpp's raw answer for one turn; its text starts after the prefill."""
        prompt = self.prompt(messages, tools)
        if sampling.seed is not None:
            turn = sum(1 for m in messages if m.role == "assistant")
            sampling = sampling.with_seed(turn_seed(sampling.seed, turn))
        budget = sampling.max_tokens or self.max_new_tokens
        body = self.request(prompt, sampling, budget, list(self.stop) if tools else [])
        loop = asyncio.get_running_loop()
        result = await loop.run_in_executor(self._pool, self.server.handle_completions, body)
        if not isinstance(result, dict) or not result.get("choices"):
            raise ModelError(f"{self.name}: llama.cpp answered {str(result)[:300]}")
        return result

    def to_completion(self, result: dict[str, Any], tools: list[ToolSpec]) -> Completion:
        """The turn's Completion: the reply read from prefill + text, ids and logprobs."""
        choice = result["choices"][0]
        forced = self.prefill if tools else ""
        reply = parse_reply(forced + choice.get("text", ""), [t.name for t in tools])
        bad = malformed(reply)
        if bad:
            log.info("%s wrote %d malformed call(s): %r", self.name, len(bad), bad[0].arguments)
        content = (choice.get("logprobs") or {}).get("content") or []
        ids = [int(item["id"]) for item in content]
        logprobs = [float(item.get("logprob", -math.inf)) for item in content]
        usage = result.get("usage") or {}
        cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0
        return Completion(
            message=reply,
            usage=Usage(
                prompt_tokens=int(usage.get("prompt_tokens", 0)),
                completion_tokens=int(usage.get("completion_tokens", len(ids))),
                cached_tokens=int(cached),
            ),
            finish_reason=choice.get("finish_reason") or None,
            completion_token_ids=ids or None,
            logprobs=logprobs or None,
        )

    async def complete(
        self, messages: list[Message], tools: list[ToolSpec], sampling: Sampling
    ) -> Completion:
        return self.to_completion(await self.generate(messages, tools, sampling), tools)

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


def _start(path: Path, *, slots: int, context: int, threads: int) -> Any:
    try:
        import xllamacpp
    except ImportError as exc:
        raise ConfigError(f"llamacpp/ models need the xllamacpp wheel ({exc}): {INSTALL}") from exc
    params = xllamacpp.CommonParams()
    params.model.path = str(path)
    params.n_parallel = slots
    params.n_ctx = slots * context
    # One KV cache shared by the slots: a request may use the room others leave, so one long
    # warehouse episode (a 5,800-token prompt) is served instead of refused at `context`, while
    # the memory stays what `slots * context` costs (decision 0178).
    params.kv_unified = True
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.warmup = False
    params.verbosity = 0  # llama.cpp's info log (dozens of lines a request) stays off
    try:
        return xllamacpp.Server(params)
    except Exception as exc:  # the engine reports a bad file as a bare RuntimeError
        raise ConfigError(f"llama.cpp could not load {path}: {exc}") from exc
