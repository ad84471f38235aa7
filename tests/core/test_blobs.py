"""core.blobs: the proof, kept beside the blobs, that stored bytes decoded in full."""

from __future__ import annotations

import hashlib
from pathlib import Path

from core.blobs import BlobStore, blob_root, decoded_digests


def test_each_worker_records_the_bytes_it_decoded_and_the_union_is_read_back(tmp_path: Path) -> None:
    root = blob_root(str(tmp_path / "staging"))
    assert decoded_digests(root) == frozenset()  # nothing stored yet: no folder, no proof
    first, second = BlobStore(root), BlobStore(root)  # two workers, one store folder
    a = first.put(b"decoded by the first worker", decoded=True)
    first.put(b"encoded here, never decoded")
    b = second.put(b"decoded by the second worker", decoded=True)
    again = second.put(b"decoded by the first worker", decoded=True)  # same bytes, other worker
    second.flush_decoded()
    first.flush_decoded()
    first.flush_decoded()  # nothing new since the last flush: no empty list file
    lists = sorted(Path(root).glob("decoded-*.txt"))
    assert len(lists) == 2
    assert decoded_digests(root) == {a.sha256, b.sha256}
    assert again.sha256 == a.sha256 == hashlib.sha256(b"decoded by the first worker").hexdigest()
    (Path(root) / "decoded-half-written.txt.tmp").write_text("f" * 64 + "\n")
    assert decoded_digests(root) == {a.sha256, b.sha256}  # an unfinished list is not read
