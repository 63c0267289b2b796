"""`openai/<model>`: any server that speaks OpenAI chat completions.

One provider covers api.openai.com and the local serving stacks (vLLM, SGLang, Ollama,
llama.cpp), because they all speak the same wire protocol; only the base URL and key differ.

The SDK's own retries are switched off and done here instead, so that every retry is counted
into the Completion (the runner reports retries per arm: an arm that needed many retries ran under
different conditions) and the policy on what to retry is ours rather than an SDK version's.

The SDK is imported inside the class, never at module level: it takes most of a second to import
and `import workgym` must stay fast for commands that never call a model.
"""

from __future__ import annotations

import asyncio
import email.utils
import ipaddress
import json
import os
import random
import time
import weakref
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import urlsplit

from workgym.core.errors import ConfigError, ModelError
from workgym.core.messages import Message, ToolCall
from workgym.core.model import Completion, Sampling, Usage

if TYPE_CHECKING:
    from openai import APIStatusError, AsyncOpenAI
    from openai.types.chat import ChatCompletionMessageParam, ChatCompletionToolUnionParam

    from workgym.core.tools import ToolSpec

OPENAI_BASE_URL = "https://api.openai.com/v1"
MAX_WAIT_S = 60.0  # longest we sleep between tries, whatever Retry-After asks for
RETRYABLE_STATUS = frozenset({408, 409, 429})


