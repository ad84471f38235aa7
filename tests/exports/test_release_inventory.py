"""exports.release.ReleaseInventory: what a release lists, in which order, and which files each
step reads (the staged data once; afterwards only what was written or changed)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import exports.release
from exports.release import ReleaseInventory


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files the inventory hashes, by name, in order."""
    seen: list[str] = []
    real = exports.release.file_sha256

    def counted(path: Path) -> str:
        seen.append(path.name)
        return real(path)

    monkeypatch.setattr(exports.release, "file_sha256", counted)
    return seen


def test_it_lists_every_file_but_the_manifest_and_the_scratch_folder_in_walk_order(tmp_path: Path
                                                                                  ) -> None:
    (tmp_path / "README.md").write_bytes(b"card")
    (tmp_path / "manifest.json").write_text("{}")
    (tmp_path / "_build").mkdir()
    (tmp_path / "_build" / "scratch.bin").write_bytes(b"never listed")
    for folder in ("data/a-b", "data/a"):  # "a-b" < "a/" as text; a folder walk puts "a" first
        (tmp_path / folder).mkdir(parents=True)
        pq.write_table(pa.table({"id": ["x", "y"]}), tmp_path / folder / "test.parquet")
    listed = ReleaseInventory(tmp_path).files
    assert [f["path"] for f in listed] == ["README.md", "data/a/test.parquet", "data/a-b/test.parquet"]
    assert [f["path"] for f in listed] == [p.relative_to(tmp_path).as_posix() for p in
                                           sorted(tmp_path.rglob("*.*")) if p.parent.name != "_build"
                                           and p.name != "manifest.json"]
    assert listed[0] == {"path": "README.md", "bytes": 4, "sha256": _sha(b"card")}
    assert listed[1]["rows"] == 2 and "rows" not in listed[0]


def test_refresh_reads_only_new_and_changed_files_and_forgets_removed_ones(tmp_path: Path,
                                                                          reads: list[str]) -> None:
    (tmp_path / "data.bin").write_bytes(b"the data, read once")
    (tmp_path / "old.txt").write_bytes(b"removed later")
    inventory = ReleaseInventory(tmp_path)
    assert reads == ["data.bin", "old.txt"]
    reads.clear()
    inventory.refresh()
    assert reads == []  # nothing changed: nothing read
    (tmp_path / "old.txt").unlink()
    (tmp_path / "new.txt").write_bytes(b"written by finalize")
    (tmp_path / "data.bin").unlink()  # rewritten, same size: another inode and change time
    (tmp_path / "data.bin").write_bytes(b"the data, read twice")
    inventory.refresh()
    assert sorted(reads) == ["data.bin", "new.txt"]
    assert {f["path"]: f["sha256"] for f in inventory.files} == {
        "data.bin": _sha(b"the data, read twice"), "new.txt": _sha(b"written by finalize")}


def test_add_reads_the_named_file_again_and_earlier_listings_stay_as_they_were(
        tmp_path: Path, reads: list[str]) -> None:
    (tmp_path / "data.bin").write_bytes(b"data")
    inventory = ReleaseInventory(tmp_path)
    before = inventory.files
    (tmp_path / "README.md").write_bytes(b"card v1")
    inventory.add("README.md")
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "diff.md").write_bytes(b"diff")
    inventory.add(tmp_path / "reports" / "diff.md")  # a path under the release will do too
    (tmp_path / "README.md").write_bytes(b"card v2")  # the same size, perhaps the same times
    inventory.add("README.md")
    assert reads == ["data.bin", "README.md", "diff.md", "README.md"]
    assert inventory.files == [{"path": "README.md", "bytes": 7, "sha256": _sha(b"card v2")},
                               {"path": "data.bin", "bytes": 4, "sha256": _sha(b"data")},
                               {"path": "reports/diff.md", "bytes": 4, "sha256": _sha(b"diff")}]
    assert [f["path"] for f in before] == ["data.bin"]  # the card's listing: before the card
    before[0]["sha256"] = "changed by its holder"
    assert inventory.files[1]["sha256"] == _sha(b"data")
    assert inventory.files == ReleaseInventory(tmp_path).files  # as a fresh listing sees it


def test_add_refuses_what_a_release_does_not_list(tmp_path: Path) -> None:
    (tmp_path / "manifest.json").write_text("{}")
    inventory = ReleaseInventory(tmp_path)
    with pytest.raises(ValueError, match="manifest.json is not part of"):
        inventory.add("manifest.json")
    with pytest.raises(FileNotFoundError):
        inventory.add("README.md")  # not written
