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
  It raises glibc's trim threshold with it: fixing the mmap threshold also freezes the trim
  threshold at 128 KiB, and then every free at the top of the heap gave pages back that the
  next allocation faulted in again — 7.5 M page faults and 15 s of system time in the workers of
  a 100× two-worker build, 1.6 M and 7 s with 64 MiB. Memory still goes back at once where it
  matters: large buffers are mapped, and :func:`release_memory` trims after each row group.
* :func:`release_memory` returns what Arrow's pool and glibc's heap hold free to the system —
  called after each Parquet row group is written.

Both do nothing where the C library is not glibc (musl, macOS, Windows); neither changes a byte
of what a build writes.
"""

from __future__ import annotations

import ctypes
import os
from typing import Any

MMAP_THRESHOLD = 128 * 1024  # glibc's default starting value, kept fixed
TRIM_THRESHOLD = 64 * 1024 * 1024  # free top-of-heap bytes kept before glibc gives them back
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # mallopt parameters (malloc.h)
ENV = "MALLOC_MMAP_THRESHOLD_"  # glibc's environment alias of glibc.malloc.mmap_threshold
TRIM_ENV = "MALLOC_TRIM_THRESHOLD_"  # ... and of glibc.malloc.trim_threshold


def _glibc() -> Any | None:
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt, libc.malloc_trim  # noqa: B018 - both exist only in glibc
    except (OSError, AttributeError):
        return None
    return libc


_LIBC = _glibc()


def bound_heap() -> bool:
    """Fix the mmap threshold at :data:`MMAP_THRESHOLD` and the trim threshold at
    :data:`TRIM_THRESHOLD` in this process and (unless the user set them) in the environment
    worker processes inherit; True when this process applied both. Buffers at or above the mmap
    threshold are mapped and unmapped on their own, so freeing one gives its memory back at
    once."""
    if _LIBC is None:
        return False
    applied = True
    for env, default, param in ((ENV, MMAP_THRESHOLD, _M_MMAP_THRESHOLD),
                                (TRIM_ENV, TRIM_THRESHOLD, _M_TRIM_THRESHOLD)):
        os.environ.setdefault(env, str(default))
        applied = bool(_LIBC.mallopt(param, int(os.environ[env]))) and applied
    return applied


def release_memory() -> None:
    """Give memory this process has freed back to the system: the pages Arrow's pool caches and
    the free pages of glibc's heaps (``malloc_trim``)."""
    import pyarrow as pa

    pa.default_memory_pool().release_unused()
    if _LIBC is not None:
        _LIBC.malloc_trim(0)
