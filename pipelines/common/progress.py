"""Progress of long work on stderr (item counts, rate, ETA), outside Beam's own logging.

Beam's logs tell a runner's story, not the user's. Each worker process keeps its own counters
per stage and prints a line at most every ``interval`` seconds; with several workers each
reports its share, labelled with its pid.
"""

from __future__ import annotations

import os
import sys
import time

import apache_beam as beam


class _Meter:
    def __init__(self, stage: str, interval: float) -> None:
        self.stage = stage
        self.interval = interval
        self.count = 0
        self.started = time.monotonic()
        self.last = 0.0

    def tick(self, total: int | None) -> None:
        self.count += 1
        now = time.monotonic()
        if now - self.last < self.interval and self.count != total:
            return
        self.last = now
        elapsed = max(now - self.started, 1e-9)
        rate = self.count / elapsed
        line = f"[benchforge] {self.stage}: {self.count}"
        if total:
            eta = (total - self.count) / rate if rate > 0 else float("inf")
            line += f"/{total} ({100 * self.count / total:.0f}%) ETA {max(eta, 0):.0f}s"
        line += f" {rate:.1f}/s pid {os.getpid()}"
        print(line, file=sys.stderr, flush=True)


_METERS: dict[str, _Meter] = {}


class ReportProgress(beam.DoFn):
    """Pass-through DoFn that reports how many elements went through ``stage``.

    ``total`` (optional side input) is the number of elements expected overall; with several
    workers each one's count is its share, so the ETA is a per-worker estimate.
    """

    def __init__(self, stage: str, interval: float = 2.0) -> None:
        self.stage = stage
        self.interval = interval

    def process(self, element, total=None):
        meter = _METERS.setdefault(self.stage, _Meter(self.stage, self.interval))
        meter.tick(total)
        yield element
