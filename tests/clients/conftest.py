"""Fixtures for the client-layer tests: the local two-protocol server, real PNG images, and
clients of either backend pointed at it (no SDK is mocked)."""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from clients import Limits, ModelClient, ModelSpec, RetryPolicy
from tests.support.protocol_server import ProtocolServer

KEY = "sk-test-3b9f0c1d-never-log-me"
FAST = RetryPolicy(max_attempts=4, base_delay_s=0.001, max_delay_s=0.01)


def png(color: tuple[int, int, int], size: int = 16) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (size, size), color).save(buf, format="PNG")
    return buf.getvalue()


@pytest.fixture
def server() -> Iterator[ProtocolServer]:
    with ProtocolServer() as s:
        yield s


@pytest.fixture
def api_key(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("BF_CLIENTS_TEST_KEY", KEY)
    return KEY


@pytest.fixture
def make_client(server: ProtocolServer, tmp_path: Path, api_key: str) -> Callable[..., ModelClient]:
    """``make_client(backend, model=…, retry=…, limits=…, cache=True, **spec settings)``."""

    def make(backend: str, model: str = "m-1", *, retry: RetryPolicy = FAST,
             limits: Limits | None = None, cache: bool = True, **settings: Any) -> ModelClient:
        base = server.openai_base_url if backend == "openai" else server.base_url
        spec = ModelSpec(backend, model, base_url=base, api_key_env="BF_CLIENTS_TEST_KEY", **settings)
        return ModelClient(spec, cache_dir=str(tmp_path / "cache") if cache else None, retry=retry,
                           limits=limits or Limits(concurrency=4, timeout_s=1.0))

    return make