class OpenAIModel:
    """A model served behind an OpenAI-compatible chat-completions endpoint."""

    def __init__(
        self,
        name: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout_s: float = 120,
        max_retries: int = 5,
        backoff_s: float = 1.0,
        extra_body: dict[str, Any] | None = None,
    ) -> None:
        model = name.removeprefix("openai/")
        if not model:
            raise ConfigError("openai/ needs a model name: use openai/<model>, e.g. openai/gpt-4o")
        self.model = model
        self.name = f"openai/{model}"
        base = base_url or os.environ.get("OPENAI_BASE_URL") or None
        key = api_key or os.environ.get("OPENAI_API_KEY") or None
        if base is None and key is None:
            raise ConfigError(
                f"{self.name} needs an endpoint: pass --base-url http://127.0.0.1:8000/v1 "
                "(vLLM, SGLang, Ollama, llama.cpp) or set OPENAI_BASE_URL; "
                "for api.openai.com set OPENAI_API_KEY"
            )
        if base is not None and urlsplit(base).scheme not in ("http", "https"):
            raise ConfigError(
                f"{self.name}: base URL {base!r} must start with http:// or https://, "
                "e.g. http://127.0.0.1:8000/v1"
            )
        if key is None:
            if base is not None and _is_loopback(base):
                key = "EMPTY"  # local servers ignore the key, but the protocol wants one
            else:
                raise ConfigError(
                    f"{self.name} at {base} needs an API key: set OPENAI_API_KEY or pass "
                    "--api-key (servers on 127.0.0.1 or localhost need none)"
                )
        self.base_url = (base or OPENAI_BASE_URL).rstrip("/")
        self._api_key = key
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.extra_body = dict(extra_body or {})
        self._rng = random.Random()
        # An httpx connection pool belongs to the event loop that opened it, and the sync
        # facade runs each call under a fresh loop: keep one client per loop.
        self._client: AsyncOpenAI | None = None
        self._client_loop: weakref.ref[asyncio.AbstractEventLoop] | None = None
        import openai  # noqa: F401  (fail here, not mid-run, when the SDK is missing)

    def __repr__(self) -> str:
        return f"OpenAIModel({self.name!r}, base_url={self.base_url!r})"

    def _sdk_client(self) -> AsyncOpenAI:
        loop = asyncio.get_running_loop()
        if self._client is None or self._client_loop is None or self._client_loop() is not loop:
            from openai import AsyncOpenAI

            self._client = AsyncOpenAI(
                base_url=self.base_url,
                api_key=self._api_key,
                timeout=self.timeout_s,
                max_retries=0,
            )
            self._client_loop = weakref.ref(loop)
        return self._client

    async def ping(self, timeout_s: float = 10.0) -> None:
        """Fail now, with what to fix, when the endpoint cannot be reached or refuses the key.

        Commands that spend something irrevocable before the first model call (a look at the
        test split) call this first. Any HTTP answer other than 401/403 counts as reachable:
        not every server lists its models.
        """
        from openai import APIConnectionError, APIStatusError, APITimeoutError

        try:
            await self._sdk_client().with_options(timeout=timeout_s).models.list()
        except (APIConnectionError, APITimeoutError) as exc:
            raise ConfigError(
                f"{self.name}: cannot reach {self.base_url} ({exc}); "
                "start the server or fix --base-url / OPENAI_BASE_URL"
            ) from exc
        except APIStatusError as exc:
            if exc.status_code in (401, 403):
                raise ConfigError(
                    f"{self.name}: {self.base_url} rejected the API key (HTTP "
                    f"{exc.status_code}); set OPENAI_API_KEY or pass --api-key"
                ) from exc

    async def aclose(self) -> None:
        """Close the connection pool of the current loop's client (optional; pools are small)."""
        if self._client is not None:
            await self._client.close()
            self._client = None
            self._client_loop = None

    async def complete(
        self, messages: list[Message], tools: list[ToolSpec], sampling: Sampling
    ) -> Completion:
        from openai import (
            APIConnectionError,
            APIResponseValidationError,
            APIStatusError,
            APITimeoutError,
            omit,
        )

        client = self._sdk_client()
        wire_messages = cast("list[ChatCompletionMessageParam]", [m.to_openai() for m in messages])
        wire_tools = cast("list[ChatCompletionToolUnionParam]", [t.to_openai() for t in tools])
        retries = 0
        while True:
            retry_after: float | None = None
            cause: Exception
            try:
                response = await client.chat.completions.create(
                    model=self.model,
                    messages=wire_messages,
                    tools=wire_tools or omit,
                    temperature=sampling.temperature,
                    top_p=sampling.top_p if sampling.top_p is not None else omit,
                    max_tokens=sampling.max_tokens if sampling.max_tokens is not None else omit,
                    seed=sampling.seed if sampling.seed is not None else omit,
                    logprobs=True if sampling.logprobs else omit,
                    response_format=(
                        cast(Any, response_format(sampling.json_schema))
                        if sampling.json_schema is not None
                        else omit
                    ),
                    extra_body=self.extra_body or None,
                )
            except APITimeoutError as exc:
                problem, cause = f"no reply within {self.timeout_s:g} s", exc
            except APIConnectionError as exc:
                problem, cause = f"could not connect ({exc.__cause__ or exc})", exc
            except APIStatusError as exc:
                status = exc.status_code
                if status not in RETRYABLE_STATUS and status < 500:
                    raise ModelError(self._refusal(exc), retryable=False) from exc
                problem, cause = f"HTTP {status}: {_server_message(exc)}", exc
                retry_after = _retry_after(exc)
            except (ValueError, APIResponseValidationError) as exc:  # JSONDecodeError included
                problem, cause = f"the reply is not valid JSON (cut short?): {exc}", exc
            else:
                try:
                    return self._parse(response, retries)
                except ModelError as exc:  # a reply without choices: the server's fault
                    if not exc.retryable:
                        raise
                    problem, cause = str(exc), exc
            if retries >= self.max_retries:
                raise ModelError(
                    f"{self.name} at {self.base_url}: {problem}; gave up after "
                    f"{retries} retries (raise max_retries or check the server)",
                    retryable=True,
                ) from cause
            await asyncio.sleep(self._wait(retries, retry_after))
            retries += 1

    def _wait(self, retries: int, retry_after: float | None) -> float:
        """Seconds to sleep before the next try: the server's word, else backoff with jitter.

        Jitter keeps many concurrent episodes that failed together from retrying in lockstep.
        """
        if retry_after is not None:
            return min(max(retry_after, 0.0), MAX_WAIT_S)
        base = min(self.backoff_s * 2.0**retries, MAX_WAIT_S)
        return base * (0.5 + 0.5 * self._rng.random())

    def _refusal(self, exc: APIStatusError) -> str:
        status = exc.status_code
        said = _server_message(exc)
        if status in (401, 403):
            return (
                f"{self.name}: {self.base_url} rejected the API key (HTTP {status}: {said}): "
                "set OPENAI_API_KEY or --api-key"
            )
        if status == 404:
            return (
                f"{self.name}: model {self.model!r} not found at {self.base_url} ({said}): "
                f"list served models with GET {self.base_url}/models"
            )
        return f"{self.name}: {self.base_url} refused the request (HTTP {status}): {said}"

    def _parse(self, response: object, retries: int) -> Completion:
        """Read the reply tolerantly: odd model output is data for the verifier, not a crash.

        The SDK builds its objects without validation, so any field may be missing or of an
        unexpected type, and server extensions (vLLM's token ids) sit in `model_extra`.
        """
        choices = _field(response, "choices")
        if not isinstance(choices, list) or not choices:
            shown = str(response)[:200]
            raise ModelError(
                f"{self.name} at {self.base_url}: reply has no choices ({shown!r})",
                retryable=True,
            )
        choice = choices[0]
        message = _field(choice, "message")
        calls = [_tool_call(raw, i) for i, raw in enumerate(_field(message, "tool_calls") or [])]
        finish = _field(choice, "finish_reason")
        prompt_ids = _int_list(_field(response, "prompt_token_ids"))
        if prompt_ids is None:
            prompt_ids = _int_list(_field(choice, "prompt_token_ids"))
        return Completion(
            message=Message(
                role="assistant", content=_text(_field(message, "content")), tool_calls=calls
            ),
            usage=_usage(_field(response, "usage")),
            finish_reason=finish if isinstance(finish, str) else None,
            prompt_token_ids=prompt_ids,
            completion_token_ids=_int_list(_field(choice, "token_ids")),
            logprobs=_logprobs(_field(choice, "logprobs")),
            retries=retries,
        )


