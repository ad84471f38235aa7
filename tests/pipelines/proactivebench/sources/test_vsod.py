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


def _video_root(tmp_path: Path, photos: dict, rows: list[dict]) -> Path:
    """A 6 s, 2 fps MJPG AVI ``clip.avi`` and the manifest ``rows`` (``video`` defaults to it)."""
    root = tmp_path / "vsod_video"
    root.mkdir()
    write_video(root / "clip.avi", occluded_sequence(photos["chelsea"][::4, ::4].copy(), 12, 30))
    base = {"id": "v1", "video": "clip.avi", "category": "cat", "question_type": "event",
            "start_frame": 3, "answerable_frames": [0, 5]}
    (root / "manifest.jsonl").write_text("".join(json.dumps({**base, **r}) + "\n" for r in rows))
    return root


def test_a_video_whose_container_is_not_its_extension_is_rejected(tmp_path: Path,
                                                                  photos: dict) -> None:
    """AVI bytes named ``.mp4`` were decoded and kept; the content must agree with the name."""
    root = _video_root(tmp_path, photos, [{"video": "clip.mp4"}])
    (root / "clip.mp4").write_bytes((root / "clip.avi").read_bytes())
    reader = VSODReader(str(root))
    (ref,) = [x for x in reader.enumerate() if isinstance(x, ItemRef)]
    with pytest.raises(BadInput) as err:
        reader.load(ref)
    assert (err.value.source_file, err.value.field, err.value.item_id) == ("clip.mp4", "video", "v1")
    assert err.value.reason == "the content is AVI, but the extension .mp4 names MP4/QuickTime"


def test_an_fps_above_the_video_rate_is_rejected(tmp_path: Path, photos: dict) -> None:
    """``fps: 1000`` on the 6 s, 2 fps clip asked for 6,000 frames of 12, each repeated 500
    times, and was kept; an fps above the video's own rate is rejected naming the video, the
    field and both rates. ``NaN`` / ``Infinity`` (which JSON readers take) crashed the load."""
    root = _video_root(tmp_path, photos, [{"id": "v1", "fps": 1000}, {"id": "v2", "fps": 2},
                                          {"id": "v3", "fps": float("nan")},
                                          {"id": "v4", "fps": float("inf")}])
    reader = VSODReader(str(root))
    out = list(reader.enumerate())
    refs = {x.source_id: x for x in out if isinstance(x, ItemRef)}
    with pytest.raises(BadInput) as err:
        reader.load(refs["v1"])
    assert (err.value.source_file, err.value.field, err.value.item_id) == ("clip.avi", "fps", "v1")
    assert err.value.reason == ("sampling at 1000 fps asks for more frames than the video has: its "
                                "own frame rate is 2 fps (each frame would repeat 500 times)")
    assert len(reader.load(refs["v2"]).frames) == 12  # the video's own rate: every frame once
    rej = {r.item_id: (r.source_file, r.field, r.reason) for r in out if isinstance(r, Rejection)}
    assert rej == {"v3": ("manifest.jsonl:3", "fps", "nan is not a positive, finite number"),
                   "v4": ("manifest.jsonl:4", "fps", "inf is not a positive, finite number")}


def test_files_behind_bad_links_are_rejected_or_stop_the_source(
        manifest_root: Callable[..., Path], tmp_path: Path) -> None:
    """A manifest reads only the files it names: a frame that is a dangling link rejects its
    item (one to a file elsewhere is read like it); a ``labels.json`` that is a dangling link was
    taken as absent (the full label set silently lost) and now makes the source unreadable."""
    root = manifest_root("vsod", [vsod_line("v1"), vsod_line("v2"), vsod_line("v3")], n_frames=10)
    elsewhere = tmp_path / "elsewhere.jpg"
    elsewhere.write_bytes((root / "frames" / "0002.jpg").read_bytes())
    (root / "frames" / "0002.jpg").unlink()
    (root / "frames" / "0002.jpg").symlink_to(elsewhere)
    reader = VSODReader(str(root))
    refs = {x.source_id: x for x in reader.enumerate() if isinstance(x, ItemRef)}
    assert str(tmp_path) not in repr(reader.load(refs["v1"]).frames)
    (root / "frames" / "0002.jpg").unlink()
    (root / "frames" / "0002.jpg").symlink_to("0002-gone.jpg")
    with pytest.raises(BadInput, match="a symbolic link whose target does not exist"):
        reader.load(refs["v1"])
    (root / "labels.json").symlink_to("labels-gone.json")
    with pytest.raises(BadInput) as err:
        VSODReader(str(root)).vocabulary()
    assert (err.value.source_file, err.value.reason) == (
        "labels.json", "a symbolic link whose target does not exist")
