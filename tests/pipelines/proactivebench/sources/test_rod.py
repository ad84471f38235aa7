"""ROD manifest reader (ProactiveBench App. 0.A.1) and the shared manifest rules."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from core.errors import BadInput, Rejection
from pipelines.common.sources import ItemRef
from pipelines.proactivebench.sources.rod import RODReader

from .conftest import frame_list


def rod_line(sid: str, **kw: object) -> dict:
    return {"id": sid, "frames": frame_list(14), "category": "cat",
            "occluding_object": "blue blocks", **kw}


def test_rod_item(manifest_root: Callable[..., Path]) -> None:
    root = manifest_root("rod", [rod_line("r1")])
    reader = RODReader(str(root))
    (ref,) = list(reader.enumerate())
    item = reader.load(ref)
    assert len(item.frames) == 14
    assert (item.start_frame, item.reference_frame, item.goal_frames) == (7, 0, [0, 13])
    assert item.metadata == {"occluding_object": "blue blocks", "informative_frames": [0, 13],
                             "void_frames": [7]}
    assert item.frames[3].source == "frames/0003.jpg"
    assert item.frames[3].data == (root / "frames/0003.jpg").read_bytes()
    assert len(item.source_files) == 14 and reader.vocabulary() == ["cat"]


def test_manifest_rejections(manifest_root: Callable[..., Path]) -> None:
    root = manifest_root("rod", [
        rod_line("r1"),
        '{"id": "r2", "frames": [',  # line 2: malformed JSON
        rod_line("r1"),  # line 3: duplicate id
        rod_line("r4", frames=frame_list(13)),  # line 4: wrong length
        rod_line("r5", informative_frames=[7, 0]),  # line 5: start listed as informative
        {"id": "r6", "frames": frame_list(14), "category": "cat"},  # line 6: no occluder
        rod_line("r7", frames=[*frame_list(13), "../etc/passwd"]),  # line 7: escapes root
    ])
    out = list(RODReader(str(root)).enumerate())
    assert [x.source_id for x in out if isinstance(x, ItemRef)] == ["r1"]
    rej = {r.source_file: r for r in out if isinstance(r, Rejection)}
    assert rej["manifest.jsonl:2"].field == "json" and rej["manifest.jsonl:2"].item_id == \
        "manifest.jsonl:2"
    assert rej["manifest.jsonl:3"].field == "id" and "duplicate id 'r1'" in \
        rej["manifest.jsonl:3"].reason
    assert rej["manifest.jsonl:4"].field == "frames" and rej["manifest.jsonl:4"].item_id == "r4"
    assert rej["manifest.jsonl:5"].field == "informative_frames"
    assert rej["manifest.jsonl:6"].field == "occluding_object"
    assert rej["manifest.jsonl:7"].field == "frames[13]"


def test_missing_frame_is_bad_input(manifest_root: Callable[..., Path]) -> None:
    root = manifest_root("rod", [rod_line("r1")])
    (root / "frames" / "0005.jpg").unlink()
    reader = RODReader(str(root))
    (ref,) = list(reader.enumerate())
    with pytest.raises(BadInput) as exc:
        reader.load(ref)
    assert exc.value.source_file == "frames/0005.jpg" and exc.value.field == "frames[5]"
    assert exc.value.item_id == "r1"


def test_corrupt_frame_is_bad_input(manifest_root: Callable[..., Path]) -> None:
    root = manifest_root("rod", [rod_line("r1")])
    (root / "frames" / "0002.jpg").write_bytes(b"\xff\xd8\xff\xe0 this is not a jpeg")
    reader = RODReader(str(root))
    (ref,) = list(reader.enumerate())
    with pytest.raises(BadInput) as exc:
        reader.load(ref)
    assert exc.value.source_file == "frames/0002.jpg" and exc.value.field == "frames[2]"
    assert "cannot decode image" in exc.value.reason
