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
    assert [x.source_id for x in out if isinstance(x, ItemRef)] == []
    rej = {r.source_file: r for r in out if isinstance(r, Rejection)}
    assert rej["manifest.jsonl:2"].field == "json" and rej["manifest.jsonl:2"].item_id == \
        "manifest.jsonl:2"
    assert rej["manifest.jsonl:2"].reason == "malformed JSON: Expecting value: column 25"
    # which of two lines with one id describes the item cannot be told: both are rejected
    for line in (1, 3):
        assert rej[f"manifest.jsonl:{line}"].field == "id"
        assert rej[f"manifest.jsonl:{line}"].reason == ("id 'r1' is on lines [1, 3]: every line "
                                                         "sharing it is rejected")
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
    # the reason names the file as the release does, relative: no host path leaks into it
    assert str(root) not in exc.value.reason and "frames/0005.jpg" in exc.value.reason


def test_manifest_line_that_is_not_utf8_is_rejected(manifest_root: Callable[..., Path]) -> None:
    root = manifest_root("rod", [rod_line("r1"), rod_line("r2")])
    lines = (root / "manifest.jsonl").read_bytes().splitlines()
    lines[1] = lines[1].replace(b'"cat"', b'"c\xe9t"')  # Latin-1, not UTF-8
    (root / "manifest.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    out = list(RODReader(str(root)).enumerate())
    assert [x.source_id for x in out if isinstance(x, ItemRef)] == ["r1"]
    (rej,) = [x for x in out if isinstance(x, Rejection)]
    assert (rej.source_file, rej.field) == ("manifest.jsonl:2", "utf-8")
    assert rej.reason.startswith("not valid UTF-8: byte 0xe9 at column ")


def test_corrupt_frame_is_bad_input(manifest_root: Callable[..., Path]) -> None:
    root = manifest_root("rod", [rod_line("r1")])
    (root / "frames" / "0002.jpg").write_bytes(b"\xff\xd8\xff\xe0 this is not a jpeg")
    reader = RODReader(str(root))
    (ref,) = list(reader.enumerate())
    with pytest.raises(BadInput) as exc:
        reader.load(ref)
    assert exc.value.source_file == "frames/0002.jpg" and exc.value.field == "frames[2]"
    assert "cannot decode image" in exc.value.reason
