"""QuickDraw reader: recognized-only, deterministic N per class, cumulative frames (App. 0.A.5)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from core.errors import Rejection
from core.media.images import decode_image
from pipelines.common.sources import ItemRef, ReaderConfig
from pipelines.proactivebench.sources.quickdraw import QuickDrawReader


def test_enumerate_selects_and_rejects(quickdraw_root: Path) -> None:
    out = list(QuickDrawReader(str(quickdraw_root)).enumerate())
    refs = sorted(x.source_id for x in out if isinstance(x, ItemRef))
    assert refs == ["The Eiffel Tower/7001", "cat/5001", "cat/5002"]  # 5003 unrecognized
    rej = {r.source_file: r for r in out if isinstance(r, Rejection)}
    assert set(rej) == {"cat.ndjson:4", "cat.ndjson:5", "cat.ndjson:6", "cat.ndjson:7"}
    assert rej["cat.ndjson:4"].field == "json" and "malformed JSON" in rej["cat.ndjson:4"].reason
    assert rej["cat.ndjson:5"].field == "drawing[0]"
    assert rej["cat.ndjson:6"].field == "key_id" and "duplicate" in rej["cat.ndjson:6"].reason
    assert rej["cat.ndjson:7"].field == "drawing" and rej["cat.ndjson:7"].item_id == "cat/5007"


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
