"""An OpenAI-compatible chat-completions provider over ``httpx``.

Speaks the ``/chat/completions`` wire format that hosted APIs and local servers (Ollama,
vLLM, llama.cpp, LM Studio) share: tool calling, and streaming as server-sent ``data:``
chunks whose tool calls arrive as deltas keyed by ``index``.

Failures become :class:`~pawflow.errors.ModelError`. Timeouts, dropped connections and 5xx
answers are retried with bounded exponential backoff, but only while nothing has been
streamed to the caller yet (a retry after that would repeat text); a 4xx is never retried.
Every attempt is bounded by a read timeout and an overall deadline, so a turn never hangs.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pawflow.agent.models.base import (
    ChatMessage,
    ModelOutput,
    ModelRequest,
    ModelResponse,
    TextDelta,
    ToolCall,
    Usage,
)
from pawflow.errors import InvalidInput, ModelError
from pawflow.redaction import remember, remember_url

if TYPE_CHECKING:
    import httpx

DEFAULT_URL = "https://api.openai.com/v1"


@dataclass(frozen=True)
class ModelSettings:
    """Where the model lives: explicit values, else ``PAWFLOW_MODEL_*``, else defaults."""

    model: str
    url: str = DEFAULT_URL
    api_key: str | None = None
    timeout: float = 60.0
    max_retries: int = 2

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> ModelSettings | None:
        """Settings from ``PAWFLOW_MODEL_URL``, ``PAWFLOW_MODEL`` and ``PAWFLOW_MODEL_API_KEY``.

        None when neither the URL nor the model is set (no real model configured).
        """
        env = os.environ if env is None else env
        url = env.get("PAWFLOW_MODEL_URL", "").strip()
        model = env.get("PAWFLOW_MODEL", "").strip()
        if not url and not model:
            return None
        if not model:
            raise InvalidInput("PAWFLOW_MODEL_URL is set but PAWFLOW_MODEL (the model name) is not")
        timeout = env.get("PAWFLOW_MODEL_TIMEOUT", "").strip()
        try:
            seconds = float(timeout) if timeout else 60.0
        except ValueError as exc:
            raise InvalidInput(
                f"PAWFLOW_MODEL_TIMEOUT must be a number of seconds: {timeout!r}"
            ) from exc
        return cls(
            model=model,
            url=url or DEFAULT_URL,
            api_key=env.get("PAWFLOW_MODEL_API_KEY") or None,
            timeout=seconds,
        )


class _Retry(Exception):
    """An attempt failed in a way another attempt might not."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


def endpoint(url: str) -> str:
    """``…/v1`` becomes ``…/v1/chat/completions``; a full endpoint URL is kept."""
    url = url.rstrip("/")
    return url if url.endswith("/chat/completions") else url + "/chat/completions"


def wire_message(message: ChatMessage) -> dict[str, Any]:
    data: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.tool_calls:
        data["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments},
            }
            for call in message.tool_calls
        ]
    if message.tool_call_id is not None:
        data["tool_call_id"] = message.tool_call_id
    return data


def _error_detail(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return response.text[:300].strip() or response.reason_phrase
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])
        if isinstance(error, str):
            return error
    return json.dumps(body)[:300]


