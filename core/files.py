"""Hashes, canonical JSON and atomic file writes — one definition each for the whole project.

Why one: the content hash reviewers approve, the sha256 in a manifest and the cache keys of the
model clients must agree to the byte wherever they are computed; copies had already drifted
(one canonical-JSON copy accepted NaN, which is not JSON). An atomic write (temp file in the
same folder, then ``os.replace``) means a reader never sees half a file, even after ``kill -9``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def file_sha256(path: str | os.PathLike[str], chunk: int = 1 << 20) -> str:
    """sha256 of a file read in chunks: a 450 MB shard is never held in memory to be hashed."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def canonical_json(value: Any) -> str:
    """Key-sorted, compact, NaN-free JSON: the byte string content hashes are taken over."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False)


def content_hash(value: Any) -> str:
    return sha256_hex(canonical_json(value).encode("utf-8"))


def write_atomic(path: str | os.PathLike[str], data: bytes | str, *, mode: int | None = None) -> None:
    """Write ``data`` to ``path`` so that readers see the old file or the new one, never a part.
    ``mode`` (e.g. ``0o600`` for secrets) is set before the first byte is written."""
    with atomic_file(path, mode=mode) as fh:
        fh.write(data.encode("utf-8") if isinstance(data, str) else data)


@contextlib.contextmanager
def atomic_file(path: str | os.PathLike[str], *, mode: int | None = None) -> Iterator[BinaryIO]:
    """:func:`write_atomic` for content written a piece at a time: a binary file under a
    temporary name in the same folder, renamed over ``path`` once the block ends without error
    (removed if it raises)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        if mode is not None:
            os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as fh:
            yield fh
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def write_json_atomic(path: str | os.PathLike[str], value: Any, *, indent: int = 1) -> None:
    write_atomic(path, json.dumps(value, indent=indent, sort_keys=True, ensure_ascii=False) + "\n")
