"""Persistent probe-response cache and usage log (sqlite under a cache directory).

Why: probing 22 models on ~18k samples (ProactiveBench App. 0.A.8) is hours of paid API calls. A run
that dies half-way, or a rebuild with one more model in the pool, must query only what is
missing. Answers are keyed by (probe identity, prompt sha256, image sha256): the probe identity
covers everything that changes an answer (backend, model, generation settings), never the API
key or endpoint. Only successful answers are cached, so a failed request is retried next run.

sqlite in WAL mode is safe for several Beam worker processes on one machine writing the same
file; each call opens its own short-lived connection so the object stays picklable.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
from contextlib import closing
from typing import Any

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    probe TEXT NOT NULL,
    prompt_sha256 TEXT NOT NULL,
    image_sha256 TEXT NOT NULL,
    raw_answer TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS usage (
    run_id TEXT NOT NULL,
    probe TEXT NOT NULL,
    requests INTEGER NOT NULL,
    retries INTEGER NOT NULL,
    cache_hits INTEGER NOT NULL,
    failures INTEGER NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    created REAL NOT NULL
);
"""


def response_key(probe_identity: str, prompt_sha256: str, image_sha256: str) -> str:
    return hashlib.sha256(f"{probe_identity}\x1f{prompt_sha256}\x1f{image_sha256}".encode()).hexdigest()


class ResponseCache:
    """sqlite-backed answer cache; ``None`` directory means a no-op cache."""

    #: answers are written in small batches: a crash loses at most this many / this long
    FLUSH_EVERY = 32
    FLUSH_SECONDS = 1.0

    def __init__(self, cache_dir: str | None) -> None:
        self.cache_dir = cache_dir
        self.path = os.path.join(cache_dir, "probe_responses.sqlite") if cache_dir else None
        self._pending: list[tuple[Any, ...]] = []
        self._last_flush = time.monotonic()
        if self.path:
            os.makedirs(cache_dir or ".", exist_ok=True)
            with closing(self._connect()) as con:
                con.execute("PRAGMA journal_mode=WAL")
                con.executescript(_SCHEMA)

    def __getstate__(self) -> dict[str, Any]:
        self.flush()
        return dict(self.__dict__)

    def _connect(self) -> sqlite3.Connection:
        assert self.path is not None
        con = sqlite3.connect(self.path, timeout=60)
        # WAL + NORMAL: no fsync per commit (a power cut may lose the last answers, which a
        # re-run simply asks again); the event loop is not blocked on disk syncs.
        con.execute("PRAGMA synchronous=NORMAL")
        return con

    def get_many(self, keys: list[str]) -> dict[str, dict[str, Any]]:
        self.flush()
        if not self.path or not keys:
            return {}
        out: dict[str, dict[str, Any]] = {}
        with closing(self._connect()) as con:
            for i in range(0, len(keys), 500):
                chunk = keys[i : i + 500]
                marks = ",".join("?" * len(chunk))
                rows = con.execute(
                    "SELECT key, raw_answer, prompt_tokens, completion_tokens, created FROM responses "
                    f"WHERE key IN ({marks})",
                    chunk,
                ).fetchall()
                for key, raw, pt, ct, created in rows:
                    out[key] = {
                        "raw_answer": raw,
                        "prompt_tokens": pt,
                        "completion_tokens": ct,
                        "created": created,  # unix time the answer was first stored
                    }
        return out

    def put(
        self,
        key: str,
        probe: str,
        prompt_sha256: str,
        image_sha256: str,
        raw_answer: str,
        prompt_tokens: int = 0,
        completion_tokens: int = 0,
    ) -> None:
        if not self.path:
            return
        self._pending.append(
            (
                key,
                probe,
                prompt_sha256,
                image_sha256,
                raw_answer,
                prompt_tokens,
                completion_tokens,
                time.time(),
            )
        )
        if (
            len(self._pending) >= self.FLUSH_EVERY
            or time.monotonic() - self._last_flush >= self.FLUSH_SECONDS
        ):
            self.flush()

    def flush(self) -> None:
        """Write buffered answers in one transaction."""
        self._last_flush = time.monotonic()
        if not self.path or not self._pending:
            return
        rows, self._pending = self._pending, []
        with closing(self._connect()) as con, con:
            con.executemany("INSERT OR REPLACE INTO responses VALUES (?,?,?,?,?,?,?,?)", rows)

    def count(self) -> int:
        self.flush()
        if not self.path:
            return 0
        with closing(self._connect()) as con:
            return int(con.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def log_usage(self, run_id: str, per_probe: dict[str, dict[str, int]]) -> None:
        """Append one batch's request/token counts (summed later by :meth:`usage`)."""
        if not self.path or not per_probe:
            return
        rows = [
            (
                run_id,
                probe,
                s.get("requests", 0),
                s.get("retries", 0),
                s.get("cache_hits", 0),
                s.get("failures", 0),
                s.get("prompt_tokens", 0),
                s.get("completion_tokens", 0),
                time.time(),
            )
            for probe, s in sorted(per_probe.items())
        ]
        with closing(self._connect()) as con, con:
            con.executemany("INSERT INTO usage VALUES (?,?,?,?,?,?,?,?,?)", rows)

    def usage(self, run_id: str | None = None) -> dict[str, dict[str, int]]:
        """Request and token counts per probe, summed over every batch of ``run_id`` (or all)."""
        if not self.path:
            return {}
        sql = (
            "SELECT probe, SUM(requests), SUM(retries), SUM(cache_hits), SUM(failures), "
            "SUM(prompt_tokens), SUM(completion_tokens) FROM usage"
        )
        args: tuple[Any, ...] = ()
        if run_id is not None:
            sql += " WHERE run_id = ?"
            args = (run_id,)
        sql += " GROUP BY probe ORDER BY probe"
        names = ("requests", "retries", "cache_hits", "failures", "prompt_tokens", "completion_tokens")
        with closing(self._connect()) as con:
            return {
                row[0]: {n: int(v or 0) for n, v in zip(names, row[1:], strict=True)}
                for row in con.execute(sql, args).fetchall()
            }


def identity(backend: str, model: str, settings: dict[str, Any]) -> str:
    """Stable probe identity: backend, model and the answer-changing settings (sorted JSON)."""
    return f"{backend}:{model}:{json.dumps(settings, sort_keys=True, separators=(',', ':'))}"
