"""QuickDraw reader: recognized-only, deterministic N per class, cumulative frames (App. 0.A.5)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from core.errors import Rejection
from core.media.images import decode_image
from pipelines.common.sources import Filtered, ItemRef, ReaderConfig
from pipelines.proactivebench.sources.quickdraw import QuickDrawReader


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
