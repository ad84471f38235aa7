"""Keep a build's resident memory at what it holds, not at the largest buffer it ever freed.

Why: a build moves many transient multi-megabyte buffers — Beam data-plane messages between
the runner and its worker processes, encoded shuffle elements, frames read back from the blob
store, the Arrow tables and Parquet pages of a row group. glibc's allocator raises its mmap
threshold each time such a buffer is freed (up to 32 MiB on 64-bit), so the next ones are carved
from the heap instead of mapped, and a fragmented heap is never given back: each process kept
the high-water mark of everything it had held. Measured on a 100× ProactiveBench build with two
workers (benchmarks/scale_proactivebench.py, docs/scaling.md): the driver grew from ~320 to
~580 MB and each worker from ~330 to ~600 MB while the release was written, against ~300–360 MB
each at 1×; with the threshold fixed and written row groups released, 446 / 471 / 523 MB.

* :func:`bound_heap` fixes glibc's mmap threshold (which also turns the dynamic raise off) in
  this process, and in the environment so the worker processes a local runner starts inherit it.
* :func:`release_memory` returns what Arrow's pool and glibc's heap hold free to the system —
  called after each Parquet row group is written.

glibc's trim threshold stays at its default (128 KiB): fixing the mmap threshold freezes it there,
and then frees at the top of the heap give back pages the next allocation faults in again. Set
``MALLOC_TRIM_THRESHOLD_=67108864`` in the environment (the workers inherit it) to trade memory
for time: in 100× two-worker builds taking turns with the default (docs/scaling.md) it cut the
workers' system time from ~17 s to ~8 s and the build from 69–79 s to 64–67 s, but the peak
rose from 1,368–1,388 MB to 1,487–1,497 MB — over 1.5× the 1× peak, so it is not the default.

Both do nothing where the C library is not glibc (musl, macOS, Windows); neither changes a byte
of what a build writes.
"""

from __future__ import annotations

import ctypes
import os
from typing import Any

MMAP_THRESHOLD = 128 * 1024  # glibc's default starting value, kept fixed
_M_MMAP_THRESHOLD = -3  # mallopt parameter (malloc.h)
ENV = "MALLOC_MMAP_THRESHOLD_"  # glibc's environment alias of glibc.malloc.mmap_threshold


def _glibc() -> Any | None:
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt, libc.malloc_trim  # noqa: B018 - both exist only in glibc
    except (OSError, AttributeError):
        return None
    return libc


_LIBC = _glibc()


def bound_heap() -> bool:
    """Fix the mmap threshold at :data:`MMAP_THRESHOLD` in this process and (unless the user set
    it) in the environment worker processes inherit; True when this process applied it. Buffers
    at or above the threshold are mapped and unmapped on their own, so freeing one gives its
    memory back at once."""
    if _LIBC is None:
        return False
    os.environ.setdefault(ENV, str(MMAP_THRESHOLD))
    return bool(_LIBC.mallopt(_M_MMAP_THRESHOLD, int(os.environ[ENV])))


def release_memory() -> None:
    """Give memory this process has freed back to the system: the pages Arrow's pool caches and
    the free pages of glibc's heaps (``malloc_trim``)."""
    import pyarrow as pa

    pa.default_memory_pool().release_unused()
    if _LIBC is not None:
        _LIBC.malloc_trim(0)
