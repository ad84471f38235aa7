"""Persistent response cache and usage log (sqlite under the configured ``cache_dir``).

Why: probing 22 models on ~18k samples (ProactiveBench App. 0.A.8), or generating candidates for
every StreamVibe video, is hours of paid API calls. A run that dies half-way, or a rebuild with
one more model, must ask only what is missing. Answers are keyed by (model identity, prompt hash,
images hash) — never the API key or the endpoint — and only usable answers are stored, so a
failed request is asked again on the next run.

Writes are buffered (at most ``FLUSH_EVERY`` answers or ``FLUSH_SECONDS``) and flushed at the end
of every ``ask_many`` batch, by :meth:`ModelClient.close` (a Beam DoFn's ``teardown``) and at
interpreter exit, so no answer a worker paid for is lost. One cache object per directory and
process (:meth:`ResponseCache.open`) holds the buffer and one sqlite connection, shared by the
threads of the process under a lock: opening and closing a connection per flush cost ≈10 ms of
blocked event loop each (closing the last connection of a WAL database checkpoints it), which
showed in ``benchmarks/probe_orchestration.py``. sqlite in WAL mode is safe for several Beam worker
processes writing the same file; a pickled cache is reopened in the receiving process.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import sqlite3
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from clients.request import Request
from clients.usage import COUNTERS, Usage

FILENAME = "responses.sqlite"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    prompt_sha256 TEXT NOT NULL,
    images_sha256 TEXT NOT NULL,
    raw_answer TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS usage (
    run_id TEXT NOT NULL,
    model TEXT NOT NULL,
    requests INTEGER NOT NULL,
    retries INTEGER NOT NULL,
    cache_hits INTEGER NOT NULL,
    failures INTEGER NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    created REAL NOT NULL
);
"""


def response_key(identity: str, request: Request) -> str:
    """The cache key of ``request`` asked of the model with ``identity``."""
    parts = f"{identity}\x1f{request.prompt_sha256}\x1f{request.images_sha256}"
    return hashlib.sha256(parts.encode()).hexdigest()


@dataclass(frozen=True)
class Cached:
    raw_answer: str
    prompt_tokens: int
    completion_tokens: int
    created: float  # unix time the answer was first stored


class ResponseCache:
    """sqlite-backed answer cache of one directory; ``None`` means no cache (nothing stored)."""

    FLUSH_EVERY = 32
    FLUSH_SECONDS = 1.0

    _open: dict[tuple[int, str], ResponseCache] = {}
    _open_lock = threading.Lock()

    def __init__(self, cache_dir: str | None) -> None:
        self.cache_dir = cache_dir
        self.path = os.path.join(cache_dir, FILENAME) if cache_dir else None
        self._pending: list[tuple[Any, ...]] = []
        self._lock = threading.Lock()  # guards the buffer
        self._db_lock = threading.Lock()  # guards the connection
        self._con: sqlite3.Connection | None = None
        self._last_flush = time.monotonic()
        if self.path:
            os.makedirs(cache_dir or ".", exist_ok=True)
            with self._db() as con:
                con.execute("PRAGMA journal_mode=WAL")
                con.executescript(_SCHEMA)

    @classmethod
    def open(cls, cache_dir: str | None) -> ResponseCache:
        """The process's cache object for ``cache_dir`` (one write buffer per directory)."""
        if not cache_dir:
            return cls(None)
        key = (os.getpid(), os.path.abspath(cache_dir))
        with cls._open_lock:
            cache = cls._open.get(key)
            if cache is None:
                cache = cls._open[key] = cls(cache_dir)
            return cache

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled (to a Beam worker) as a reference: unpickling opens that process's cache."""
        self.flush()
        return (ResponseCache.open, (self.cache_dir,))

    @contextmanager
    def _db(self) -> Iterator[sqlite3.Connection]:
        """The process's connection to the cache file, for one operation at a time."""
        assert self.path is not None
        with self._db_lock:
            if self._con is None:
                self._con = sqlite3.connect(self.path, timeout=60, check_same_thread=False)
                # WAL + NORMAL: no fsync per commit (a power cut may lose the last answers, which
                # a rerun simply asks again); the event loop is not blocked on disk syncs.
                self._con.execute("PRAGMA synchronous=NORMAL")
            yield self._con

    def close(self) -> None:
        """Flush, then close the connection (it is reopened on next use)."""
        self.flush()
        with self._db_lock:
            if self._con is not None:
                self._con.close()
                self._con = None

    def get_many(self, keys: list[str]) -> dict[str, Cached]:
        self.flush()
        if not self.path or not keys:
            return {}
        out: dict[str, Cached] = {}
        with self._db() as con:
            for i in range(0, len(keys), 500):
                chunk = keys[i : i + 500]
                rows = con.execute(
                    "SELECT key, raw_answer, prompt_tokens, completion_tokens, created FROM responses "
                    f"WHERE key IN ({','.join('?' * len(chunk))})", chunk).fetchall()
                for key, raw, pt, ct, created in rows:
                    out[key] = Cached(raw, pt, ct, created)
        return out

    def put(self, key: str, identity: str, request: Request, raw_answer: str, prompt_tokens: int = 0,
            completion_tokens: int = 0, created: float | None = None) -> None:
        if not self.path:
            return
        row = (key, identity, request.prompt_sha256, request.images_sha256, raw_answer, prompt_tokens,
               completion_tokens, time.time() if created is None else created)
        with self._lock:
            self._pending.append(row)
            due = (len(self._pending) >= self.FLUSH_EVERY
                   or time.monotonic() - self._last_flush >= self.FLUSH_SECONDS)
        if due:
            self.flush()

    def flush(self) -> None:
        """Write the buffered answers in one transaction."""
        with self._lock:
            self._last_flush = time.monotonic()
            rows, self._pending = self._pending, []
        if not self.path or not rows:
            return
        with self._db() as con, con:
            con.executemany("INSERT OR REPLACE INTO responses VALUES (?,?,?,?,?,?,?,?)", rows)

    def count(self) -> int:
        self.flush()
        if not self.path:
            return 0
        with self._db() as con:
            return int(con.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def log_usage(self, run_id: str, per_model: Mapping[str, Usage]) -> None:
        """Append one batch's counts per model (summed later by :meth:`usage`)."""
        if not self.path or not per_model:
            return
        now = time.time()
        rows = [(run_id, name, *(getattr(u, c) for c in COUNTERS), now)
                for name, u in sorted(per_model.items())]
        with self._db() as con, con:
            con.executemany("INSERT INTO usage VALUES (?,?,?,?,?,?,?,?,?)", rows)

    def usage(self, run_id: str | None = None) -> dict[str, dict[str, int]]:
        """Counts per model, summed over every logged batch of ``run_id`` (or of all runs)."""
        if not self.path:
            return {}
        sums = ", ".join(f"SUM({c})" for c in COUNTERS)
        sql, args = f"SELECT model, {sums} FROM usage", ()
        if run_id is not None:
            sql, args = sql + " WHERE run_id = ?", (run_id,)
        with self._db() as con:
            return {row[0]: {c: int(v or 0) for c, v in zip(COUNTERS, row[1:], strict=True)}
                    for row in con.execute(sql + " GROUP BY model ORDER BY model", args).fetchall()}


@atexit.register
def _flush_at_exit() -> None:
    """A worker that exits without a teardown still keeps the answers it paid for."""
    for (pid, _), cache in list(ResponseCache._open.items()):
        if pid == os.getpid():
            cache.close()
