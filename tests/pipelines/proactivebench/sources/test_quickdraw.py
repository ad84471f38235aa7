"""QuickDraw reader: recognized-only, deterministic N per class, cumulative frames (App. 0.A.5)."""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from core.errors import Rejection
from core.media.images import decode_image
from pipelines.common.sources import Filtered, ItemRef, ReaderConfig
from pipelines.proactivebench.sources.quickdraw import QuickDrawReader

from .conftest import CAT_STROKES, qd_line


def test_enumerate_selects_filters_and_rejects(quickdraw_root: Path) -> None:
    out = list(QuickDrawReader(str(quickdraw_root)).enumerate())
    refs = sorted(x.source_id for x in out if isinstance(x, ItemRef))
    assert refs == ["The Eiffel Tower/7001", "cat/5001", "cat/5002"]
    # an unrecognized drawing is an input, filtered by its rule (App. 0.A.5), not dropped
    (unrecognized,) = [x for x in out if isinstance(x, Filtered)]
    assert (unrecognized.item_id, unrecognized.source_file, unrecognized.rule) == \
        ("cat/5003", "cat.ndjson:3", "recognized: false")
    rej = {r.source_file: r for r in out if isinstance(r, Rejection)}
    assert set(rej) == {"cat.ndjson:4", "cat.ndjson:5", "cat.ndjson:6", "cat.ndjson:7",
                        "cat.ndjson:8"}
    assert rej["cat.ndjson:4"].field == "json"
    assert rej["cat.ndjson:4"].reason.startswith("malformed JSON: Expecting ',' delimiter: column ")
    assert rej["cat.ndjson:5"].field == "drawing[0]"
    for line in (6, 8):  # both lines of key_id 5006, not only the second
        assert rej[f"cat.ndjson:{line}"].field == "key_id"
        assert rej[f"cat.ndjson:{line}"].reason == ("key_id 5006 is on lines [6, 8]: every line "
                                                     "sharing it is rejected")
    assert rej["cat.ndjson:7"].field == "drawing" and rej["cat.ndjson:7"].item_id == "cat/5007"
    assert len(out) == 9  # every non-blank line of both files


def test_non_utf8_line_is_rejected_not_replaced(quickdraw_root: Path) -> None:
    """``errors="replace"`` kept "U\\ufffdS" as a country code; a line that is not UTF-8 is
    rejected, naming its line and byte, and the other lines are still read."""
    path = quickdraw_root / "cat.ndjson"
    path.write_bytes(path.read_bytes() + b'{"word": "cat", "countrycode": "U\xffS", "recognized": true, '
                     b'"key_id": "5009", "drawing": [[[1, 2], [3, 4]], [[5, 6], [7, 8]]]}\n')
    out = list(QuickDrawReader(str(quickdraw_root)).enumerate())
    rej = {r.source_file: r for r in out if isinstance(r, Rejection)}
    assert rej["cat.ndjson:9"].field == "utf-8"
    assert rej["cat.ndjson:9"].reason == ("not valid UTF-8: byte 0xff at column 34 (invalid start "
                                          "byte)")
    assert "cat/5009" not in {x.source_id for x in out if isinstance(x, ItemRef)}
    assert {"cat/5001", "cat/5002"} <= {x.source_id for x in out if isinstance(x, ItemRef)}


def test_drawings_beyond_the_per_class_sample_are_filtered(quickdraw_root: Path) -> None:
    out = list(QuickDrawReader(str(quickdraw_root), ReaderConfig(per_class=1)).enumerate())
    taken = [x for x in out if isinstance(x, ItemRef) and x.source_id.startswith("cat/")]
    left = [x for x in out if isinstance(x, Filtered) and x.rule == "per-class sample"]
    # the rest of the file is one summary row that counts every drawing it stands for (a class
    # file holds ~150K): 5007 (one stroke) is never reached, so it is among them
    assert len(taken) == 1 and taken[0].source_id in {"cat/5001", "cat/5002"}
    assert [(x.item_id, x.source_file, x.count) for x in left] == [("cat/*", "cat.ndjson", 2)]
    assert "2 recognized drawings of 'cat' not among the 1 taken" in left[0].reason


