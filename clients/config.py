"""The one config shape for model settings and the response cache, shared by every config file.

Why one shape: the leak filter's probe pool, the StreamVibe generator and the ProReady models used
to keep their cache directory, retries and limits at three different places. Every config now has
one ``models:`` section::

    models:
      cache_dir: .cache/proready-models   # sqlite response cache; null = no cache
      retry: {max_attempts: 5, base_delay_s: 1.0, max_delay_s: 30.0}
      limits:                             # per limit group (a model's group: its backend, or
        openai: {concurrency: 8, requests_per_second: 5, timeout_s: 60}   # its limit_group)
      vlm: {backend: openai, model: Qwen/Qwen2-VL-7B-Instruct, base_url: http://localhost:8000/v1}
      llm: null                           # a role the caller declares; null = not configured

The caller declares its roles (``vlm``/``llm``, ``generator``; the leak filter none, its pool is
its own list of the same model entries). Errors name the file and the key.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clients.errors import ClientConfigError
from clients.settings import Limits, ModelSpec, RetryPolicy

if TYPE_CHECKING:
    from clients.client import ModelClient

SECTION_KEYS = ("cache_dir", "retry", "limits")


@dataclass(frozen=True)
class ModelsConfig:
    """A parsed ``models:`` section: cache directory, retry policy, limits, models by role."""

    cache_dir: str | None = None
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    limits: Mapping[str, Limits] = field(default_factory=dict)
    roles: Mapping[str, ModelSpec | None] = field(default_factory=dict)
    source: str = "<dict>"

    def limits_for(self, spec: ModelSpec) -> Limits:
        return self.limits.get(spec.limit_group) or Limits()

    def spec(self, role: str) -> ModelSpec | None:
        return self.roles.get(role)

    def client(self, spec_or_role: ModelSpec | str, label: str = "") -> ModelClient:
        """A client for a role (or a model entry) with this section's cache, retry and limits."""
        from clients.client import ModelClient

        spec = self.roles.get(spec_or_role) if isinstance(spec_or_role, str) else spec_or_role
        if spec is None:
            raise ClientConfigError(f"{self.source}: models.{spec_or_role}: no model configured")
        return ModelClient(spec, cache_dir=self.cache_dir, retry=self.retry,
                           limits=self.limits_for(spec), label=label or spec.name)


def _settings(cls: type, raw: Any, where: str) -> Any:
    if raw is None:
        return cls()
    if not isinstance(raw, Mapping):
        raise ClientConfigError(f"{where}: must be a mapping, got {type(raw).__name__}")
    known = {f.name for f in fields(cls)}
    unknown = sorted(set(raw) - known)
    if unknown:
        raise ClientConfigError(f"{where}: unknown keys {unknown}; known: {sorted(known)}")
    try:
        return cls(**raw)
    except (TypeError, ValueError) as exc:
        raise ClientConfigError(f"{where}: {exc}") from None


def parse_models(raw: Any, source: str, *, roles: tuple[str, ...] = (),
                 defaults: Mapping[str, Any] | None = None,
                 base_dir: str | os.PathLike[str] | None = None) -> ModelsConfig:
    """Parse a ``models:`` section read from ``source`` (a file name, for error messages).

    ``roles``: the model entries this caller reads; ``defaults``: settings those entries leave
    out (e.g. ``max_tokens``); ``base_dir``: what a relative ``cache_dir`` is relative to (the
    working directory when ``None``).
    """
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        raise ClientConfigError(f"{source}: models: must be a mapping, got {type(raw).__name__}")
    unknown = sorted(set(raw) - set(SECTION_KEYS) - set(roles))
    if unknown:
        expected = ", ".join(SECTION_KEYS + roles)
        raise ClientConfigError(f"{source}: models.{unknown[0]}: unknown key (expected {expected})")
    cache_dir = raw.get("cache_dir")
    if cache_dir is not None:
        if not isinstance(cache_dir, str | os.PathLike) or not str(cache_dir):
            raise ClientConfigError(f"{source}: models.cache_dir: must be a directory path or null")
        cache_dir = str(Path(base_dir) / cache_dir) if base_dir is not None else str(cache_dir)
    limits_raw = raw.get("limits") or {}
    if not isinstance(limits_raw, Mapping):
        raise ClientConfigError(f"{source}: models.limits: must map a limit group to its limits")
    limits = {str(g): _settings(Limits, v, f"{source}: models.limits.{g}") for g, v in limits_raw.items()}
    models = {role: (ModelSpec.from_dict(raw[role], f"{source}: models.{role}", defaults)
                     if raw.get(role) is not None else None) for role in roles}
    return ModelsConfig(cache_dir=cache_dir, retry=_settings(RetryPolicy, raw.get("retry"),
                                                             f"{source}: models.retry"),
                        limits=limits, roles=models, source=source)
