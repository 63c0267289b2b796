"""`hf/<path>`: a local transformers model, with exact token ids and logprobs for every turn.

Trainers need to know which tokens the model produced and which the environment inserted, down to
the id. Re-rendering a conversation through the chat template does not give that: a tool call the
model wrote as `{"a":1}` comes back from the template as `{"a": 1}`, and a sampled token sequence
need not be the one the tokenizer would choose for the same text. So this provider never
re-tokenises what the model wrote. After a turn with tool calls it remembers the exact ids it saw
and produced (keyed by the tool-call ids it minted, which are unique), and the next prompt is
those ids followed by the rendered *new* messages only. Each turn's prompt therefore starts with
the previous prompt plus completion, token for token, and a trainer can lay the turns end to end.

Tool calls are parsed from Qwen2.5-style text: `<tool_call>{"name": ..., "arguments": {...}}
</tool_call>`. A block that is not valid JSON still becomes a call (named `invalid_tool_call`, the
raw text as its arguments), so the agent is told it erred instead of the text being dropped.

Generation is pluggable (`TokenGenerator`): local `model.generate` by default, or a server that
takes token ids (the vLLM server TRL starts) during training on a GPU.
"""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from workgym.core.messages import Message, ToolCall
from workgym.core.model import Completion, ConfigError, Sampling, Usage

if TYPE_CHECKING:
    from workgym.core.tools import ToolSpec

TOOL_CALL = re.compile(r"<tool_call>(.*?)</tool_call>", re.DOTALL)
INVALID_CALL = "invalid_tool_call"
CALL_END = "</tool_call>"
DEFAULT_MAX_NEW_TOKENS = 256
MODEL_META = "workgym.json"  # beside config.json: provider settings a model needs (prefill)


class TokenGenerator(Protocol):
    """Turns prompt token ids into completion ids and the log-probability of each of them."""

    def generate(
        self, prompt_ids: list[int], sampling: Sampling, max_new_tokens: int
    ) -> tuple[list[int], list[float]]: ...


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


def parse_reply(text: str) -> Message:
    """The assistant message in decoded completion text (special tokens already removed)."""
    calls: list[ToolCall] = []
    for block in TOOL_CALL.findall(text):
        raw = block.strip()
        try:
            obj = json.loads(raw)
        except ValueError:
            obj = None
        call_id = f"call_{uuid.uuid4().hex[:16]}"
        if isinstance(obj, dict) and isinstance(obj.get("name"), str):
            args = obj.get("arguments", {})
            arguments = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
            calls.append(ToolCall(id=call_id, name=obj["name"], arguments=arguments))
        else:
            calls.append(ToolCall(id=call_id, name=INVALID_CALL, arguments=raw))
    content = TOOL_CALL.sub("", text).strip() if calls else text.strip()
    return Message(role="assistant", content=content, tool_calls=calls)


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


class LocalGenerator:
    """`model.generate` on one prompt; logprobs of the sampled tokens under the sampling
    distribution (logits divided by the temperature, as TRL computes them)."""

    def __init__(self, model: Any, tokenizer: Any) -> None:
        self.model = model
        self.tokenizer = tokenizer

    def generate(
        self, prompt_ids: list[int], sampling: Sampling, max_new_tokens: int
    ) -> tuple[list[int], list[float]]:
        torch = _lib("torch")
        transformers = _lib("transformers")

        device = next(self.model.parameters()).device
        sample = sampling.temperature > 0
        config = transformers.GenerationConfig(
            max_new_tokens=max_new_tokens,
            do_sample=sample,
            temperature=sampling.temperature if sample else None,
            top_p=sampling.top_p if sample else None,
            top_k=0 if sample else None,
            eos_token_id=self.tokenizer.eos_token_id,
            pad_token_id=self.tokenizer.pad_token_id,
            return_dict_in_generate=True,
            output_logits=True,
            # A small model goes on talking after its call; the call is complete at its closing
            # tag, and everything after it would be ignored by the parser anyway.
            stop_strings=[CALL_END],
        )
        inputs = torch.tensor([prompt_ids], device=device)
        was_training = self.model.training
        self.model.eval()
        try:
            with torch.random.fork_rng(devices=[]), torch.no_grad():
                if sampling.seed is not None:
                    torch.manual_seed(sampling.seed)
                out = self.model.generate(
                    inputs,
                    attention_mask=torch.ones_like(inputs),
                    generation_config=config,
                    tokenizer=self.tokenizer,
                )
        finally:
            if was_training:
                self.model.train()
        completion = out.sequences[0, len(prompt_ids) :].tolist()
        scale = sampling.temperature if sample else 1.0
        logprobs = []
        for step, token in enumerate(completion):
            logits = out.logits[step][0].float() / scale
            logprobs.append(float(torch.log_softmax(logits, dim=-1)[token]))
        return completion, logprobs


