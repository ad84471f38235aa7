"""ActivityNet Captions in its released layout: every field mapped with its provenance, the two
validation passes read as one video, every bad input a person can produce named by file and
field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.errors import BadInput
from pipelines.common.video_sources import DATASETS
from pipelines.common.video_sources.activitynet_captions import ActivityNetCaptions
from tests.pipelines.common.video_sources.conftest import copy_of, listed

CAR = "v_cArPhOnE001"


def _edit(root: Path, name: str, edit) -> None:
    path = root / name
    doc = json.loads(path.read_text())
    edit(doc)
    path.write_text(json.dumps(doc))


def test_demo_layout_maps_every_caption_with_its_file_and_field(native_demo: Path) -> None:
    reader = DATASETS["activitynet_captions"](str(native_demo / "activitynet_captions"))
    reader.check()
    videos, filtered, bad = listed(reader)
    assert sorted(videos) == ["-cAmPuSsq01", "bIkEsDemo01", "cAmPuScut02", "cArPhOnE001"]
    bikes = videos["bIkEsDemo01"]
    assert (bikes.video, bikes.split, bikes.environment, bikes.annotation_file) == \
        ("videos/v_bIkEsDemo01.mp4", "val", "physical", "val_1.json")
    # ActivityNet's own label names the activity; without one the text is neutral
    assert (bikes.task, bikes.topic, bikes.annotated_duration_s) == \
        ("riding a bike in traffic", "tips for riding a bike in traffic", 10.0)
    campus = videos["-cAmPuSsq01"]
    assert (campus.video, campus.split, campus.task, campus.topic) == \
        ("videos/-cAmPuSsq01.mkv", "train", "a human activity", "the activity in the video")
    assert videos["cArPhOnE001"].video == "videos/cArPhOnE001.mp4"
    # the val_1.json pass: five shots, not val_2.json's two sentences
    assert len(bikes.spans) == 5
    step = bikes.spans[1]
    assert (step.kind, step.start, step.end) == ("step", 1.2, 3.04)
    assert (step.text, step.label, step.phrase) == (
        "A cyclist rides past cars in traffic.", "a cyclist rides past cars in traffic.",
        "a cyclist rides past cars in traffic")
    assert step.field == "val_1.json: v_bIkEsDemo01.timestamps[1]"
    assert filtered == []
    assert sorted((b.source_file, b.field, b.item_id) for b in bad) == [
        ("train.json", "v_gOnEvIdeo01", "activitynet_captions/gOnEvIdeo01"),
        ("videos/v_tReEnObOdY1.mkv", "path", "activitynet_captions/v_tReEnObOdY1"),
    ]
    assert "not on disk" in next(b.reason for b in bad if b.field == "v_gOnEvIdeo01")
    assert "unannotated input" in next(b.reason for b in bad if b.field == "path")
    assert list(reader.unrecognized()) == []


@pytest.mark.parametrize(("edit", "field", "reason"), [
    (lambda d: d[CAR].update(timestamps=[[0.0, 2.3], [3.0, 2.3]]),
     f"{CAR}.timestamps[1]", "end 2.3 s is before start 3.0 s"),
    (lambda d: d[CAR].update(timestamps=[[0.0, 2.3], [2.3, 30.0]]),
     f"{CAR}.timestamps[1]", "ends past the annotated duration (4.0 s)"),
    (lambda d: d[CAR].update(timestamps=[[0.0, 2.3], [2.3, float("nan")]]),
     f"{CAR}.timestamps[1][1]", "not finite"),
    (lambda d: d[CAR].update(timestamps=[[0.0, 2.3], [float("inf"), 4.0]]),
     f"{CAR}.timestamps[1][0]", "not finite"),
    (lambda d: d[CAR].update(timestamps=[[-1.0, 2.3], [2.3, 4.0]]),
     f"{CAR}.timestamps[0][0]", "negative time -1.0 s"),
    (lambda d: d[CAR].update(duration=float("nan")), f"{CAR}.duration", "not finite"),
    (lambda d: d[CAR]["sentences"].pop(), f"{CAR}.sentences",
     "1 sentences for 2 timestamps"),
    (lambda d: d[CAR].update(timestamps=[[0.0, 2.3], [2.3]]), f"{CAR}.timestamps[1]",
     "must be [start, end]"),
    (lambda d: d[CAR]["sentences"].__setitem__(1, " "), f"{CAR}.sentences[1]", "empty"),
])
def test_a_bad_field_rejects_that_video_only(native_demo: Path, tmp_path: Path, edit, field: str,
                                             reason: str) -> None:
    root = copy_of(native_demo, "activitynet_captions", tmp_path)
    _edit(root, "train.json", edit)
    videos, _filtered, bad = listed(ActivityNetCaptions(str(root)))
    assert "cArPhOnE001" not in videos and "-cAmPuSsq01" in videos
    (err,) = [b for b in bad if b.item_id == "activitynet_captions/cArPhOnE001"]
    assert (err.source_file, err.field) == ("train.json", field)
    assert reason in err.reason, err


def test_a_byte_that_is_not_utf8_rejects_its_video_naming_the_sentence(native_demo: Path,
                                                                     tmp_path: Path) -> None:
    root = copy_of(native_demo, "activitynet_captions", tmp_path)
    path = root / "train.json"
    path.write_bytes(path.read_bytes().replace(b"tilts his head", b"tilts h\xe9s head"))
    videos, _f, bad = listed(ActivityNetCaptions(str(root)))
    assert "cArPhOnE001" not in videos and "-cAmPuSsq01" in videos
    (err,) = [b for b in bad if b.item_id == "activitynet_captions/cArPhOnE001"]
    assert (err.source_file, err.field) == ("train.json", f"{CAR}.sentences[1]")
    assert err.reason == "not valid UTF-8: byte 0xe9 at column 44"


def test_an_id_in_train_and_val_is_rejected_an_id_in_both_val_passes_is_not(native_demo: Path,
                                                                          tmp_path: Path) -> None:
    root = copy_of(native_demo, "activitynet_captions", tmp_path)
    train = json.loads((root / "train.json").read_text())
    _edit(root, "val_2.json", lambda d: d.update({CAR: train[CAR]}))
    videos, _f, bad = listed(ActivityNetCaptions(str(root)))
    assert "cArPhOnE001" not in videos and "bIkEsDemo01" in videos
    (err,) = [b for b in bad if b.item_id == "activitynet_captions/cArPhOnE001"]
    assert (err.source_file, err.field) == ("val_2.json", CAR)
    assert "also in train.json" in err.reason


def test_a_video_listed_twice_in_one_file_is_rejected(native_demo: Path, tmp_path: Path) -> None:
    root = copy_of(native_demo, "activitynet_captions", tmp_path)
    path = root / "val_1.json"
    text = path.read_text()
    # JSON allows a key twice; json.loads would keep the second without a word
    path.write_text(text.rstrip().rstrip("}") + ', "v_bIkEsDemo01": {"duration": 10.0, '
                    '"timestamps": [], "sentences": []}}')
    videos, _f, bad = listed(ActivityNetCaptions(str(root)))
    assert "bIkEsDemo01" not in videos
    (err,) = [b for b in bad if b.item_id == "activitynet_captions/bIkEsDemo01"]
    assert (err.source_file, err.field) == ("val_1.json", "v_bIkEsDemo01")
    assert "listed twice" in err.reason


def test_both_names_of_one_video_on_disk_are_one_video_twice(native_demo: Path, tmp_path: Path) -> None:
    root = copy_of(native_demo, "activitynet_captions", tmp_path)
    src = root / "videos" / "cArPhOnE001.mp4"
    (root / "videos" / "v_cArPhOnE001.mp4").write_bytes(src.read_bytes())
    videos, _f, bad = listed(ActivityNetCaptions(str(root)))
    assert "cArPhOnE001" not in videos
    (err,) = [b for b in bad if b.item_id == "activitynet_captions/cArPhOnE001"]
    assert "on disk more than once" in err.reason


def test_whole_source_problems_stop_before_the_build(native_demo: Path, tmp_path: Path) -> None:
    root = copy_of(native_demo, "activitynet_captions", tmp_path)
    (root / "val_2.json").write_text('{"v_bIkEsDemo01": ')
    with pytest.raises(BadInput) as err:
        ActivityNetCaptions(str(root)).check()
    assert (err.value.source_file, err.value.field) == ("val_2.json", "json")
    (root / "val_2.json").unlink()
    (root / "activity_net.v1-3.min.json").write_text('{"version": "1.3"}')
    with pytest.raises(BadInput) as err:
        ActivityNetCaptions(str(root)).check()
    assert (err.value.source_file, err.value.field) == ("activity_net.v1-3.min.json", "database")
    for name in ("activity_net.v1-3.min.json", "train.json", "val_1.json"):
        (root / name).unlink()
    with pytest.raises(BadInput, match="missing"):
        ActivityNetCaptions(str(root)).check()
