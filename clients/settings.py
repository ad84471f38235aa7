"""What a model client is configured with: the model entry, the retry policy, the request limits.

Why these are separate objects: a model entry (:class:`ModelSpec`) says *which* model answers and
with which answer-changing settings — it is part of the cache key; the retry policy and the limits
say *how* requests are sent — they never change an answer, so a rerun with other limits reuses
every cached answer. Secrets are never held here, only the name of the environment variable or
the file outside the repository they come from (:meth:`ModelSpec.api_key` reads them on demand).
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from clients.errors import ClientConfigError

BACKENDS = ("openai", "gemini")


@dataclass(frozen=True)
class RetryPolicy:
    """Bounded exponential back-off with equal jitter: attempt ``n`` that failed waits a delay in
    ``[d/2, d]`` with ``d = min(max_delay_s, base_delay_s · 2^(n-1))``, and at least the server's
    ``Retry-After`` (capped at ``max_delay_s``)."""

    max_attempts: int = 5
    base_delay_s: float = 1.0
    max_delay_s: float = 30.0

    def __post_init__(self) -> None:
        if int(self.max_attempts) < 1:
            raise ValueError(f"max_attempts must be >= 1, got {self.max_attempts}")
        if self.base_delay_s < 0 or self.max_delay_s < 0:
            raise ValueError("base_delay_s and max_delay_s must be >= 0")

    def delay(self, attempt: int, rng: random.Random, retry_after: float | None = None) -> float:
        d = min(self.max_delay_s, self.base_delay_s * (2 ** (attempt - 1)))
        d = d / 2 + rng.uniform(0, d / 2)
        if retry_after is not None:
            d = max(d, min(retry_after, self.max_delay_s))
        return d


@dataclass(frozen=True)
class Limits:
    """Request limits of one limit group (by default: all models of one backend) in one process.

    ``concurrency`` bounds the requests in progress, retries and back-off included;
    ``requests_per_second`` spaces attempt starts; ``timeout_s`` bounds one attempt.
    """

    concurrency: int = 4
    requests_per_second: float | None = None
    timeout_s: float = 60.0

    def __post_init__(self) -> None:
        if int(self.concurrency) < 1:
            raise ValueError(f"concurrency must be >= 1, got {self.concurrency}")
        if self.requests_per_second is not None and self.requests_per_second <= 0:
            raise ValueError("requests_per_second must be > 0 (or null for no limit)")
        if self.timeout_s <= 0:
            raise ValueError("timeout_s must be > 0")


@dataclass(frozen=True)
class ModelSpec:
    """One model: backend, name and the settings that change its answers; secrets by reference.

    ``api_key_env`` names one or more environment variables (the first one set wins);
    ``api_key_file`` a file outside the repository. ``max_tokens=None`` sends no output cap.
    """

    backend: str
    model: str
    name: str = ""
    limit_group: str = ""
    base_url: str | None = None
    api_key_env: tuple[str, ...] = ()
    api_key_file: str | None = None
    api_version: str | None = None
    temperature: float = 0.0
    max_tokens: int | None = None
    system_prompt: str | None = None

    def __post_init__(self) -> None:
        if self.backend not in BACKENDS:
            raise ClientConfigError(f"backend must be one of {BACKENDS}, got {self.backend!r}")
        if isinstance(self.api_key_env, str):
            object.__setattr__(self, "api_key_env", (self.api_key_env,))
        if not self.name:
            object.__setattr__(self, "name", self.model)
        if not self.limit_group:
            object.__setattr__(self, "limit_group", self.backend)

    @staticmethod
    def from_dict(entry: Mapping[str, Any], where: str,
                  defaults: Mapping[str, Any] | None = None) -> ModelSpec:
        """A model entry of a config file; ``where`` (``"<file>: models.vlm"``) starts every error
        message, ``defaults`` fill settings the entry leaves out."""
        if not isinstance(entry, Mapping):
            raise ClientConfigError(f"{where}: a model entry must be a mapping, got {type(entry).__name__}")
        if "api_key" in entry:
            raise ClientConfigError(
                f"{where}.api_key: put the API key in the environment (api_key_env) or in a file "
                "outside the repository (api_key_file), never in the config")
        known = {f.name for f in fields(ModelSpec)}
        unknown = sorted(set(entry) - known)
        if unknown:
            raise ClientConfigError(f"{where}: unknown keys {unknown}; known: {sorted(known)}")
        for key in ("backend", "model"):
            if not entry.get(key):
                raise ClientConfigError(f"{where}.{key}: required")
        merged = {**(defaults or {}), **{k: v for k, v in entry.items() if v is not None}}
        env = merged.get("api_key_env")
        if env is not None:
            merged["api_key_env"] = (env,) if isinstance(env, str) else tuple(env)
        try:
            return ModelSpec(**merged)
        except ClientConfigError as exc:
            raise ClientConfigError(f"{where}: {exc}") from None
        except (TypeError, ValueError) as exc:
            raise ClientConfigError(f"{where}: {exc}") from None

    def answer_settings(self) -> dict[str, Any]:
        """Settings that change the answer (part of the cache key); never secrets or URLs."""
        return {
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "system_prompt": self.system_prompt or "",
        }

    def identity(self) -> str:
        """Backend, model and answer-changing settings: what a cached answer is an answer of."""
        settings = json.dumps(self.answer_settings(), sort_keys=True, separators=(",", ":"))
        return f"{self.backend}:{self.model}:{settings}"

    def api_key(self) -> str:
        """The key from the environment or the key file; a named-but-missing key is an error."""
        if self.api_key_env:
            for env in self.api_key_env:
                key = os.environ.get(env)
                if key:
                    return key
            names = ", ".join(self.api_key_env)
            what = (f"environment variable {names} is not set" if len(self.api_key_env) == 1
                    else f"none of {names} is set")
            raise ClientConfigError(f"model {self.name}: {what}")
        if self.api_key_file:
            path = os.path.expanduser(self.api_key_file)
            if not os.path.isfile(path):
                raise ClientConfigError(f"model {self.name}: api_key_file {path} does not exist")
            with open(path, encoding="utf-8") as fh:
                return fh.read().strip()
        return "not-needed"  # local OpenAI-compatible servers often run without auth