def _text_of(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    raise ModelError(f"malformed model output: content is {type(content).__name__}")


def _arguments_text(arguments: Any) -> str:
    # Some local servers send arguments as an object instead of JSON text.
    if arguments is None:
        return ""
    return arguments if isinstance(arguments, str) else json.dumps(arguments)


def _usage(data: Any) -> Usage | None:
    if not isinstance(data, dict):
        return None
    try:
        return Usage(int(data.get("prompt_tokens") or 0), int(data.get("completion_tokens") or 0))
    except (TypeError, ValueError):
        return None


class _ToolCallParts:
    """Tool-call deltas of a stream, joined by their ``index``."""

    def __init__(self) -> None:
        self._calls: dict[int, dict[str, str]] = {}

    def add(self, position: int, delta: Any) -> None:
        if not isinstance(delta, dict):
            raise ModelError("malformed stream chunk: a tool call delta is not an object")
        index = delta.get("index", position)
        if not isinstance(index, int):
            raise ModelError("malformed stream chunk: tool call index is not an integer")
        call = self._calls.setdefault(index, {"id": "", "name": "", "arguments": ""})
        if delta.get("id"):
            call["id"] = str(delta["id"])
        function = delta.get("function") or {}
        if not isinstance(function, dict):
            raise ModelError("malformed stream chunk: tool call function is not an object")
        if function.get("name"):
            call["name"] += str(function["name"])
        call["arguments"] += _arguments_text(function.get("arguments"))

    def calls(self) -> tuple[ToolCall, ...]:
        found = []
        for index in sorted(self._calls):
            call = self._calls[index]
            if not call["name"]:
                raise ModelError("malformed model output: a tool call has no name")
            found.append(
                ToolCall(call["id"] or f"call_{index}", call["name"], call["arguments"] or "{}")
            )
        return tuple(found)


class OpenAIChatModel:
    """A model behind an OpenAI-compatible ``/chat/completions`` endpoint."""

    def __init__(
        self,
        model: str,
        *,
        url: str = DEFAULT_URL,
        api_key: str | None = None,
        timeout: float = 60.0,
        connect_timeout: float = 10.0,
        total_timeout: float | None = None,
        max_retries: int = 2,
        backoff: float = 0.5,
        max_backoff: float = 8.0,
        streaming: bool = True,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if not model:
            raise InvalidInput("a model name is required")
        if max_retries < 0 or backoff < 0:
            raise InvalidInput("max_retries and backoff must not be negative")
        self.name = model
        self.model = model
        self.url = endpoint(url)
        self.timeout = timeout
        self.total_timeout = total_timeout if total_timeout is not None else max(timeout * 5, 30.0)
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.streaming = streaming
        self._sleep = sleep
        # httpx is loaded by the first model made, not by every process that could make one.
        import httpx  # noqa: PLC0415

        headers = {"Accept": "application/json"}
        remember(api_key)  # masked wherever a provider's error might echo it
        remember_url(url)
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self._client = httpx.Client(
            headers=headers,
            timeout=httpx.Timeout(timeout, connect=min(connect_timeout, timeout)),
            transport=transport,
        )

    @classmethod
    def from_settings(cls, settings: ModelSettings, **options: Any) -> OpenAIChatModel:
        return cls(
            settings.model,
            url=settings.url,
            api_key=settings.api_key,
            timeout=settings.timeout,
            max_retries=settings.max_retries,
            **options,
        )

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> OpenAIChatModel | None:
        settings = ModelSettings.from_env(env)
        return None if settings is None else cls.from_settings(settings)

    def close(self) -> None:
        self._client.close()

    # -- the request ------------------------------------------------------------------

    def body(self, request: ModelRequest) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [wire_message(m) for m in request.messages],
            "stream": self.streaming,
        }
        if request.tools:
            body["tools"] = [
                {
                    "type": "function",
                    "function": {
                        "name": tool.name,
                        "description": tool.description,
                        "parameters": tool.parameters,
                    },
                }
                for tool in request.tools
            ]
        if request.max_tokens is not None:
            body["max_tokens"] = request.max_tokens
        if request.temperature is not None:
            body["temperature"] = request.temperature
        return body

    def stream(self, request: ModelRequest) -> Iterator[ModelOutput]:
        body = self.body(request)
        attempt = 0
        while True:
            started = False
            try:
                for output in self._attempt(body):
                    started = True
                    yield output
                return
            except _Retry as exc:
                if started or attempt >= self.max_retries:
                    tries = f" after {attempt + 1} attempts" if attempt else ""
                    raise ModelError(
                        f"model {self.model} failed{tries}: {exc}",
                        retryable=True,
                        status=exc.status,
                    ) from exc
            self._sleep(min(self.backoff * 2**attempt, self.max_backoff))
            attempt += 1

    def _attempt(self, body: dict[str, Any]) -> Iterator[ModelOutput]:
        import httpx  # noqa: PLC0415 - loaded when this model was made

        deadline = time.monotonic() + self.total_timeout
        try:
            with self._client.stream("POST", self.url, json=body) as response:
                self._check_status(response)
                if self.streaming:
                    yield from self._read_stream(response, deadline)
                else:
                    response.read()
                    yield from self._read_whole(response)
        except httpx.TimeoutException as exc:
            raise _Retry(f"timed out ({self.timeout:g}s without a response)") from exc
        except httpx.TransportError as exc:
            raise _Retry(f"cannot reach {self.url}: {exc}") from exc
        except httpx.HTTPError as exc:  # redirects, undecodable bodies: trying again won't help
            raise ModelError(f"model {self.model} failed: {exc}") from exc

    def _check_status(self, response: httpx.Response) -> None:
        if response.status_code < 400:
            return
        response.read()
        detail = _error_detail(response)
        if response.status_code >= 500:
            raise _Retry(f"server error {response.status_code}: {detail}", response.status_code)
        raise ModelError(
            f"model {self.model} refused the request ({response.status_code}): {detail}",
            status=response.status_code,
        )

    def _read_whole(self, response: httpx.Response) -> Iterator[ModelOutput]:
        try:
            data = response.json()
            message = data["choices"][0]["message"]
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise ModelError(f"malformed model response: {response.text[:200]!r}") from exc
        if not isinstance(message, dict):
            raise ModelError("malformed model response: message is not an object")
        text = _text_of(message.get("content"))
        parts = _ToolCallParts()
        for position, call in enumerate(message.get("tool_calls") or ()):
            parts.add(position, call)
        if text:
            yield TextDelta(text)
        yield ModelResponse(
            text=text,
            tool_calls=parts.calls(),
            usage=_usage(data.get("usage")),
            finish_reason=data["choices"][0].get("finish_reason"),
            raw=data,
        )

    def _read_stream(self, response: httpx.Response, deadline: float) -> Iterator[ModelOutput]:
        text: list[str] = []
        parts = _ToolCallParts()
        usage: Usage | None = None
        finish: str | None = None
        done = False
        for line in response.iter_lines():
            if time.monotonic() > deadline:
                raise _Retry(f"the reply took longer than {self.total_timeout:g}s")
            if not line.startswith("data:"):
                continue  # blank separators, ": keep-alive" comments, "event:" names
            payload = line[5:].strip()
            if payload == "[DONE]":
                done = True
                break
            try:
                chunk = json.loads(payload)
            except ValueError as exc:
                raise ModelError(f"malformed stream chunk: {payload[:200]!r}") from exc
            if not isinstance(chunk, dict):
                raise ModelError(f"malformed stream chunk: {payload[:200]!r}")
            if "error" in chunk:
                error = chunk["error"]
                detail = error.get("message") if isinstance(error, dict) else error
                raise ModelError(f"model {self.model} failed while replying: {detail}")
            usage = _usage(chunk.get("usage")) or usage
            choices = chunk.get("choices") or []
            if not isinstance(choices, list):
                raise ModelError("malformed stream chunk: choices is not a list")
            for choice in choices[:1]:
                delta = choice.get("delta") if isinstance(choice, dict) else None
                if not isinstance(delta, dict):
                    raise ModelError(f"malformed stream chunk: {payload[:200]!r}")
                piece = _text_of(delta.get("content"))
                if piece:
                    text.append(piece)
                    yield TextDelta(piece)
                for position, call in enumerate(delta.get("tool_calls") or ()):
                    parts.add(position, call)
                finish = choice.get("finish_reason") or finish
        if not done and finish is None:
            if not text:
                raise _Retry("the stream ended before the reply began")
            raise ModelError(f"model {self.model}'s reply stream ended before it was complete")
        yield ModelResponse(
            text="".join(text), tool_calls=parts.calls(), usage=usage, finish_reason=finish
        )
