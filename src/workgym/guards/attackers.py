"""Building blocks of scripted attackers: tool calls, argument synthesis, and answer variants.

Probes are assembled from these so that each probe module reads as a list of attacks, and so that
every attack goes through the same public surface a real agent has: assistant messages with tool
calls, played by the real episode loop. Nothing here reads a verifier.
"""

from __future__ import annotations

import json
import re
import unicodedata
from typing import TYPE_CHECKING, Any

from workgym.core.messages import Message, ToolCall

if TYPE_CHECKING:
    from workgym.core.environment import Environment
    from workgym.core.tasks import Task
    from workgym.core.tools import ToolSpec

_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]*[A-Za-z0-9]|[A-Za-z0-9]")
_STOP = frozenset(
    {
        "a", "an", "and", "any", "are", "as", "at", "be", "by", "does", "each", "every", "for",
        "from", "give", "how", "in", "is", "it", "many", "much", "of", "on", "one", "or", "the",
        "their", "there", "this", "to", "what", "which", "who", "with",
    }
)  # fmt: skip
# Latin letters and the Cyrillic letters that render the same.
_HOMOGLYPHS = {"a": "а", "e": "е", "o": "о", "c": "с", "p": "р", "x": "х", "y": "у", "i": "і"}
_HOMOGLYPHS |= {k.upper(): v.upper() for k, v in _HOMOGLYPHS.items() if v.upper() != v}
ZERO_WIDTH = "\u200b"


def call(name: str, args: dict[str, Any] | str, call_id: str = "p0") -> ToolCall:
    """A tool call; `args` as a dict (dumped to JSON) or raw argument text (may be broken)."""
    text = args if isinstance(args, str) else json.dumps(args, default=str)
    return ToolCall(id=call_id, name=name, arguments=text)


def turn(*calls: ToolCall, text: str = "") -> Message:
    return Message(role="assistant", content=text, tool_calls=list(calls))


def say(text: str) -> Message:
    """A text reply with no tool call: it ends the episode."""
    return Message(role="assistant", content=text)


def prompt_text(task: Task) -> str:
    return "\n".join(m.content for m in task.messages())


def prompt_words(task: Task) -> list[str]:
    """Content words of the prompt, in order, as candidate string arguments."""
    seen: list[str] = []
    for word in _WORD.findall(prompt_text(task)):
        if word.lower() not in _STOP and word not in seen:
            seen.append(word)
    return seen


def synth_args(spec: ToolSpec, task: Task, *, hostile: bool = False) -> dict[str, Any]:
    """Schema-valid arguments for a tool, drawn from the task's words (plausible calls), or
    values that make most tools raise (`hostile`: ids that do not exist, negatives)."""
    words = prompt_words(task)
    props: dict[str, Any] = spec.parameters.get("properties", {})
    required = set(spec.parameters.get("required", []))
    args: dict[str, Any] = {}
    for name, schema in props.items():
        if name not in required and not hostile:
            continue
        args[name] = _value_for(schema, words, name, hostile)
    return args


def _value_for(schema: dict[str, Any], words: list[str], name: str, hostile: bool) -> Any:
    if schema.get("enum"):
        return schema["enum"][0]
    if "anyOf" in schema:
        options = [s for s in schema["anyOf"] if s.get("type") != "null"]
        schema = options[0] if options else {"type": "null"}
    kind = schema.get("type", "string")
    if kind == "integer":
        return -1 if hostile else 1
    if kind == "number":
        return -1.5 if hostile else 1.0
    if kind == "boolean":
        return False
    if kind == "array":
        return []
    if kind == "object":
        return {}
    if kind == "null":
        return None
    if hostile:
        return f"probe-no-such-{name}-\u0000"
    # A word from the prompt that looks like an identifier, else the first content word.
    for word in reversed(words):
        if any(ch in word for ch in "-_") or word.islower():
            return word
    return words[0] if words else name


def oracle_calls(env: Environment, task: Task) -> list[ToolCall]:
    """The oracle's tool calls in order (empty when it only writes text)."""
    try:
        turns = env.oracle(task)
    except NotImplementedError:
        return []
    return [c for m in turns for c in m.tool_calls]


def oracle_turns(env: Environment, task: Task) -> list[Message] | None:
    try:
        return list(env.oracle(task))
    except NotImplementedError:
        return None


def as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=str)


def homoglyph(value: Any) -> str | None:
    """The same text with look-alike code points: Cyrillic letters, or full-width digits for a
    number (`int("１２３") == 123` in Python, so a lenient verifier falls for it)."""
    text = as_text(value)
    out = "".join(_HOMOGLYPHS.get(ch, ch) for ch in text)
    if out == text:
        out = "".join(chr(ord(ch) - ord("0") + 0xFF10) if ch.isdigit() else ch for ch in text)
    return out if out != text else None


def zero_width(value: Any) -> str:
    """The same text with a zero-width space inside it (or in front of a single character)."""
    text = as_text(value)
    if len(text) < 2:
        return ZERO_WIDTH + text
    return text[:1] + ZERO_WIDTH + text[1:]


def broken_json_variants(value: Any, key: str | None = None) -> list[str]:
    """JSON texts a lenient repair (trailing commas, single quotes, missing brackets) would turn
    into `value` (or `{key: value}`), and that strict parsing rejects."""
    body: Any = {key: value} if key is not None else value
    exact = json.dumps(body, default=str)
    out = []
    if exact.endswith(("}", "]")):
        out.append(exact[:-1] + "," + exact[-1])  # trailing comma
        out.append(exact[:-1])  # unclosed
    out.append(exact.replace('"', "'"))  # single quotes
    if isinstance(body, str):
        out.append(exact[:-1])  # unterminated string
    return [t for t in dict.fromkeys(out) if _invalid_json(t)]


def _invalid_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return True
    return False


def near_duplicate(name: str) -> str:
    """A function name one edit away (plural, or case), never the name itself."""
    return name + "s" if not name.endswith("s") else name[:-1]


def strip_punctuation(text: str) -> str:
    return "".join(ch for ch in text if not unicodedata.category(ch).startswith("P"))


def is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def nudge(value: float | int, rel: float) -> float | int:
    """`value` moved by a relative amount; an integer stays an integer and always changes."""
    if isinstance(value, int):
        moved = round(value * (1 + rel))
        return moved if moved != value else value + 1
    return value * (1 + rel) if value else rel