def test_unknown_files_and_folders_are_rejected(quickdraw_root: Path) -> None:
    (quickdraw_root / "cat.bin").write_bytes(b"binary")
    (quickdraw_root / "old").mkdir()
    (quickdraw_root / "old" / "dog.ndjson").write_text("{}\n")
    (quickdraw_root / "old" / "cow.ndjson").write_text("{}\n")
    (quickdraw_root / ".DS_Store").write_bytes(b"")
    found = {r.item_id: r for r in QuickDrawReader(str(quickdraw_root)).unrecognized()}
    assert set(found) == {"cat.bin", "old/"}
    assert found["old/"].reason == ("a folder in the root: the layout is <category>.ndjson files "
                                    "(2 files)")
    assert found["cat.bin"].field == "path" and found["cat.bin"].stage == "enumerate"


def test_per_class_limit_is_deterministic(quickdraw_root: Path) -> None:
    def pick() -> list[str]:
        reader = QuickDrawReader(str(quickdraw_root), ReaderConfig(per_class=1))
        return [x.source_id for x in reader.enumerate() if isinstance(x, ItemRef)]
    first = pick()
    assert len([s for s in first if s.startswith("cat/")]) == 1
    assert first == pick()


def test_load_cumulative_frames(quickdraw_root: Path) -> None:
    reader = QuickDrawReader(str(quickdraw_root))
    ref = next(x for x in reader.enumerate() if isinstance(x, ItemRef) and x.source_id == "cat/5001")
    item = reader.load(ref)
    assert len(item.frames) == 5 and item.start_frame == 0
    assert item.reference_frame == 4 and item.goal_frames == [4]
    assert item.metadata == {"key_id": "5001", "countrycode": "IT", "num_strokes": 5}
    assert item.frames[0].source == "cat.ndjson:1#strokes[0:1]"
    ink = []
    for f in item.frames:
        img = decode_image(f.data, "x").convert("L")
        assert img.size == (256, 256)
        ink.append(int((np.asarray(img) < 128).sum()))
    assert ink == sorted(ink) and ink[0] < ink[-1]  # each frame adds a stroke
    assert item.category == "cat" and item.source_files[0][0] == "cat.ndjson"


def test_vocabulary_from_file_names(quickdraw_root: Path) -> None:
    assert QuickDrawReader(str(quickdraw_root)).vocabulary() == ["The Eiffel Tower", "cat"]


def test_partitions_are_class_files_and_list_the_same_items(quickdraw_root: Path) -> None:
    """A runner lists the class files in parallel; together they give exactly enumerate()."""
    reader = QuickDrawReader(str(quickdraw_root))
    parts = reader.partitions()
    assert parts == reader.files() and len(parts) >= 2

    def key(x):
        return (type(x).__name__, getattr(x, "source_id", ""), getattr(x, "source_file", ""),
                getattr(x, "reason", ""))

    by_parts = sorted((x for p in parts for x in reader.enumerate_partition(p)), key=key)
    assert [key(x) for x in by_parts] == sorted(key(x) for x in reader.enumerate())


def test_descending_order_takes_the_other_end_of_the_same_ranking(tmp_path: Path) -> None:
    """The training split reads the evaluation's class files from the other end of the
    sha256(key_id) order (ProactiveBench §5: a subset disjoint from the evaluation's)."""
    import json

    lines = [json.dumps({"word": "sun", "countrycode": "IT", "recognized": True, "key_id": str(k),
                         "drawing": [[[1, 2], [3, 4]], [[5, 6], [7, 8]]]}) for k in range(8000, 8006)]
    (tmp_path / "sun.ndjson").write_text("\n".join(lines) + "\n")

    def taken(order: str | None) -> tuple[list[str], Filtered]:
        extra = {} if order is None else {"order": order}
        out = list(QuickDrawReader(str(tmp_path), ReaderConfig(per_class=3, extra=extra)).enumerate())
        return [x.source_id for x in out if isinstance(x, ItemRef)], out[-1]

    ascending, rest = taken(None)
    descending, rest_desc = taken("descending")
    assert taken("ascending")[0] == ascending
    assert sorted(ascending + descending) == [f"sun/{k}" for k in range(8000, 8006)]  # disjoint halves
    assert rest.reason == "3 recognized drawings of 'sun' not among the 3 taken in sha256(key_id) order"
    assert rest_desc.reason.endswith("taken in descending sha256(key_id) order")
    with pytest.raises(ValueError, match="extra\\['order'\\] 'random'"):
        taken("random")


