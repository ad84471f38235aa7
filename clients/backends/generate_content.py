"""Gemini ``generateContent`` through the real ``google-genai`` SDK (``client.aio``).

Images go inline (``Part.from_bytes``) in order with the text parts; a request with a schema
sets ``response_mime_type: application/json`` and ``response_schema`` (the pydantic model), and
the answer text is validated against it. google-genai retries only with ``retry_options``, which
are not set, so every attempt is ours and counted.

The SDK builds the request and maps HTTP errors to ``APIError``; the reply is taken as raw JSON
(``should_return_http_response``, a public config option) and read here — the answer text is the
first candidate's non-thought text parts, as ``GenerateContentResponse.text`` defines it. Why:
the SDK's typed response model costs ≈0.3 ms of CPU per request, a tenth of a budget that one
event loop spends for hundreds of requests per second (``benchmarks/probe_orchestration.py``).
"""

from __future__ import annotations

import json
from typing import Any

from clients.backends.base import Answer, scrub
from clients.errors import FatalError, RetryableError
from clients.media import as_supported_image
from clients.request import Request
from clients.settings import ModelSpec


class GeminiBackend:
    def __init__(self, api_key: str, base_url: str | None, api_version: str | None,
                 timeout_s: float) -> None:
        from google import genai
        from google.genai import types

        self.types = types
        self.errors = genai.errors
        self._secret = api_key
        opts: dict[str, Any] = {"timeout": int(timeout_s * 1000)}
        if base_url:
            opts["base_url"] = base_url
        if api_version:
            opts["api_version"] = api_version
        self.client = genai.Client(api_key=api_key, http_options=types.HttpOptions(**opts))
        self._configs: dict[tuple[str, Any], Any] = {}

    def config(self, spec: ModelSpec, request: Request) -> Any:
        """The generation config, built once per (model settings, schema): building it is
        pydantic validation the SDK would otherwise repeat for every request."""
        key = (spec.identity(), request.schema)
        cfg = self._configs.get(key)
        if cfg is None:
            types = self.types
            kw: dict[str, Any] = {
                "temperature": spec.temperature, "system_instruction": spec.system_prompt or None,
                # the raw reply is read here (module doc); with no tools, function calling and
                # continuation hops would only add per-request config copies
                "should_return_http_response": True, "automatic_continuation": False,
                "automatic_function_calling": types.AutomaticFunctionCallingConfig(disable=True),
            }
            if spec.max_tokens is not None:
                kw["max_output_tokens"] = spec.max_tokens
            if request.schema is not None:
                kw.update(response_mime_type="application/json", response_schema=request.schema)
            cfg = self._configs[key] = types.GenerateContentConfig(**kw)
        return cfg

    def contents(self, request: Request) -> list[Any]:
        types = self.types
        parts = []
        for part in request.parts:
            if isinstance(part, str):
                parts.append(types.Part.from_text(text=part))
            else:
                data, mime = as_supported_image(part)
                parts.append(types.Part.from_bytes(data=data, mime_type=mime))
        return [types.Content(role="user", parts=parts)]

    async def send(self, spec: ModelSpec, request: Request) -> Answer:
        try:
            resp = await self.client.aio.models.generate_content(
                model=spec.model, contents=self.contents(request), config=self.config(spec, request))
        except self.errors.APIError as e:
            code = int(e.code or 0)
            detail = scrub(f"{e.code} {e.status}: {e.message}", self._secret)
            if code == 429 or code >= 500 or code == 408:
                raise RetryableError(str(code), detail) from None
            raise FatalError(str(code), detail) from None
        except TimeoutError:
            raise RetryableError("timeout", "no answer within the timeout") from None
        except OSError as e:  # connection errors of the HTTP library derive from OSError
            raise RetryableError("connection", type(e).__name__) from None
        except Exception as e:  # noqa: BLE001 - the HTTP library's transport errors vary by version
            name = type(e).__name__
            if "Timeout" in name:
                raise RetryableError("timeout", name) from None
            if any(s in name for s in ("Connect", "Disconnect", "Transport", "Payload", "Protocol")):
                raise RetryableError("connection", name) from None
            raise
        return _answer(resp.sdk_http_response.body if resp.sdk_http_response else None)

    async def aclose(self) -> None:
        await self.client.aio.aclose()


def _answer(body: str | None) -> Answer:
    """The answer text and token counts of a ``generateContent`` reply body."""
    try:
        reply = json.loads(body or "")
    except ValueError as e:
        raise RetryableError("malformed", f"reply is not JSON ({type(e).__name__})") from None
    try:
        parts = reply["candidates"][0]["content"]["parts"]
        texts = [p["text"] for p in parts if isinstance(p.get("text"), str) and not p.get("thought")]
    except (KeyError, IndexError, TypeError, AttributeError):
        raise RetryableError("malformed", "reply has no candidate text") from None
    if not texts:
        raise RetryableError("malformed", "reply has no candidate text")
    usage = reply.get("usageMetadata") or {}
    return Answer("".join(texts), int(usage.get("promptTokenCount") or 0),
                  int(usage.get("candidatesTokenCount") or 0))