class HFModel:
    """A local transformers chat model (`hf/<dir>`), loaded from disk only, never from a hub."""

    def __init__(
        self,
        name: str,
        *,
        model: Any = None,
        tokenizer: Any = None,
        generator: TokenGenerator | None = None,
        max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS,
        prefill: str | None = None,
    ) -> None:
        path = name.removeprefix("hf/")
        self.name = f"hf/{path}"
        if model is None or tokenizer is None:
            model, tokenizer = load_local(path)
        if prefill is None:
            prefill = model_prefill(Path(path).expanduser())
        if getattr(tokenizer, "chat_template", None) is None:
            raise ConfigError(
                f"{self.name}: the tokenizer has no chat template; save one with the model "
                "(tokenizer.chat_template = ...; tokenizer.save_pretrained(dir))"
            )
        self.model = model
        self.tokenizer = tokenizer
        self.chat = TokenChat(tokenizer)
        self.generator: TokenGenerator = generator or LocalGenerator(model, tokenizer)
        self.max_new_tokens = max_new_tokens
        self.prefill = prefill
        self.prefill_ids = self.chat.encode(prefill) if prefill else []

    def __repr__(self) -> str:
        return f"HFModel({self.name!r})"

    async def complete(
        self, messages: list[Message], tools: list[ToolSpec], sampling: Sampling
    ) -> Completion:
        prompt = self.chat.prompt_ids(messages, tools) + self.prefill_ids
        budget = sampling.max_tokens or self.max_new_tokens
        if sampling.seed is not None:  # each turn its own stream, reproducible from the episode's
            sampling = sampling.with_seed(turn_seed(sampling.seed, len(messages)))
        completion, logprobs = self.generator.generate(prompt, sampling, budget)
        reply = parse_reply(self.prefill + self.chat.decode(completion))
        self.chat.remember(reply, len(messages) + 1, prompt + completion)
        finished = bool(completion) and completion[-1] == self.chat.eos_id
        return Completion(
            message=reply,
            usage=Usage(prompt_tokens=len(prompt), completion_tokens=len(completion)),
            finish_reason="stop" if finished else "length",
            prompt_token_ids=prompt,
            completion_token_ids=completion,
            logprobs=logprobs,
        )


def turn_seed(episode_seed: int, n_messages: int) -> int:
    """The seed of one turn: the episode's seed mixed with how far the conversation is.

    Re-seeding every turn with the episode's own seed restarts the same random stream, so
    sampled calls repeat within an episode; GRPO then has nothing to explore.
    """
    digest = hashlib.sha256(f"{episode_seed}|turn|{n_messages}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


def model_prefill(root: Path) -> str:
    """The assistant prefill a model directory declares in `workgym.json` (`""`: none).

    Small models that never start a tool call on their own do so reliably when the turn is
    forced to begin with the call's opening text. The prefill goes into the prompt as inserted
    tokens (mask 0), so the model is never trained on text it did not write.
    """
    meta = root / MODEL_META
    if not meta.is_file():
        return ""
    try:
        value = json.loads(meta.read_text(encoding="utf-8")).get("prefill", "")
    except (ValueError, AttributeError) as exc:
        raise ConfigError(f"{meta}: not a JSON object ({exc}); fix or delete it") from exc
    if not isinstance(value, str):
        raise ConfigError(f"{meta}: 'prefill' must be a string")
    return value


def _lib(name: str) -> Any:
    """Import an optional heavy library ([train] extra) where it is used, typed as Any."""
    import importlib

    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise ConfigError(
            f"{name} is not installed ({exc}): install the [train] extra, torch first: "
            "pip install torch==2.13.0 && pip install 'workgym[train]'"
        ) from exc


def load_local(path: str) -> tuple[Any, Any]:
    """Model and tokenizer from a local directory (`save_pretrained` output)."""
    root = Path(path).expanduser()
    if not (root / "config.json").is_file():
        raise ConfigError(
            f"hf/{path}: no transformers model directory there (no config.json); pass a "
            "directory written by save_pretrained, or build a tiny one with "
            "`python -m workgym.train.tiny DIR`"
        )
    transformers = _lib("transformers")
    tokenizer = transformers.AutoTokenizer.from_pretrained(root, local_files_only=True)
    model = transformers.AutoModelForCausalLM.from_pretrained(root, local_files_only=True)
    model.eval()
    return model, tokenizer
