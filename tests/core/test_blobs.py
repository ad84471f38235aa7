"""core.blobs: the proof, kept beside the blobs, that stored bytes decoded in full."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from core.blobs import BlobReader, BlobStore, blob_root, decoded_digests


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


def test_a_reader_reads_blobs_of_several_roots_and_names_a_blob_that_changed_size(tmp_path: Path) -> None:
    stores = [BlobStore(str(tmp_path / name)) for name in ("one", "two")]
    refs = [store.put(f"frame {i} of {n}".encode() * (i + 1)) for n, store in enumerate(stores)
            for i in range(3)]
    reader = BlobReader()
    assert [reader.read(ref) for ref in refs] == [ref.read() for ref in refs]
    assert [reader.read(ref) for ref in refs] == [
        f"frame {i} of {n}".encode() * (i + 1) for n in range(2) for i in range(3)]
    Path(refs[4].path).write_bytes(b"cut")  # a blob truncated behind the store's back
    with pytest.raises(OSError, match=rf"blob {refs[4].path} has 3 bytes, expected {refs[4].size}"):
        reader.read(refs[4])
