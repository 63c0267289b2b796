"""`hf/<path>`: a local transformers model, with exact token ids and logprobs for every turn.

Trainers need to know which tokens the model produced and which the environment inserted, down to
the id. Re-rendering a conversation through the chat template does not give that: a tool call the
model wrote as `{"a":1}` comes back from the template as `{"a": 1}`, and a sampled token sequence
need not be the one the tokenizer would choose for the same text. So this provider never
re-tokenises what the model wrote. After a turn with tool calls it remembers the exact ids it saw
and produced (keyed by the tool-call ids it minted, which are unique), and the next prompt is
those ids followed by the rendered *new* messages only. Each turn's prompt therefore starts with
the previous prompt plus completion, token for token, and a trainer can lay the turns end to end.

Tool calls are parsed from Qwen2.5-style text (`hf_calls`). Built-in names (`hf/smollm2-135m`,
`hf_builtin`) resolve to a cached copy of a model shipped in a wheel, with a chat template that
renders tools (`hf_template`) and a *prefill*: text forced at the start of the assistant turn
when tools are offered (`<tool_call>\n{"name": "`), which a small model needs to call tools at
all. The prefill's ids are appended to the turn's `prompt_token_ids`, not to its completion: the
policy did not sample them, so a trainer must treat them as context (mask 0, no logprob). Laid
end to end, they sit between the previous turn and the model's tokens, exactly as the model saw
them, and the reply's text (and tool call) is read from prefill plus completion.

Each turn samples with its own seed, derived from the episode's seed and the turn's index
(`turn_seed`): reusing the episode seed on every turn would replay the same random stream and
repeat sampled calls within an episode. Generation is pluggable (`TokenGenerator`): by default a
worker thread (`hf_batching.BatchedGenerator`) running one continuous batch that concurrent
episodes' turns join and leave, so the event loop never blocks; or a server that takes token
ids (the vLLM server TRL starts) during training on a GPU.
"""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import json
import logging
import warnings
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from workgym.core.errors import ConfigError
from workgym.core.messages import Message
from workgym.core.model import Completion, Sampling, Usage
from workgym.models.hf_batching import BatchedGenerator, LocalGenerator
from workgym.models.hf_calls import INVALID_CALL, malformed, parse_reply
from workgym.models.hf_template import TEMPLATES, ignores_tools
from workgym.models.hf_threads import configure_cpu_threads
from workgym.models.placement import Placement, announce, choose, placement_of

if TYPE_CHECKING:
    from workgym.core.tools import ToolSpec

__all__ = [
    "INVALID_CALL",
    "HFModel",
    "LocalGenerator",
    "TokenChat",
    "TokenGenerator",
    "load_local",
    "parse_reply",
    "turn_seed",
]

DEFAULT_MAX_NEW_TOKENS = 256
log = logging.getLogger("workgym.models.hf")
AUTO_PREFILL = "auto"  # the built-in model's prefill (or the directory's workgym.json), else none
MODEL_META = "workgym.json"  # beside config.json: the prefill and stop texts a directory declares


class TokenGenerator(Protocol):
    """Turns prompt token ids into completion ids and the log-probability of each of them.

    A generator may also offer `async agenerate(...)` with the same arguments; the provider then
    awaits it (the batching generator does), otherwise `generate` is called in the event loop.
    """

    def generate(
        self, prompt_ids: list[int], sampling: Sampling, max_new_tokens: int
    ) -> tuple[list[int], list[float]]: ...


def turn_seed(seed: int, turn: int) -> int:
    """The seed of one turn of an episode: reproducible, different for every turn."""
    digest = hashlib.blake2b(f"workgym-turn:{seed}:{turn}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") & 0x7FFF_FFFF_FFFF_FFFF


def to_template_messages(messages: list[Message]) -> list[dict[str, Any]]:
    """Messages in the dict form chat templates read (tool-call arguments as objects)."""
    out: list[dict[str, Any]] = []
    for m in messages:
        item: dict[str, Any] = {"role": m.role, "content": m.content}
        if m.tool_calls:
            item["tool_calls"] = [
                {
                    "type": "function",
                    "id": c.id,
                    "function": {"name": c.name, "arguments": _arguments(c.arguments)},
                }
                for c in m.tool_calls
            ]
        if m.role == "tool":
            item["name"] = m.name or ""
            if m.tool_call_id is not None:
                item["tool_call_id"] = m.tool_call_id
        out.append(item)
    return out


