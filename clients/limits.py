"""Concurrency and rate limits of one limit group, shared by every request of a process.

Why per process and not per batch: a Beam worker runs several bundles at once, and a provider's
limits hold for all of them together; the groups live on the process's client event loop
(:mod:`clients.runtime`) for as long as the process does.
"""

from __future__ import annotations

import asyncio
import time

from clients.settings import Limits


class RateLimiter:
    """Spacing limiter (GCRA, burst 1): at most ``rate`` attempt starts per second."""

    def __init__(self, rate: float | None) -> None:
        self.interval = 1.0 / rate if rate else 0.0
        self._next = 0.0

    async def acquire(self) -> None:
        if not self.interval:
            return
        now = time.monotonic()
        slot = max(self._next, now)
        self._next = slot + self.interval
        if slot > now:
            await asyncio.sleep(slot - now)


class Group:
    """The slots (``concurrency``) and the rate limiter of one limit group."""

    def __init__(self, limits: Limits) -> None:
        self.slots = asyncio.Semaphore(int(limits.concurrency))
        self.limiter = RateLimiter(limits.requests_per_second)
