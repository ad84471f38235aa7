"""One event loop per process, in a daemon thread, on which every model request runs.

Why not ``asyncio.run`` per batch: a fresh loop per batch meant fresh SDK clients, fresh TCP
connections and fresh TLS handshakes for every Beam bundle, and no way to share a provider's
limits between bundles running at the same time. Here the SDK clients (one per endpoint, key and
timeout), their connection pools and the limit groups live as long as the process; callers block
on their batch's future, whether or not they run an event loop of their own.

The loop thread belongs to the process that started it: after a fork the child starts its own.
At interpreter exit the SDK clients are closed.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import hashlib
import os
import random
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from clients.backends import Backend, connect
from clients.limits import Group
from clients.settings import Limits, ModelSpec

T = TypeVar("T")


class Runtime:
    def __init__(self) -> None:
        self.pid = os.getpid()
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="benchforge-clients",
                                       daemon=True)
        self.thread.start()
        self.rng = random.Random()  # spreads retry delays only; answers never depend on it
        self._backends: dict[tuple[Any, ...], Backend] = {}
        self._groups: dict[tuple[Any, ...], Group] = {}

    # the two registries below are used from the loop thread only
    def backend(self, spec: ModelSpec, limits: Limits) -> Backend:
        secret = hashlib.sha256(spec.api_key().encode()).hexdigest()  # never kept in clear text
        key = (spec.backend, spec.base_url, spec.api_version, secret, limits.timeout_s)
        backend = self._backends.get(key)
        if backend is None:
            backend = self._backends[key] = connect(spec, limits.timeout_s)
        return backend

    def group(self, name: str, limits: Limits) -> Group:
        key = (name, limits.concurrency, limits.requests_per_second)
        group = self._groups.get(key)
        if group is None:
            group = self._groups[key] = Group(limits)
        return group

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        if threading.current_thread() is self.thread:
            coro.close()
            raise RuntimeError("ask_many called from the clients' own event loop")
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return future.result()
        except BaseException:
            future.cancel()  # e.g. KeyboardInterrupt in the caller: stop the batch's requests
            raise

    def close(self) -> None:
        async def close_all() -> None:
            for backend in self._backends.values():
                with contextlib.suppress(Exception):  # closing must not mask anything at exit
                    await backend.aclose()
            self._backends.clear()

        if self.thread.is_alive():
            with contextlib.suppress(Exception):
                asyncio.run_coroutine_threadsafe(close_all(), self.loop).result(timeout=5)
            self.loop.call_soon_threadsafe(self.loop.stop)


_runtime: Runtime | None = None
_lock = threading.Lock()


def runtime() -> Runtime:
    """This process's runtime (started on first use)."""
    global _runtime
    with _lock:
        if _runtime is None or _runtime.pid != os.getpid():
            _runtime = Runtime()
        return _runtime


@atexit.register
def _close_at_exit() -> None:
    if _runtime is not None and _runtime.pid == os.getpid():
        _runtime.close()
