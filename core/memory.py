"""Keep a build's resident memory at what it holds, not at the largest buffer it ever freed.

Why: a build moves many transient multi-megabyte buffers — Beam data-plane messages between
the runner and its worker processes, encoded shuffle elements, frames read back from the blob
store, the Arrow tables and Parquet pages of a row group. glibc's allocator raises its mmap
threshold each time such a buffer is freed (up to 32 MiB on 64-bit), so the next ones are carved
from the heap instead of mapped, and a fragmented heap is never given back: each process kept
the high-water mark of everything it had held (measured: docs/scaling.md, "Why memory stays
flat").

* :func:`bound_heap` fixes glibc's mmap threshold (which also turns the dynamic raise off), its
  trim threshold and its number of arenas in this process, and in the environment so the worker
  processes a local runner starts inherit them.
* :func:`release_memory` returns what Arrow's pool and glibc's heap hold free to the system —
  called after each Parquet row group is written.
* :func:`trim_periodically` gives glibc's free heap pages back once a second from a daemon
  thread, in the driver (from :func:`bound_heap`) and in every worker that loads sources or
  writes shards. Why: the trim threshold only returns free memory at the *top* of a heap; the
  embedded runner's driver holds the shuffled records of a whole stage, frees them when the
  stage is done and allocates the next stage's, and the freed chunks in the middle of its heap
  stayed resident. Once a second costs little: the pages a process reuses within
  the second are not given back, only what stayed free.

The values were chosen by measurement (docs/scaling.md, measurement log). At glibc's starting
values (128 KiB for both) every buffer over 128 KiB was mapped and zero-filled anew and every
free at the top of a heap gave its pages back to be faulted in again, which cost two workers
more system time than their gain. With the mmap threshold at 4 MiB and the trim threshold at 16
MiB, buffers up to a Parquet page or a frame are reused from the heap, while the multi-megabyte
data-plane messages and row groups are still mapped on their own and a heap keeps at most 16 MiB
free at its top. Arenas: glibc gives each new thread that allocates an arena of its own, up to
eight per core, and each arena keeps its own free pages and fragments; a build's worker runs
Beam's bundle threads, gRPC's threads and the frame encoder's thread, and its resident memory
grew by each of their arenas. Two arenas keep that bounded (measured: docs/scaling.md, "Arenas
and row groups"). The environment variables (``MALLOC_MMAP_THRESHOLD_``,
``MALLOC_TRIM_THRESHOLD_``, ``MALLOC_ARENA_MAX``) override each value.

None of this does anything where the C library is not glibc (musl, macOS, Windows), and none of
it changes a byte of what a build writes.
"""

from __future__ import annotations

import ctypes
import os
import threading
import time
from typing import Any

MMAP_THRESHOLD = 4 * 1024 * 1024  # buffers this large or larger are mapped on their own
TRIM_THRESHOLD = 16 * 1024 * 1024  # free memory a heap may keep at its top
ARENA_MAX = 2  # malloc arenas a process may have, whatever its threads
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD, _M_ARENA_MAX = -1, -3, -8  # mallopt parameters (malloc.h)
ENV = "MALLOC_MMAP_THRESHOLD_"  # glibc's environment alias of glibc.malloc.mmap_threshold
TRIM_ENV = "MALLOC_TRIM_THRESHOLD_"  # ... and of glibc.malloc.trim_threshold
ARENA_ENV = "MALLOC_ARENA_MAX"  # ... and of glibc.malloc.arena_max


def _glibc() -> Any | None:
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt, libc.malloc_trim  # noqa: B018 - both exist only in glibc
    except (OSError, AttributeError):
        return None
    return libc


_LIBC = _glibc()


def bound_heap() -> bool:
    """Fix the mmap threshold at :data:`MMAP_THRESHOLD`, the trim threshold at
    :data:`TRIM_THRESHOLD` and the arenas at :data:`ARENA_MAX` in this process and (unless the
    user set them) in the environment worker processes inherit; True when this process applied
    all three. Buffers at or above the mmap threshold are mapped and unmapped on their own, so
    freeing one gives its memory back at once; a heap gives back what is free at its top beyond
    the trim threshold; threads started later share the arenas there are (an arena already made
    stays)."""
    if _LIBC is None:
        return False
    os.environ.setdefault(ENV, str(MMAP_THRESHOLD))
    os.environ.setdefault(TRIM_ENV, str(TRIM_THRESHOLD))
    os.environ.setdefault(ARENA_ENV, str(ARENA_MAX))
    mapped = _LIBC.mallopt(_M_MMAP_THRESHOLD, int(os.environ[ENV]))
    trimmed = _LIBC.mallopt(_M_TRIM_THRESHOLD, int(os.environ[TRIM_ENV]))
    shared = _LIBC.mallopt(_M_ARENA_MAX, int(os.environ[ARENA_ENV]))
    trim_periodically()
    return bool(mapped and trimmed and shared)


TRIM_PERIOD_S = 1.0
TRIM_PERIOD_ENV = "BENCHFORGE_MALLOC_TRIM_S"  # seconds between trims; 0 turns the trimmer off
_trimming_pid: int | None = None  # the process whose trimmer runs (a fork starts its own)


def trim_periodically() -> bool:
    """Start (once per process) a daemon thread that calls ``malloc_trim(0)`` every
    :data:`TRIM_PERIOD_S` seconds (``BENCHFORGE_MALLOC_TRIM_S`` overrides; workers inherit it);
    True when one runs. Nothing on a C library other than glibc."""
    global _trimming_pid
    period_s = float(os.environ.get(TRIM_PERIOD_ENV, TRIM_PERIOD_S))
    if _LIBC is None or period_s <= 0:
        return False
    if _trimming_pid == os.getpid():
        return True
    _trimming_pid = os.getpid()

    def trim() -> None:
        while True:
            time.sleep(period_s)
            _LIBC.malloc_trim(0)

    threading.Thread(target=trim, name="benchforge-malloc-trim", daemon=True).start()
    return True


def release_memory() -> None:
    """Give memory this process has freed back to the system: the pages Arrow's pool caches and
    the free pages of glibc's heaps (``malloc_trim``)."""
    import pyarrow as pa

    pa.default_memory_pool().release_unused()
    if _LIBC is not None:
        _LIBC.malloc_trim(0)
