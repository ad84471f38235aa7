"""The response cache keeps every answer a process paid for: flushed at the end of each batch, by
``close()`` (a DoFn's teardown) and at interpreter exit; rows and usage as they are stored."""

from __future__ import annotations

import pickle
import sqlite3
import subprocess
import sys
import textwrap
from contextlib import closing
from pathlib import Path

from clients import ModelSpec, Request, ResponseCache, Usage, response_key
from clients.cache import FILENAME

REPO = Path(__file__).resolve().parents[2]


def rows_on_disk(cache_dir: Path) -> int:
    """Rows another process would see (reading the file directly, without flushing)."""
    with closing(sqlite3.connect(cache_dir / FILENAME)) as con:
        return int(con.execute("SELECT COUNT(*) FROM responses").fetchone()[0])


def put(cache: ResponseCache, n: int, start: int = 0) -> list[str]:
    ident = ModelSpec("openai", "m").identity()
    keys = []
    for i in range(start, start + n):
        req = Request.of(str(i), f"q{i}")
        keys.append(response_key(ident, req))
        cache.put(keys[-1], ident, req, f"a{i}", 10, 1)
    return keys


def test_answers_are_buffered_then_flushed_by_close(tmp_path: Path) -> None:
    cache = ResponseCache.open(str(tmp_path))
    assert ResponseCache.open(str(tmp_path)) is cache  # one write buffer per directory and process
    keys = put(cache, 3)
    assert rows_on_disk(tmp_path) == 0  # buffered: a worker that dies here would lose them ...
    from clients import ModelClient

    ModelClient(ModelSpec("openai", "m"), cache_dir=str(tmp_path)).close()  # ... a teardown keeps them
    assert rows_on_disk(tmp_path) == 3
    hit = cache.get_many(keys)[keys[0]]
    assert (hit.raw_answer, hit.prompt_tokens, hit.completion_tokens) == ("a0", 10, 1)
    put(cache, ResponseCache.FLUSH_EVERY, start=3)  # a full buffer is written at once
    assert rows_on_disk(tmp_path) == 3 + ResponseCache.FLUSH_EVERY


def test_buffered_answers_are_flushed_at_interpreter_exit(tmp_path: Path) -> None:
    script = textwrap.dedent(f"""
        from clients import ModelSpec, Request, ResponseCache, response_key
        cache = ResponseCache.open({str(tmp_path)!r})
        ident = ModelSpec("gemini", "m").identity()
        for i in range(5):
            req = Request.of(str(i), f"q{{i}}")
            cache.put(response_key(ident, req), ident, req, "answer")
        # no flush, no close: the process just ends
    """)
    subprocess.run([sys.executable, "-c", script], check=True, cwd=REPO, env={"PYTHONPATH": str(REPO)})
    assert rows_on_disk(tmp_path) == 5


def test_usage_log_sums_batches_per_run(tmp_path: Path) -> None:
    cache = ResponseCache.open(str(tmp_path))
    cache.log_usage("run-1", {"m": Usage(requests=3, retries=1, faults={"429": 1}, prompt_tokens=30)})
    cache.log_usage("run-1", {"m": Usage(requests=2, cache_hits=4), "n": Usage(failures=1)})
    cache.log_usage("run-2", {"m": Usage(requests=100)})
    assert cache.usage("run-1") == {
        "m": {"requests": 5, "retries": 1, "cache_hits": 4, "failures": 0, "prompt_tokens": 30,
              "completion_tokens": 0},
        "n": {"requests": 0, "retries": 0, "cache_hits": 0, "failures": 1, "prompt_tokens": 0,
              "completion_tokens": 0},
    }
    assert cache.usage()["m"]["requests"] == 105


def test_a_pickled_cache_is_the_receiving_process_cache(tmp_path: Path) -> None:
    cache = ResponseCache.open(str(tmp_path))
    put(cache, 2)
    clone = pickle.loads(pickle.dumps(cache))  # pickling flushes: nothing is lost on the way
    assert clone is cache and rows_on_disk(tmp_path) == 2
    assert ResponseCache.open(None).count() == 0  # no cache directory: nothing is stored


def test_usage_arithmetic() -> None:
    a = Usage(requests=3, faults={"429": 2})
    b = Usage(requests=1, retries=1, faults={"429": 1, "timeout": 1})
    assert (a + b).as_dict() == {"requests": 4, "retries": 1, "cache_hits": 0, "failures": 0,
                                 "prompt_tokens": 0, "completion_tokens": 0, "retry_429": 3,
                                 "retry_timeout": 1}
    assert ((a + b) - b).faults == {"429": 2}
