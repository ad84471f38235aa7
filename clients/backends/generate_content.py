"""Gemini ``generateContent`` through the real ``google-genai`` SDK (``client.aio``).

Images go inline (``Part.from_bytes``) in order with the text parts; a request with a schema
sets ``response_mime_type: application/json`` and ``response_schema`` (the pydantic model), and
the answer text is validated against it. google-genai retries only with ``retry_options``, which
are not set, so every attempt is ours and counted.
"""

from __future__ import annotations

from typing import Any

from clients.backends import Answer, scrub
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
            kw: dict[str, Any] = {"temperature": spec.temperature,
                                  "system_instruction": spec.system_prompt or None}
            if spec.max_tokens is not None:
                kw["max_output_tokens"] = spec.max_tokens
            if request.schema is not None:
                kw.update(response_mime_type="application/json", response_schema=request.schema)
            cfg = self._configs[key] = self.types.GenerateContentConfig(**kw)
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
        except ValueError as e:  # JSONDecodeError: the reply is not JSON
            raise RetryableError("malformed", f"reply is not JSON ({type(e).__name__})") from None
        except OSError as e:  # connection errors of the HTTP library derive from OSError
            raise RetryableError("connection", type(e).__name__) from None
        except Exception as e:  # noqa: BLE001 - the HTTP library's transport errors vary by version
            name = type(e).__name__
            if "Timeout" in name:
                raise RetryableError("timeout", name) from None
            if any(s in name for s in ("Connect", "Disconnect", "Transport", "Payload", "Protocol")):
                raise RetryableError("connection", name) from None
            raise
        text = resp.text
        if not isinstance(text, str):
            raise RetryableError("malformed", "reply has no candidate text")
        um = resp.usage_metadata
        return Answer(text, int(getattr(um, "prompt_token_count", 0) or 0),
                      int(getattr(um, "candidates_token_count", 0) or 0))

    async def aclose(self) -> None:
        await self.client.aio.aclose()