def test_class_files_behind_bad_links_are_rejected_and_counted(quickdraw_root: Path) -> None:
    """A dangling link or a loop as a class file was skipped by the listing, counted nowhere,
    and the release was published without the class. Each is now one rejected input naming the
    file; a link to an existing file is followed, inside the root or out of it."""
    outside = quickdraw_root.parent / "elsewhere"
    outside.mkdir()
    (outside / "owl.ndjson").write_text(json.dumps(qd_line("9001", CAT_STROKES, word="owl")) + "\n")
    (quickdraw_root / "dog.ndjson").symlink_to("dog-missing.ndjson")
    (quickdraw_root / "bird.ndjson").symlink_to("bird.ndjson")
    (quickdraw_root / "owl.ndjson").symlink_to(outside / "owl.ndjson")
    (quickdraw_root / "drawings").symlink_to("nowhere")  # a dangling folder link
    (quickdraw_root / ".store").mkdir()
    (quickdraw_root / ".store" / "sun.ndjson").write_text(
        json.dumps(qd_line("9002", CAT_STROKES, word="sun")) + "\n")
    (quickdraw_root / "sun.ndjson").symlink_to(".store/sun.ndjson")
    reader = QuickDrawReader(str(quickdraw_root))
    out = list(reader.enumerate())
    rej = {r.source_file: (r.item_id, r.field, r.reason) for r in out if isinstance(r, Rejection)}
    assert rej["dog.ndjson"] == ("dog/*", "file", "a symbolic link whose target does not exist")
    assert rej["bird.ndjson"] == ("bird/*", "file", "a symbolic link loop (it never reaches a file)")
    assert "owl.ndjson" not in rej
    assert {"sun/9002", "owl/9001"} <= {x.source_id for x in out if isinstance(x, ItemRef)}
    assert len(out) == 9 + 3 + 1
    # the layout check reports the folder link, and nothing it already counted
    found = {r.item_id: (r.field, r.reason) for r in reader.unrecognized()}
    assert found == {"drawings": ("path", "a symbolic link whose target does not exist (1 file)")}
    by_parts = [x for p in reader.partitions() for x in reader.enumerate_partition(p)]
    assert sorted(map(repr, by_parts)) == sorted(map(repr, out))


def test_raw_format_strokes_are_rejected(quickdraw_root: Path) -> None:
    """The raw format's strokes are ``[xs, ys, ts]`` (screen coordinates, not scaled to 0..255,
    and timestamps); such a line in the simplified set was kept with its times dropped. Its
    download name, ``full_raw_<category>.ndjson``, is not a simplified class file."""
    raw = [[[10, 20, 30], [40, 50, 60], [0, 17, 33]], [[5, 6], [7, 8], [50, 67]]]
    path = quickdraw_root / "cat.ndjson"
    path.write_text(path.read_text() + json.dumps(qd_line("5010", raw)) + "\n")
    (quickdraw_root / "full_raw_dog.ndjson").write_text(json.dumps(qd_line("1", raw, word="dog")) + "\n")
    reader = QuickDrawReader(str(quickdraw_root))
    out = list(reader.enumerate())
    (bad,) = [r for r in out if isinstance(r, Rejection) and r.source_file == "cat.ndjson:9"]
    assert (bad.item_id, bad.field, bad.reason) == (
        "cat/cat.ndjson:9", "drawing[0]",
        "stroke is [xs, ys, ts]: the raw format (unscaled, timed); the layout is the simplified "
        "format, [xs, ys] in 0..255")
    assert reader.vocabulary() == ["The Eiffel Tower", "cat"]
    (found,) = reader.unrecognized()
    assert (found.source_file, found.field, found.reason) == (
        "full_raw_dog.ndjson", "path", "a raw-format class file (full_raw_<category>.ndjson): the "
        "layout is the simplified files (<category>.ndjson) (1 file)")


def test_a_folder_that_cannot_be_listed_is_rejected(quickdraw_root: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Beam's listing (``os.walk``) skipped a folder it could not list without a word."""
    (quickdraw_root / "old").mkdir()
    (quickdraw_root / "old" / "dog.ndjson").write_text("{}\n")
    scandir = os.scandir

    def refusing(path: str) -> Iterator[os.DirEntry[str]]:
        if str(path).endswith("/old"):
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return scandir(path)

    monkeypatch.setattr(os, "scandir", refusing)
    found = {r.item_id: (r.field, r.reason) for r in QuickDrawReader(str(quickdraw_root)).unrecognized()}
    assert found == {"old": ("path", "a folder that cannot be listed (Permission denied) (1 file)")}
