"""Chat templates that render tools, tool calls and tool results, and a check for ones that don't.

Many small chat models ship a plain ChatML template: it ignores `tools=`, drops an assistant
message's `tool_calls` and renders tool results under a `tool` role the model never saw in
training. Such a model cannot know which tools exist, so every episode of a tool-using
environment fails for a reason that has nothing to do with the model's ability. `TEMPLATES`
holds templates workgym ships for built-in models; `ignores_tools` detects the problem for any
other model so the provider can say so instead of silently scoring zero.

`chatml-tools` is Qwen2.5's tool format on ChatML (tools listed as JSON in the system turn,
calls in `<tool_call>` blocks, results in `<tool_response>` blocks of a user turn) plus one
worked example of a call built from the first offered tool: measured on SmolLM2-135M, the
format description alone gave no calls at all, while the example plus a forced start of the call
(see `HFModel` prefill) gave well-formed calls.
"""

from __future__ import annotations

from typing import Any

CHATML_TOOLS = """\
{%- set default_system = 'You are a helpful AI assistant named SmolLM, trained by Hugging Face' %}
{%- if messages and messages[0]['role'] == 'system' %}
    {%- set system = messages[0]['content'] %}
    {%- set rest = messages[1:] %}
{%- else %}
    {%- set system = default_system %}
    {%- set rest = messages %}
{%- endif %}
{{- '<|im_start|>system\\n' + system }}
{%- if tools %}
    {{- '\\n\\n# Tools\\n\\nYou may call one or more functions to assist with the user query.' }}
    {{- '\\n\\nYou are provided with function signatures within <tools></tools> XML tags:' }}
    {{- '\\n<tools>' }}
    {%- for tool in tools %}
        {{- '\\n' + (tool | tojson) }}
    {%- endfor %}
    {{- '\\n</tools>\\n\\nFor each function call, return a json object with function name and' }}
    {{- ' arguments within <tool_call></tool_call> XML tags:\\n<tool_call>\\n' }}
    {{- '{"name": <function-name>, "arguments": <args-json-object>}\\n</tool_call>' }}
    {%- set first = tools[0]['function'] if 'function' in tools[0] else tools[0] %}
    {%- set props = (first.get('parameters') or {}).get('properties') or {} %}
    {{- '\\n\\nFor example, to call ' + first['name'] + ':\\n<tool_call>\\n{"name": "' }}
    {{- first['name'] + '", "arguments": {' }}
    {%- for key in props %}
        {{- ('' if loop.first else ', ') + (key | tojson) + ': "..."' }}
    {%- endfor %}
    {{- '}}\\n</tool_call>' }}
{%- endif %}
{{- '<|im_end|>\\n' }}
{%- for message in rest %}
    {%- if message['role'] == 'assistant' %}
        {{- '<|im_start|>assistant\\n' + (message['content'] or '') }}
        {%- for call in message.get('tool_calls') or [] %}
            {%- set fn = call['function'] %}
            {%- if not loop.first or message['content'] %}{{- '\\n' }}{%- endif %}
            {{- '<tool_call>\\n{"name": "' + fn['name'] + '", "arguments": ' }}
            {{- (fn['arguments'] if fn['arguments'] is string else (fn['arguments'] | tojson)) }}
            {{- '}\\n</tool_call>' }}
        {%- endfor %}
        {{- '<|im_end|>\\n' }}
    {%- elif message['role'] == 'tool' %}
        {%- if loop.first or rest[loop.index0 - 1]['role'] != 'tool' %}
            {{- '<|im_start|>user' }}
        {%- endif %}
        {{- '\\n<tool_response>\\n' + message['content'] + '\\n</tool_response>' }}
        {%- if loop.last or rest[loop.index0 + 1]['role'] != 'tool' %}
            {{- '<|im_end|>\\n' }}
        {%- endif %}
    {%- else %}
        {{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\\n' }}
{%- endif %}
"""

# Qwen2.5-Coder-Instruct's own template, byte for byte as in the 0.5B's GGUF (Qwen's official
# file). The 1.5B's GGUF has the same template but for one line, which doubles the braces of the
# format example (`{{"name": ..., "arguments": ...}}`); the model copies the typo, so both use
# this one (decision 0085; tests/models/test_model_ladder.py checks the one-line difference).
QWEN25_TOOLS = r"""{%- if tools %}
    {{- '<|im_start|>system\n' }}
    {%- if messages[0]['role'] == 'system' %}
        {{- messages[0]['content'] }}
    {%- else %}
        {{- 'You are Qwen, created by Alibaba Cloud. You are a helpful assistant.' }}
    {%- endif %}
    {{- "\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>" }}
    {%- for tool in tools %}
        {{- "\n" }}
        {{- tool | tojson }}
    {%- endfor %}
    {{- "\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call><|im_end|>\n" }}
{%- else %}
    {%- if messages[0]['role'] == 'system' %}
        {{- '<|im_start|>system\n' + messages[0]['content'] + '<|im_end|>\n' }}
    {%- else %}
        {{- '<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n' }}
    {%- endif %}
{%- endif %}
{%- for message in messages %}
    {%- if (message.role == "user") or (message.role == "system" and not loop.first) or (message.role == "assistant" and not message.tool_calls) %}
        {{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>' + '\n' }}
    {%- elif message.role == "assistant" %}
        {{- '<|im_start|>' + message.role }}
        {%- if message.content %}
            {{- '\n' + message.content }}
        {%- endif %}
        {%- for tool_call in message.tool_calls %}
            {%- if tool_call.function is defined %}
                {%- set tool_call = tool_call.function %}
            {%- endif %}
            {{- '\n<tool_call>\n{"name": "' }}
            {{- tool_call.name }}
            {{- '", "arguments": ' }}
            {{- tool_call.arguments | tojson }}
            {{- '}\n</tool_call>' }}
        {%- endfor %}
        {{- '<|im_end|>\n' }}
    {%- elif message.role == "tool" %}
        {%- if (loop.index0 == 0) or (messages[loop.index0 - 1].role != "tool") %}
            {{- '<|im_start|>user' }}
        {%- endif %}
        {{- '\n<tool_response>\n' }}
        {{- message.content }}
        {{- '\n</tool_response>' }}
        {%- if loop.last or (messages[loop.index0 + 1].role != "tool") %}
            {{- '<|im_end|>\n' }}
        {%- endif %}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\n' }}
{%- endif %}
"""  # noqa: E501

QWEN25_TYPO = (
    r"{{\"name\": <function-name>, \"arguments\": <args-json-object>}}",
    r"{\"name\": <function-name>, \"arguments\": <args-json-object>}",
)  # (the 1.5B GGUF's text, the text that replaces it)

TEMPLATES: dict[str, str] = {"chatml-tools": CHATML_TOOLS, "qwen2.5-tools": QWEN25_TOOLS}

_PROBE_TOOL = {
    "type": "function",
    "function": {
        "name": "workgym_probe_tool",
        "description": "probe",
        "parameters": {"type": "object", "properties": {}},
    },
}


def ignores_tools(tokenizer: Any) -> bool:
    """True when the chat template renders the same text with and without a tool offered."""
    messages = [{"role": "user", "content": "hi"}]
    try:
        with_tools = tokenizer.apply_chat_template(
            messages, tools=[_PROBE_TOOL], tokenize=False, add_generation_prompt=True
        )
        without = tokenizer.apply_chat_template(
            messages, tokenize=False, add_generation_prompt=True
        )
    except Exception:  # a template that raises on tools is reported by the first real call
        return False
    return bool(with_tools == without)
