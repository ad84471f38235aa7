"""exports.release.file_inventory: what a release lists, and the per-build digest memo."""

from __future__ import annotations

import hashlib
from pathlib import Path

from exports.release import file_inventory


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_an_unchanged_file_is_not_read_again_and_a_changed_one_is(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_bytes(b"card v1")
    (tmp_path / "_build").mkdir()
    (tmp_path / "_build" / "scratch.bin").write_bytes(b"never listed")
    (tmp_path / "manifest.json").write_text("{}")
    known: dict = {}
    first = file_inventory(tmp_path, known)
    assert first == [{"path": "README.md", "bytes": 7, "sha256": _sha(b"card v1")}]
    assert list(known.values()) == [_sha(b"card v1")]
    # the memo is what answers for an unchanged file: a digest planted under its key comes back
    (key,) = known
    known[key] = "0" * 64
    assert file_inventory(tmp_path, known)[0]["sha256"] == "0" * 64
    # rewritten (same size, other bytes): a new inode or change time, so it is hashed again
    (tmp_path / "README.md").unlink()
    (tmp_path / "README.md").write_bytes(b"card v2")
    assert file_inventory(tmp_path, known)[0]["sha256"] == _sha(b"card v2")
    # without a memo every listing reads every file
    assert file_inventory(tmp_path)[0]["sha256"] == _sha(b"card v2")
