"""ChangeIt manifest reader (ProactiveBench App. 0.A.6)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np
import pytest

from core.errors import BadInput, Rejection
from pipelines.common.sources import ItemRef, ReaderConfig
from pipelines.proactivebench.sources.changeit import ChangeItReader, reference_of

from .conftest import frame_list, occluded_sequence, write_video

LABELS = [0, 0, 1, 1, 2, 2, 2, 0, 3, 3]


def line(sid: str, qtype: str, **kw: object) -> dict:
    cat = "bike" if qtype == "object" else "riding"
    return {"id": sid, "frames": frame_list(10), "category": cat, "question_type": qtype,
            "object": "bike", "action": "riding", "labels": LABELS, **kw}


def test_goal_frames_by_question_type(manifest_root: Callable[..., Path]) -> None:
    root = manifest_root("cit", [line("c1", "object"), line("c2", "action")], n_frames=10)
    reader = ChangeItReader(str(root))
    obj, act = (reader.load(x) for x in reader.enumerate() if isinstance(x, ItemRef))
    assert obj.goal_frames == [2, 3, 4, 5, 6, 8, 9] and obj.reference_frame == 4
    assert act.goal_frames == [4, 5, 6] and act.reference_frame == 5
    assert obj.start_frame == act.start_frame == 0
    assert obj.category == "bike" and act.category == "riding"
    assert act.metadata["type_vocabulary"] == ["riding"]
    assert set(act.metadata) == {"question_type", "object", "action", "labels", "type_vocabulary"}
    assert reader.vocabulary() == ["bike", "riding"]


def test_changeit_rejections(manifest_root: Callable[..., Path]) -> None:
    root = manifest_root("cit", [
        line("c1", "object", labels=LABELS[:9]),
        line("c2", "action", labels=[2, *LABELS[1:]]),
        line("c3", "action", labels=[0, 0, 1, 1, 5, 2, 2, 0, 3, 3]),
        line("c4", "object", category="riding"),
    ], n_frames=10)
    rej = {r.item_id: r.field for r in ChangeItReader(str(root)).enumerate()
           if isinstance(r, Rejection)}
    assert rej == {"c1": "labels", "c2": "labels[0]", "c3": "labels[4]", "c4": "category"}


def test_reference_is_middle_of_longest_run() -> None:
    assert reference_of([2, 3, 7, 8, 9, 10]) == 8
    assert reference_of([1, 2, 5, 6]) == 1


def test_video_labels_must_match_decoded_seconds(tmp_path: Path, photos: dict) -> None:
    root = tmp_path / "cit_video"
    root.mkdir()
    seq = occluded_sequence(photos["coffee"][::4, ::4].copy(), 12, 30)  # 6 s at 2 fps
    data = write_video(root / "clip.avi", seq)
    write_video(root / "short.avi", seq[:8])  # a complete 4 s video
    (root / "half.avi").write_bytes(data[: len(data) // 2])
    base = {"video": "clip.avi", "category": "cup", "question_type": "object", "object": "cup",
            "action": "pouring coffee", "labels": [0, 0, 1, 2, 3, 3]}
    rows = [{**base, "id": "c1"}, {**base, "id": "c2", "video": "short.avi"},
            {**base, "id": "c3", "video": "half.avi"}]
    (root / "manifest.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    reader = ChangeItReader(str(root))
    refs = {x.source_id: x for x in reader.enumerate() if isinstance(x, ItemRef)}
    item = reader.load(refs["c1"])
    assert len(item.frames) == 6 and item.goal_frames == [2, 3, 4, 5]
    with pytest.raises(BadInput) as exc:
        reader.load(refs["c2"])
    assert (exc.value.source_file, exc.value.field) == ("short.avi", "labels")
    # a file cut in half keeps its header's frame count: truncated, rejected before its labels
    with pytest.raises(BadInput) as exc:
        reader.load(refs["c3"])
    assert (exc.value.source_file, exc.value.field) == ("half.avi", "video")
    assert exc.value.reason.startswith("truncated: the header promises 12 frames (6.0 s)")


def release_root(tmp_path: Path, photos: dict) -> Path:
    """ChangeIt's public release layout (categories.csv, labels.csv, annotations/<cat>/<id>.fps1.csv)
    plus downloaded videos under downloads/<cat>/ — real MJPG videos made from real photos."""
    root = tmp_path / "changeit_release"
    (root / "annotations" / "apple").mkdir(parents=True)
    (root / "annotations" / "candle").mkdir(parents=True)
    (root / "downloads" / "apple").mkdir(parents=True)
    (root / "categories.csv").write_text(
        'DIR_NAME,ACTION_NAME,CENTERING_PARAM\napple,"Apple Peeling/Cutting",0.309\n'
        'candle,"Candle Lighting",0.278\nbacon,"Bacon Frying",0.371\n')
    (root / "labels.csv").write_text('LABEL_ID,MEANING\n0,"background/noannotation"\n1,"state1"\n'
                                     '2,"action"\n3,"state2"\n')
    # 10 s at 2 fps: seconds 0-1 background, 2-3 apple whole, 4-6 peeling, 7-9 peeled
    write_video(root / "downloads" / "apple" / "vid_A.avi",
                occluded_sequence(photos["chelsea"], 20, 60), fps=2.0)
    labels = [0, 0, 1, 1, 2, 2, 2, 3, 3, 3]
    (root / "annotations" / "apple" / "vid_A.fps1.csv").write_text(
        "".join(f"{s},{lab}\n" for s, lab in enumerate(labels)))
    # annotated but never downloaded
    (root / "annotations" / "candle" / "vid_B.fps1.csv").write_text("0,0\n1,2\n")
    # malformed row
    (root / "annotations" / "apple" / "vid_C.fps1.csv").write_text("0,0\n1,x\n")
    return root


def test_public_release_layout(tmp_path: Path, photos) -> None:
    from pipelines.common.sources import ReaderConfig

    root = release_root(tmp_path, photos)
    reader = ChangeItReader(str(root), ReaderConfig(extra={"question_types": "both"}))
    out = list(reader.enumerate())
    refs = [x for x in out if isinstance(x, ItemRef)]
    rejected = {(r.source_file, r.field) for r in out if isinstance(r, Rejection)}
    assert [r.source_id for r in refs] == ["apple/vid_A/object", "apple/vid_A/action"]
    assert rejected == {("downloads/candle/vid_B.*", "video"), ("annotations/apple/vid_C.fps1.csv:2",
                                                                "second,label")}
    assert reader.vocabulary() == sorted(["apple", "candle", "bacon", "Apple Peeling/Cutting",
                                          "Candle Lighting", "Bacon Frying"])
    obj, act = (reader.load(r) for r in refs)
    assert len(obj.frames) == 10 and obj.category == "apple" and act.category == "Apple Peeling/Cutting"
    assert obj.goal_frames == [2, 3, 4, 5, 6, 7, 8, 9] and act.goal_frames == [4, 5, 6]
    assert act.metadata["type_vocabulary"] == ["Apple Peeling/Cutting", "Bacon Frying", "Candle Lighting"]
    # one question per video by default, drawn per video from the seed
    default = [x for x in ChangeItReader(str(root)).enumerate() if isinstance(x, ItemRef)]
    assert len(default) == 1 and default[0].source_id.startswith("apple/vid_A/")


def test_release_files_outside_the_annotation_layout_are_rejected(tmp_path: Path, photos) -> None:
    root = release_root(tmp_path, photos)
    (root / "annotations" / "README.md").write_text("x")
    (root / "annotations" / "apple" / "vid_A.csv").write_text("0,0\n")
    (root / "annotations" / "apple" / "old").mkdir()
    (root / "annotations" / "apple" / "old" / "vid_A.fps1.csv").write_text("0,0\n")
    (root / "downloads" / "apple" / "vid_Z.mp4").write_bytes(b"a training video: not annotated")
    found = {r.item_id: r.reason for r in ChangeItReader(str(root)).unrecognized()}
    assert found == {
        "annotations/README.md": "a file in annotations/: the layout is <category>/<video id>.fps1.csv "
                                 "(1 file)",
        "annotations/apple/vid_A.csv": "not an annotation file (<video id>.fps1.csv) (1 file)",
        "annotations/apple/old/": "a folder where annotation files belong (1 file)",
    }


def test_release_annotation_past_the_end_is_rejected(tmp_path: Path, photos) -> None:
    root = release_root(tmp_path, photos)
    (root / "annotations" / "apple" / "vid_A.fps1.csv").write_text(
        "".join(f"{s},{2 if s > 3 else 0}\n" for s in range(14)))  # 14 s on a 10 s video
    reader = ChangeItReader(str(root))
    ref = next(x for x in reader.enumerate() if isinstance(x, ItemRef))
    with pytest.raises(BadInput) as err:
        reader.load(ref)
    assert (err.value.source_file, err.value.field) == ("annotations/apple/vid_A.fps1.csv", "second")
    assert "past the end" in err.value.reason


def test_video_frames_are_the_ones_on_screen(tmp_path: Path, videos: Path) -> None:
    """A ChangeIt video is read at 1 FPS (App. 0.A.6) by the project's causal sampler: the frame
    on screen at each second, full size, by its one JPEG rule. The old reader took the frame
    *nearest* each second, which on tree.avi's sparse timeline is often a later one (1 s ->
    1.133 s instead of 0.733 s). Frames are identified by their pixels, whatever the encoder."""
    from tests.support.frames import decode_all, which_frame

    root = tmp_path / "cit_tree"
    root.mkdir()
    shutil.copyfile(videos / "tree.avi", root / "tree.avi")
    rec = {"id": "tree", "video": "tree.avi", "category": "waving a hand", "question_type": "action",
           "object": "hand", "action": "waving a hand", "labels": [0] * 24 + [2] * 6}
    (root / "manifest.jsonl").write_text(json.dumps(rec) + "\n")
    reader = ChangeItReader(str(root))
    item = reader.load(next(x for x in reader.enumerate() if isinstance(x, ItemRef)))
    pts, pixels = decode_all(videos / "tree.avi")
    shown = [which_frame(f.data, pixels) for f in item.frames]
    # by hand from tree.avi's timestamps (tests/core/media/test_video.py TREE_ON_SCREEN)
    assert shown == [0, 1, 3, 6, 8, 11, 14, 15, 18, 20, 23, 25, 28, 30, 32, 34, 36, 39, 41, 43,
                     45, 47, 50, 52, 54, 56, 59, 61, 63, 65]
    assert all(pts[i] <= t for t, i in enumerate(shown))
    assert item.frames[1].source == "tree.avi#t=1s"
    from core.media.video import causal_frames

    ref = causal_frames(videos / "tree.avi")  # the same bytes as every other caller's
    assert [f.data for f in item.frames] == [f.image for f in ref.frames]
    assert cv2.imdecode(np.frombuffer(item.frames[0].data, np.uint8), cv2.IMREAD_COLOR).shape == (240, 320, 3)
    # its header counts 444 frames, 68 decode — over the whole timeline (held frames): kept, and
    # the shortfall travels with the item into the manifest (docs/sources.md, the video rule)
    assert item.notes == [("tree.avi", "header says 444 frames, only 68 decode")]


def test_release_files_behind_bad_links(tmp_path: Path, photos) -> None:
    """An annotation that is a dangling link was dropped from the listing; a downloaded video
    that is one was "not downloaded". Each is rejected once, naming the link; a category folder
    that is a loop is rejected by the layout check."""
    root = release_root(tmp_path, photos)
    (root / "annotations" / "bacon").mkdir()
    (root / "annotations" / "bacon" / "vid_D.fps1.csv").symlink_to("vid_D-gone.fps1.csv")
    (root / "annotations" / "candle" / "old").symlink_to("..")
    (root / "downloads" / "candle").mkdir()
    (root / "downloads" / "candle" / "vid_B.mp4").symlink_to("vid_B-gone.mp4")
    reader = ChangeItReader(str(root), ReaderConfig(extra={"question_types": "object"}))
    out = list(reader.enumerate())
    rej = {r.source_file: (r.field, r.reason) for r in out if isinstance(r, Rejection)}
    assert rej["annotations/bacon/vid_D.fps1.csv"] == (
        "annotation", "a symbolic link whose target does not exist")
    refs = {x.source_id: x for x in out if isinstance(x, ItemRef)}
    with pytest.raises(BadInput) as err:
        reader.load(refs["candle/vid_B/object"])
    assert (err.value.source_file, err.value.field, err.value.reason) == (
        "downloads/candle/vid_B.mp4", "video", "a symbolic link whose target does not exist")
    found = {r.item_id: r.reason for r in reader.unrecognized()}
    assert found == {"annotations/candle/old": "a symbolic link loop (it leads back to annotations/) "
                                               "(1 file)"}
