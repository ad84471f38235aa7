"""VSOD manifest reader (ProactiveBench App. 0.A.2), including frames decoded from a video."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from core.errors import BadInput, Rejection
from pipelines.common.sources import ItemRef
from pipelines.proactivebench.sources.vsod import VSODReader

from .conftest import frame_list, occluded_sequence, write_video


def vsod_line(sid: str, **kw: object) -> dict:
    return {"id": sid, "frames": frame_list(10), "category": "Chelsea",
            "question_type": "speaker", "start_frame": 5, "answerable_frames": [0, 1, 8, 9], **kw}


def test_vsod_item(manifest_root: Callable[..., Path]) -> None:
    root = manifest_root("vsod", [vsod_line("v1"),
                                  vsod_line("v2", category="two", question_type="count")],
                         n_frames=10)
    reader = VSODReader(str(root))
    refs = [x for x in reader.enumerate() if isinstance(x, ItemRef)]
    item = reader.load(refs[0])
    assert (item.start_frame, item.reference_frame, item.goal_frames) == (5, 8, [0, 1, 8, 9])
    assert item.metadata == {"question_type": "speaker", "answerable_frames": [0, 1, 8, 9],
                             "strong_occlusions": [], "type_vocabulary": ["Chelsea"]}
    assert reader.load(refs[1]).metadata["type_vocabulary"] == ["two"]
    assert reader.vocabulary() == ["Chelsea", "two"]


def test_vsod_rejections(manifest_root: Callable[..., Path]) -> None:
    root = manifest_root("vsod", [
        vsod_line("v1", question_type="mood"),
        vsod_line("v2", start_frame=8),
        vsod_line("v3", answerable_frames=[3, 10]),
    ], n_frames=10)
    rej = {r.item_id: r for r in VSODReader(str(root)).enumerate() if isinstance(r, Rejection)}
    assert rej["v1"].field == "question_type" and rej["v1"].source_file == "manifest.jsonl:1"
    assert rej["v2"].field == "start_frame"
    assert rej["v3"].field == "answerable_frames[1]"


def test_video_manifest_truncated_and_undecodable(tmp_path: Path, photos: dict) -> None:
    root = tmp_path / "vsod_video"
    root.mkdir()
    seq = occluded_sequence(photos["chelsea"][::4, ::4].copy(), 12, 30)  # 12 frames at 2 fps
    data = write_video(root / "clip.avi", seq)
    (root / "half.avi").write_bytes(data[: len(data) // 2])  # decodes only the first ~3 s
    (root / "cut.avi").write_bytes(data[:400])  # header only: no frame decodes
    line = {"id": "v1", "video": "clip.avi", "fps": 1, "category": "cat",
            "question_type": "event", "start_frame": 3, "answerable_frames": [0, 5]}
    rows = [line, {**line, "id": "v2", "video": "half.avi", "start_frame": 1},
            {**line, "id": "v3", "video": "cut.avi"}]
    (root / "manifest.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    reader = VSODReader(str(root))
    refs = {x.source_id: x for x in reader.enumerate() if isinstance(x, ItemRef)}
    item = reader.load(refs["v1"])
    assert len(item.frames) == 6  # 6 s at 1 FPS
    assert item.frames[2].source == "clip.avi#t=2s"
    assert item.source_files[0][0] == "clip.avi"
    with pytest.raises(BadInput) as half:  # its header promises 6 s: truncated, not kept short
        reader.load(refs["v2"])
    assert (half.value.source_file, half.value.field) == ("half.avi", "video")
    assert half.value.reason.startswith("truncated: the header promises 12 frames (6.0 s), only ")
    assert half.value.item_id == "v2"
    with pytest.raises(BadInput) as cut:
        reader.load(refs["v3"])
    assert (cut.value.source_file, cut.value.field) == ("cut.avi", "video")
    assert cut.value.item_id == "v3"
