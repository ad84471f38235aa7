"""The two wire protocols, each through its real SDK: OpenAI-compatible chat completions
(:mod:`clients.backends.chat_completions`) and Gemini ``generateContent``
(:mod:`clients.backends.generate_content`).

A backend is one connection (endpoint, key, timeout) shared by every model behind it; it turns a
:class:`~clients.request.Request` into the SDK call and every SDK failure into a
:class:`~clients.errors.RetryableError` or :class:`~clients.errors.FatalError`, with the API key
scrubbed from any server message. SDK-level retries are off, so every attempt is counted.
"""

from __future__ import annotations

from clients.backends.base import Answer, Backend, scrub
from clients.settings import ModelSpec

__all__ = ["Answer", "Backend", "connect", "scrub"]


def connect(spec: ModelSpec, timeout_s: float) -> Backend:
    """A new backend for ``spec``'s endpoint; reads the API key (a missing key raises here)."""
    if spec.backend == "openai":
        from clients.backends.chat_completions import OpenAIBackend

        return OpenAIBackend(spec.api_key(), spec.base_url, timeout_s)
    from clients.backends.generate_content import GeminiBackend

    return GeminiBackend(spec.api_key(), spec.base_url, spec.api_version, timeout_s)