def _arguments(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


class TokenChat:
    """Renders conversations to ids with the tokenizer's chat template, extending remembered ids.

    `prompt_ids` returns the ids of the conversation plus the assistant header. When the last
    assistant message is one this object produced (`remember`), the ids it saw and produced are
    reused verbatim and only the messages after it are rendered.
    """

    def __init__(self, tokenizer: Any, *, max_remembered: int = 10_000) -> None:
        self.tokenizer = tokenizer
        self.eos_text: str = tokenizer.eos_token
        self.eos_id: int = tokenizer.eos_token_id
        self.max_remembered = max_remembered
        self._seen: OrderedDict[str, tuple[int, list[int]]] = OrderedDict()

    def render(self, messages: list[Message], tools: list[ToolSpec], *, generation: bool) -> str:
        text: str = self.tokenizer.apply_chat_template(
            to_template_messages(messages),
            tools=[t.to_openai() for t in tools] or None,
            tokenize=False,
            add_generation_prompt=generation,
        )
        return text

    def encode(self, text: str) -> list[int]:
        ids: list[int] = self.tokenizer(text, add_special_tokens=False)["input_ids"]
        return ids

    def prompt_ids(self, messages: list[Message], tools: list[ToolSpec]) -> list[int]:
        full = self.render(messages, tools, generation=True)
        for index in range(len(messages) - 1, -1, -1):
            message = messages[index]
            if message.role != "assistant":
                continue
            if not message.tool_calls:
                break
            remembered = self._seen.pop(message.tool_calls[0].id, None)
            if remembered is None or remembered[0] != index + 1:
                break
            head = self.render(messages[: index + 1], tools, generation=False)
            cut = head.rfind(self.eos_text)
            if cut < 0 or not full.startswith(head[: cut + len(self.eos_text)]):
                break  # the template does not extend conversations; fall back to re-rendering
            ids = list(remembered[1])
            if not ids or ids[-1] != self.eos_id:
                ids.append(
                    self.eos_id
                )  # a turn cut off by max tokens: close it as the template does
            return ids + self.encode(full[cut + len(self.eos_text) :])
        return self.encode(full)

    def remember(self, reply: Message, n_messages: int, ids: list[int]) -> None:
        """Keep the ids of a turn that will continue (one with tool calls) for the next prompt."""
        if not reply.tool_calls:
            return
        self._seen[reply.tool_calls[0].id] = (n_messages, list(ids))
        while len(self._seen) > self.max_remembered:
            self._seen.popitem(last=False)

    def decode(self, ids: list[int]) -> str:
        text: str = self.tokenizer.decode(ids, skip_special_tokens=True)
        return text


class HFModel:
    """A local transformers chat model: `hf/<dir>`, or a built-in name such as `hf/smollm2-135m`.

    Loaded from disk only, never from a hub. `prefill` is the text forced at the start of every
    assistant turn that is offered tools; "auto" (the default) means the built-in model's, none for
    other models. `stop` texts end such a turn early (default: the built-in model's) where the
    generator accepts a `stop=` keyword (the built-in generators do). `device` and `dtype`
    override the process's `--device`/`--dtype` (`workgym.models.placement`) when this loads the
    weights; `placement` says where they are either way.
    """

    def __init__(
        self,
        name: str,
        *,
        model: Any = None,
        tokenizer: Any = None,
        generator: TokenGenerator | None = None,
        max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS,
        prefill: str | None = AUTO_PREFILL,
        stop: tuple[str, ...] | None = None,
        device: str | None = None,
        dtype: str | None = None,
    ) -> None:
        from workgym.models.hf_builtin import builtin

        path = name.removeprefix("hf/")
        self.name = f"hf/{path}"
        spec = builtin(path)
        if model is None or tokenizer is None:
            model, tokenizer = load_local(path, choose(device, dtype))
        self.placement: Placement = placement_of(model)
        announce(self.name, self.placement)
        if getattr(tokenizer, "chat_template", None) is None:
            raise ConfigError(
                f"{self.name}: the tokenizer has no chat template; save one with the model "
                "(tokenizer.chat_template = ...; tokenizer.save_pretrained(dir))"
            )
        meta = {} if spec is not None else model_meta(Path(path).expanduser())
        if prefill == AUTO_PREFILL:
            prefill = spec.prefill if spec is not None else meta.get("prefill")
        self.prefill: str | None = prefill or None
        if stop is None:
            stop = spec.stop if spec is not None else tuple(meta.get("stop", ()))
        self.stop = stop
        if ignores_tools(tokenizer):
            warnings.warn(
                f"{self.name}: its chat template ignores tools=, so the model is never shown the "
                "tools it may call; give the tokenizer a template that renders them "
                "(docs/models.md)",
                stacklevel=2,
            )
        self.model = model
        self.tokenizer = tokenizer
        self.chat = TokenChat(tokenizer)
        self.prefill_ids: list[int] = self.chat.encode(self.prefill) if self.prefill else []
        self.generator: TokenGenerator = generator or BatchedGenerator(model, tokenizer)
        # A generator that takes no stop texts (the vLLM one) runs each turn to its budget.
        self.takes_stop = "stop" in inspect.signature(self.generator.generate).parameters
        self.max_new_tokens = max_new_tokens

    def __repr__(self) -> str:
        return f"HFModel({self.name!r})"

    async def complete(
        self, messages: list[Message], tools: list[ToolSpec], sampling: Sampling
    ) -> Completion:
        forced = self.prefill_ids if tools else []
        prompt = self.chat.prompt_ids(messages, tools) + forced
        budget = sampling.max_tokens or self.max_new_tokens
        if sampling.seed is not None:
            turn = sum(1 for m in messages if m.role == "assistant")
            sampling = sampling.with_seed(turn_seed(sampling.seed, turn))
        agenerate = getattr(self.generator, "agenerate", None)
        extra = {"stop": self.stop} if self.stop and tools and self.takes_stop else {}
        if agenerate is not None:
            completion, logprobs = await agenerate(prompt, sampling, budget, **extra)
        else:
            completion, logprobs = self.generator.generate(prompt, sampling, budget, **extra)
        reply = parse_reply(self.chat.decode(forced + completion), [t.name for t in tools])
        bad = malformed(reply)
        if bad:
            log.info(
                "%s wrote %d malformed tool call(s), returned to the agent as tool errors: %r",
                self.name,
                len(bad),
                bad[0].arguments[:200],
            )
        self.chat.remember(reply, len(messages) + 1, prompt + completion)
        finished = bool(completion) and (
            completion[-1] == self.chat.eos_id or len(completion) < budget
        )
        return Completion(
            message=reply,
            usage=Usage(prompt_tokens=len(prompt), completion_tokens=len(completion)),
            finish_reason="stop" if finished else "length",
            prompt_token_ids=prompt,
            completion_token_ids=completion,
            logprobs=logprobs,
        )


def model_meta(root: Path) -> dict[str, Any]:
    """The prefill and stop texts a model directory declares in workgym.json ({} when none).

    A checkpoint trained from a built-in model is a plain directory; without this file it would
    be played with no prefill and no stop, unlike the model it started from, and a certificate
    comparing the two would measure the prompt format instead of the training.
    """
    path = root / MODEL_META
    if not path.is_file():
        return {}
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise ConfigError(f"{path}: not JSON ({exc}); fix or delete it") from exc
    if not isinstance(meta, dict) or not isinstance(meta.get("prefill", ""), str):
        raise ConfigError(f"{path}: expected {{'prefill': text, 'stop': [texts]}}")
    return meta


def optional_lib(name: str) -> Any:
    """Import an optional heavy library ([train] extra) where it is used, typed as Any."""
    import importlib

    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise ConfigError(
            f"{name} is not installed ({exc}): install the [train] extra, torch first: "
            "pip install torch==2.13.0 && pip install 'workgym[train]'"
        ) from exc


def load_local(
    path: str, placement: Placement | None = None, *, training: bool = False
) -> tuple[Any, Any]:
    """Model and tokenizer from a built-in name or a local directory (`save_pretrained` output).

    The weights go to `placement` (default: `placement.choose()`, the best device). On an
    accelerator they are read with a device map, shard by shard onto the device, rather than
    whole into CPU memory first; a built-in GGUF is de-quantised on the CPU once, into the cache
    directory this reads. `training=True`: float32 weights unless a dtype was asked for.
    """
    from workgym.models.hf_builtin import builtin, ensure_cached

    placement = placement or choose(training=training)  # an unusable --device fails first
    spec = builtin(path)
    root = ensure_cached(spec) if spec is not None else Path(path).expanduser()
    if not (root / "config.json").is_file():
        raise ConfigError(
            f"hf/{path}: no transformers model directory there (no config.json); pass a "
            "directory written by save_pretrained, a built-in name (hf/smollm2-135m), or build "
            "a tiny one with `python -m workgym.train.tiny DIR`"
        )
    transformers = optional_lib("transformers")
    torch = optional_lib("torch")
    tokenizer = transformers.AutoTokenizer.from_pretrained(root, local_files_only=True)
    kind = placement.device.partition(":")[0]
    mapped = kind in ("cuda", "mps") and importlib.util.find_spec("accelerate") is not None
    model = transformers.AutoModelForCausalLM.from_pretrained(
        root,
        local_files_only=True,
        dtype=placement.torch_dtype(torch),
        **({"device_map": placement.device} if mapped else {}),
    )
    if not mapped and kind != "cpu":
        model.to(placement.device)
    model.eval()
    if spec is not None:
        tokenizer.chat_template = TEMPLATES[spec.template]
    if next(model.parameters()).device.type == "cpu":
        configure_cpu_threads()
    return model, tokenizer
