"""OpenAI-compatible chat completions (OpenAI, vLLM, SGLang…) through the real ``openai`` SDK.

Images go as base64 ``data:`` URLs in order with the text parts; a request with a schema asks
for a ``json_schema`` response format (constrained decoding where the server supports it; the
answer is validated either way).

Why ``client.post`` rather than ``client.chat.completions.create``: ``create`` runs every
request body through the SDK's type-directed transform and every reply through pydantic, which
on these machines cost ≈0.6 ms of CPU per request — a third of the client's budget when one
event loop drives hundreds of requests per second (``benchmarks/probe_orchestration.py``). The
SDK's public ``post`` still does authentication, timeouts, connection pooling and the
status-code → exception mapping; the body is plain chat-completions JSON, which needs no
transform, so it is passed already serialized (``content=``, the same bytes the SDK's own
``json_data`` path would produce) — ``json_data`` is copied and re-read by the SDK for every
request, ≈0.15 ms of CPU — and the reply is read with ``json.loads``.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from clients.backends.base import Answer, scrub
from clients.errors import FatalError, RetryableError
from clients.media import as_supported_image
from clients.request import Request
from clients.settings import ModelSpec


def _retry_after(headers: Any) -> float | None:
    try:
        value = headers.get("retry-after")
        return float(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def _dumps(body: dict[str, Any]) -> bytes:
    """JSON bytes as the SDK serializes a ``json_data`` body (compact, UTF-8, no NaN)."""
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


class OpenAIBackend:
    def __init__(self, api_key: str, base_url: str | None, timeout_s: float) -> None:
        import httpx
        import openai

        self._openai = openai
        self._httpx = httpx
        self._secret = api_key
        self.client = openai.AsyncOpenAI(api_key=api_key, base_url=base_url, max_retries=0,
                                         timeout=timeout_s)

    def body(self, spec: ModelSpec, request: Request) -> dict[str, Any]:
        content: list[dict[str, Any]] = []
        for part in request.parts:
            if isinstance(part, str):
                content.append({"type": "text", "text": part})
            else:
                data, mime = as_supported_image(part)
                url = f"data:{mime};base64,{base64.b64encode(data).decode()}"
                content.append({"type": "image_url", "image_url": {"url": url}})
        messages: list[dict[str, Any]] = []
        if spec.system_prompt:
            messages.append({"role": "system", "content": spec.system_prompt})
        messages.append({"role": "user", "content": content})
        body: dict[str, Any] = {"model": spec.model, "messages": messages, "temperature": spec.temperature}
        if spec.max_tokens is not None:
            body["max_tokens"] = spec.max_tokens
        if request.schema is not None:
            body["response_format"] = {"type": "json_schema", "json_schema": {
                "name": request.schema.__name__, "schema": request.schema.model_json_schema()}}
        return body

    async def send(self, spec: ModelSpec, request: Request) -> Answer:
        openai = self._openai
        try:
            resp = await self.client.post("/chat/completions", content=_dumps(self.body(spec, request)),
                                          cast_to=self._httpx.Response)
        except openai.RateLimitError as e:
            raise RetryableError("429", scrub(e.message, self._secret),
                                 _retry_after(e.response.headers)) from None
        except openai.APITimeoutError:
            raise RetryableError("timeout", "no answer within the timeout") from None
        except openai.APIConnectionError as e:
            raise RetryableError("connection", type(e).__name__) from None
        except openai.APIStatusError as e:
            detail = scrub(e.message, self._secret)
            if e.status_code >= 500 or e.status_code in (408, 409):
                raise RetryableError(str(e.status_code), detail) from None
            raise FatalError(str(e.status_code), detail) from None
        try:
            reply = json.loads(resp.content)
            content = reply["choices"][0]["message"]["content"]
        except ValueError as e:
            raise RetryableError("malformed", f"reply is not JSON ({type(e).__name__})") from None
        except (KeyError, IndexError, TypeError):
            raise RetryableError("malformed", "reply has no choices[0].message") from None
        if not isinstance(content, str):
            raise RetryableError("malformed", "reply has no message content")
        usage = reply.get("usage") or {}
        return Answer(content, int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0))

    async def aclose(self) -> None:
        await self.client.close()
