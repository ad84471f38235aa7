"""A small stderr progress line with rate and ETA (SPEC §3: long work shows progress).

Why not tqdm or Beam's logging: probe runs take hours, are often piped to a log file, and Beam's
own logs do not say how many requests are left. On a TTY the line is redrawn in place; otherwise
one line is printed at most every ``interval_s`` seconds so logs stay readable.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO


def _fmt_eta(seconds: float) -> str:
    if seconds != seconds or seconds == float("inf"):
        return "?"
    seconds = int(round(seconds))
    h, rem = divmod(seconds, 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}"


class Progress:
    """Counts finished items; prints ``label done/total pct rate ETA`` plus extra counters."""

    def __init__(
        self,
        total: int,
        label: str = "probe",
        enabled: bool = True,
        stream: TextIO | None = None,
        interval_s: float = 0.5,
    ) -> None:
        self.total = total
        self.label = label
        self.enabled = enabled
        self.stream = stream or sys.stderr
        self.interval_s = interval_s
        self.done = 0
        self.extra: dict[str, int] = {}
        self._start = time.monotonic()
        self._last = self._start
        self._tty = bool(getattr(self.stream, "isatty", lambda: False)())
        if not self._tty:
            self.interval_s = max(interval_s, 5.0)

    def advance(self, n: int = 1, **counters: int) -> None:
        self.done += n
        for k, v in counters.items():
            self.extra[k] = self.extra.get(k, 0) + v
        now = time.monotonic()
        if self.enabled and now - self._last >= self.interval_s and self.done < self.total:
            self._last = now
            self._emit(final=False)

    def line(self) -> str:
        elapsed = max(time.monotonic() - self._start, 1e-9)
        rate = self.done / elapsed
        eta = (self.total - self.done) / rate if rate > 0 else float("inf")
        pct = 100.0 * self.done / self.total if self.total else 100.0
        extra = " ".join(f"{k}={v}" for k, v in sorted(self.extra.items()))
        return (
            f"[{self.label}] {self.done}/{self.total} ({pct:.0f}%) {rate:.1f}/s "
            f"ETA {_fmt_eta(eta)} elapsed {_fmt_eta(elapsed)} {extra}"
        ).rstrip()

    def _emit(self, final: bool) -> None:
        end = "\n" if (final or not self._tty) else ""
        prefix = "\r" if self._tty else ""
        self.stream.write(prefix + self.line() + end)
        self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self._emit(final=True)
