"""The project's model-client layer: every call to a hosted or served model goes through here.

Below ``filtering/`` and ``annotation/`` (it imports only ``core/`` and third-party packages), so
the leak filter, the StreamVibe and ProReady generators and the Gemini reviewer share one
implementation of what used to be three drifting copies:

- :func:`ask_many` / :meth:`ModelClient.ask_many` — the one "ask many" API (``client.py``);
- :class:`Request` / :class:`Outcome` — prompt and images in order, structured output
  (``request.py``);
- the OpenAI-compatible and Gemini backends through the real SDKs (``backends/``);
- :class:`RetryPolicy`, :class:`Limits` and the per-process limit groups (``settings.py``,
  ``limits.py``, ``runtime.py``);
- :class:`ResponseCache` — the sqlite answer cache and usage log (``cache.py``);
- :class:`Usage` — requests, retries, faults, cache hits, failures, tokens (``usage.py``);
- :func:`parse_models` / :class:`ModelsConfig` — the one ``models:`` config shape (``config.py``).
"""

from clients.cache import ResponseCache, response_key
from clients.client import ModelClient, ask_many
from clients.config import ModelsConfig, parse_models
from clients.errors import ClientConfigError
from clients.media import image_mime
from clients.request import Outcome, Request
from clients.settings import BACKENDS, Limits, ModelSpec, RetryPolicy
from clients.usage import Usage

__all__ = [
    "BACKENDS", "ClientConfigError", "Limits", "ModelClient", "ModelSpec", "ModelsConfig", "Outcome",
    "Request", "ResponseCache", "RetryPolicy", "Usage", "ask_many", "image_mime", "parse_models",
    "response_key",
]
