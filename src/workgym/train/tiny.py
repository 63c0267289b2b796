"""A tiny chat model built locally, for tests, benchmarks and CPU smoke runs of training.

Real checkpoints cannot be downloaded here (and tests must never need a hub), yet the training
path has to be exercised end to end with a real tokenizer, a real chat template and real weight
updates. So this module builds one from nothing in about a second: a byte-level BPE tokenizer
trained in memory with `tokenizers` (every byte is encodable, vocabulary ~512), the Qwen2.5 chat
template (byte for byte the one TRL recognises, so TRL parses its tool calls), and a random-weight
Qwen2 model with a few thousand parameters. The result is a directory usable as `hf/<dir>`.

    python -m workgym.train.tiny runs/tiny-model
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from workgym.models.hf import optional_lib

SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
# Like Qwen2.5: added (never split) but not special, so they survive decoding.
ADDED_TOKENS = ["<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>"]

# The Qwen2.5 chat template, unchanged: TRL matches the template text exactly to pick its
# tool-call parser, and a test checks this copy against TRL's own.
QWEN25_CHAT_TEMPLATE = (
    "{%- if tools %}\n"
    "    {{- '<|im_start|>system\\n' }}\n"
    "    {%- if messages[0]['role'] == 'system' %}\n"
    "        {{- messages[0]['content'] }}\n"
    "    {%- else %}\n"
    "        {{- 'You are Qwen, created by Alibaba Cloud. You are"
    " a helpful assistant.' }}\n"
    "    {%- endif %}\n"
    '    {{- "\\n\\n# Tools\\n\\nYou may call one or more functions t'
    "o assist with the user query.\\n\\nYou are provided with funct"
    'ion signatures within <tools></tools> XML tags:\\n<tools>" }}'
    "\n"
    "    {%- for tool in tools %}\n"
    '        {{- "\\n" }}\n'
    "        {{- tool | tojson }}\n"
    "    {%- endfor %}\n"
    '    {{- "\\n</tools>\\n\\nFor each function call, return a json'
    " object with function name and arguments within <tool_call><"
    '/tool_call> XML tags:\\n<tool_call>\\n{\\"name\\": <function-nam'
    'e>, \\"arguments\\": <args-json-object>}\\n</tool_call><|im_end'
    '|>\\n" }}\n'
    "{%- else %}\n"
    "    {%- if messages[0]['role'] == 'system' %}\n"
    "        {{- '<|im_start|>system\\n' + messages[0]['content'] "
    "+ '<|im_end|>\\n' }}\n"
    "    {%- else %}\n"
    "        {{- '<|im_start|>system\\nYou are Qwen, created by Al"
    "ibaba Cloud. You are a helpful assistant.<|im_end|>\\n' }}\n"
    "    {%- endif %}\n"
    "{%- endif %}\n"
    "{%- for message in messages %}\n"
    '    {%- if (message.role == "user") or (message.role == "sys'
    'tem" and not loop.first) or (message.role == "assistant" and'
    " not message.tool_calls) %}\n"
    "        {{- '<|im_start|>' + message.role + '\\n' + message.c"
    "ontent + '<|im_end|>' + '\\n' }}\n"
    '    {%- elif message.role == "assistant" %}\n'
    "        {{- '<|im_start|>' + message.role }}\n"
    "        {%- if message.content %}\n"
    "            {{- '\\n' + message.content }}\n"
    "        {%- endif %}\n"
    "        {%- for tool_call in message.tool_calls %}\n"
    "            {%- if tool_call.function is defined %}\n"
    "                {%- set tool_call = tool_call.function %}\n"
    "            {%- endif %}\n"
    '            {{- \'\\n<tool_call>\\n{"name": "\' }}\n'
    "            {{- tool_call.name }}\n"
    '            {{- \'", "arguments": \' }}\n'
    "            {{- tool_call.arguments | tojson }}\n"
    "            {{- '}\\n</tool_call>' }}\n"
    "        {%- endfor %}\n"
    "        {{- '<|im_end|>\\n' }}\n"
    '    {%- elif message.role == "tool" %}\n'
    "        {%- if (loop.index0 == 0) or (messages[loop.index0 -"
    ' 1].role != "tool") %}\n'
    "            {{- '<|im_start|>user' }}\n"
    "        {%- endif %}\n"
    "        {{- '\\n<tool_response>\\n' }}\n"
    "        {{- message.content }}\n"
    "        {{- '\\n</tool_response>' }}\n"
    "        {%- if loop.last or (messages[loop.index0 + 1].role "
    '!= "tool") %}\n'
    "            {{- '<|im_end|>\\n' }}\n"
    "        {%- endif %}\n"
    "    {%- endif %}\n"
    "{%- endfor %}\n"
    "{%- if add_generation_prompt %}\n"
    "    {{- '<|im_start|>assistant\\n' }}\n"
    "{%- endif %}\n"
)

_VOCABULARY = (
    "the a an and or of to in on for with is are was be this that what how many which when "
    "price stock item items category total sum count answer number cents units shop catalog "
    "tea coffee spice cocoa assam sencha oolong arabica robusta saffron clove pepper "
    "vanilla yes no true false left right up down red green blue first last one two three "
    "four five list_items get_item submit_answer name arguments error unknown tool result "
    "ok done "
)
_WORDS = _VOCABULARY.split()


def _corpus(n_lines: int = 400) -> list[str]:
    """Deterministic training text shaped like what the model will read and write."""
    import random

    rng = random.Random(0)
    lines = []
    for i in range(n_lines):
        words = " ".join(rng.choice(_WORDS) for _ in range(rng.randrange(3, 12)))
        number = rng.randrange(0, 5000)
        name = rng.choice(["list_items", "get_item", "submit_answer"])
        args = json.dumps({rng.choice(["name", "category", "answer"]): rng.choice(_WORDS)})
        lines.append(
            f"<|im_start|>user\n{words.capitalize()}? {number}<|im_end|>\n"
            f"<|im_start|>assistant\n<tool_call>\n"
            f'{{"name": "{name}", "arguments": {args}}}\n</tool_call><|im_end|>\n'
            f'<|im_start|>user\n<tool_response>\n{{"result": {number + i}}}\n'
            f"</tool_response><|im_end|>\n"
        )
    return lines


def build_tokenizer(vocab_size: int = 512) -> Any:
    """A byte-level BPE tokenizer with the Qwen2.5 chat template (a PreTrainedTokenizerFast)."""
    tk = optional_lib("tokenizers")
    transformers = optional_lib("transformers")
    pre_tokenizers = tk.pre_tokenizers

    core = tk.Tokenizer(tk.models.BPE())
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = tk.decoders.ByteLevel()
    trainer = tk.trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    core.train_from_iterator(_corpus(), trainer)
    tokenizer = transformers.PreTrainedTokenizerFast(
        tokenizer_object=core,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        additional_special_tokens=["<|im_start|>"],
    )
    tokenizer.add_tokens(ADDED_TOKENS)
    tokenizer.chat_template = QWEN25_CHAT_TEMPLATE
    tokenizer.padding_side = "left"
    return tokenizer


def build_tiny(
    out: str | Path,
    *,
    hidden_size: int = 32,
    num_layers: int = 2,
    vocab_size: int = 512,
    seed: int = 0,
) -> Path:
    """Write a random-weight Qwen2 chat model and its tokenizer to `out`; return the path.

    Never touches the network. `hidden_size` must be a multiple of 8 (4 heads, 2 KV heads).
    """
    if hidden_size % 8 or not 8 <= hidden_size <= 1024:
        raise ValueError("hidden_size must be a multiple of 8 between 8 and 1024")
    torch = optional_lib("torch")
    transformers = optional_lib("transformers")

    tokenizer = build_tokenizer(vocab_size)
    eos = tokenizer.convert_tokens_to_ids("<|im_end|>")
    pad = tokenizer.convert_tokens_to_ids("<|endoftext|>")
    config = transformers.Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        intermediate_size=hidden_size * 2,
        num_hidden_layers=num_layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=4096,
        tie_word_embeddings=True,
        eos_token_id=eos,
        pad_token_id=pad,
        bos_token_id=None,
    )
    torch.manual_seed(seed)
    model = transformers.Qwen2ForCausalLM(config)
    model.generation_config = transformers.GenerationConfig(eos_token_id=eos, pad_token_id=pad)
    path = Path(out)
    path.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        raise SystemExit("usage: python -m workgym.train.tiny OUT_DIR")
    from workgym.core.errors import ConfigError

    try:
        path = build_tiny(args[0])
    except ConfigError as exc:
        raise SystemExit(f"error: {exc}") from None
    print(f"tiny model: {path}\nnext: workgym eval workgym/toy-shop --model hf/{path} --limit 2")


if __name__ == "__main__":
    main()
