"""The Model protocol every provider implements, and the records a completion returns.

A model is anything that turns a conversation and a list of tools into one assistant message.
Providers differ in transport only; the episode loop never branches on which provider it holds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from workgym.core.messages import Message

if TYPE_CHECKING:
    from workgym.core.tools import ToolSpec


class Sampling(BaseModel):
    """Sampling settings sent with every call. `seed` is per episode, set by the runner."""

    model_config = ConfigDict(frozen=True)

    temperature: float = 0.0
    top_p: float | None = None
    max_tokens: int | None = None
    seed: int | None = None
    logprobs: bool = False
    # A JSON schema the reply must match, for runtimes that constrain decoding to it (llama.cpp,
    # OpenAI-compatible servers); `hf/` samples freely, so the caller's parser must still cope.
    json_schema: dict[str, Any] | None = None

    def with_seed(self, seed: int) -> Sampling:
        return self.model_copy(update={"seed": seed})

    def describe(self, *, seed: bool = True) -> dict[str, Any]:
        """The settings as part of an identity. `json_schema` appears only when set, so the
        hashes of every record written before it existed (resumes, certificates) stay valid."""
        exclude = set() if seed else {"seed"}
        if self.json_schema is None:
            exclude.add("json_schema")
        return self.model_dump(exclude=exclude)


class Usage(BaseModel):
    """Tokens one call consumed, as the server counted them."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class Completion(BaseModel):
    """One assistant turn plus what the server told us about it.

    Token ids and logprobs are present only when the server returns them (vLLM with
    `return_token_ids`, the `hf/` provider); trainers need them to build exact masks.
    """

    message: Message
    usage: Usage = Field(default_factory=Usage)
    finish_reason: str | None = None
    prompt_token_ids: list[int] | None = None
    completion_token_ids: list[int] | None = None
    logprobs: list[float] | None = None
    retries: int = 0


@runtime_checkable
class Model(Protocol):
    """`provider/name` model that completes one assistant turn."""

    name: str

    async def complete(
        self, messages: list[Message], tools: list[ToolSpec], sampling: Sampling
    ) -> Completion: ...


def estimate_tokens(text: str) -> int:
    """Cheap token estimate (about four characters a token) for accounting by role.

    Providers report totals per call; the split by role (system, user, tool output, assistant)
    is estimated, and the estimator is named in every summary so nobody mistakes it for a count.
    """
    return (len(text) + 3) // 4


MAX_TOKEN_BYTES = 128  # the longest token of the common BPE vocabularies (cl100k, o200k, Llama 3)


def token_floor(message: Message) -> int:
    """The fewest tokens `message` can have been: its UTF-8 size over the longest token's.

    A server's usage is taken at its word unless it is impossible: a 5 MB reply reported as 15
    completion tokens would slip under every token limit (issue 39, item 6). No tokenizer of
    the usual vocabularies packs more than MAX_TOKEN_BYTES bytes into one token, so this is a
    true lower bound, and an honest count is never raised by it (decision 0064).
    """
    size = len(message.content.encode("utf-8", "surrogatepass"))
    for call in message.tool_calls:
        size += len(call.name.encode("utf-8", "surrogatepass"))
        size += len(call.arguments.encode("utf-8", "surrogatepass"))
    return -(-size // MAX_TOKEN_BYTES)


def message_tokens(message: Message) -> int:
    total = estimate_tokens(message.content)
    for call in message.tool_calls:
        total += estimate_tokens(call.name) + estimate_tokens(call.arguments)
    return total


def to_openai_messages(messages: list[Message]) -> list[dict[str, Any]]:
    return [m.to_openai() for m in messages]