def response_format(schema: dict[str, Any]) -> dict[str, Any]:
    """OpenAI's structured-output request for a JSON schema (vLLM and llama.cpp's server honour
    it too; a server that does not may refuse the call, which is the caller's signal)."""
    return {"type": "json_schema", "json_schema": {"name": "reply", "schema": schema}}


def _is_loopback(url: str) -> bool:
    host = urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _server_message(exc: APIStatusError) -> str:
    """The server's own words: OpenAI nests them under `error`, vLLM puts them at the top."""
    body = exc.body
    if isinstance(body, dict):
        message = body.get("message")
        if message is None and isinstance(body.get("error"), dict):
            message = body["error"].get("message")
        if message is None and isinstance(body.get("detail"), str | list):
            message = body["detail"]  # FastAPI-style servers
        if message is not None:
            return str(message)
    if isinstance(body, str) and body.strip():
        return body.strip()[:500]
    return exc.message


def _retry_after(exc: APIStatusError) -> float | None:
    """Seconds the server asked us to wait (Retry-After seconds or date, retry-after-ms)."""
    headers = exc.response.headers
    for header, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(header)
        if value is None:
            continue
        try:
            seconds = float(value) * scale
        except ValueError:
            continue
        return seconds if seconds == seconds else None  # NaN is no instruction
    value = headers.get("retry-after")
    if value:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        return when.timestamp() - time.time()
    return None


def _field(obj: object, name: str) -> Any:
    """An attribute of an SDK object (declared or in `model_extra`) or a key of a plain dict."""
    if obj is None:
        return None
    if isinstance(obj, dict):
        return obj.get(name)
    value = getattr(obj, name, None)
    if value is None:
        extra = getattr(obj, "model_extra", None)
        if isinstance(extra, dict):
            value = extra.get(name)
    return value


def _text(content: object) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts, as a few servers return
        return "".join(str(_field(part, "text") or "") for part in content)
    return str(content)


def _tool_call(raw: object, index: int) -> ToolCall:
    """One tool call; arguments stay the model's raw text, valid JSON or not."""
    call_id = _field(raw, "id")
    function = _field(raw, "function")
    if function is None:  # custom (free-text) tools carry `custom: {name, input}`
        custom = _field(raw, "custom")
        name, arguments = _field(custom, "name"), _field(custom, "input")
    else:
        name, arguments = _field(function, "name"), _field(function, "arguments")
    if arguments is None:
        arguments = "{}"
    elif not isinstance(arguments, str):
        arguments = json.dumps(arguments)  # a server that sent an object, not a string
    return ToolCall(
        id=call_id if isinstance(call_id, str) and call_id else f"call_{index}",
        name=name if isinstance(name, str) else "",
        arguments=arguments,
    )


def _usage(usage: object) -> Usage:
    def count(obj: object, name: str) -> int:
        value = _field(obj, name)
        return value if isinstance(value, int) else 0

    return Usage(
        prompt_tokens=count(usage, "prompt_tokens"),
        completion_tokens=count(usage, "completion_tokens"),
        cached_tokens=count(_field(usage, "prompt_tokens_details"), "cached_tokens"),
    )


def _logprobs(logprobs: object) -> list[float] | None:
    content = _field(logprobs, "content")
    if not isinstance(content, list) or not content:
        return None
    values = [_field(token, "logprob") for token in content]
    if not all(isinstance(v, int | float) for v in values):
        return None
    return [float(v) for v in values]


def _int_list(value: object) -> list[int] | None:
    if isinstance(value, list) and all(isinstance(v, int) for v in value):
        return list(value)
    return None
