"""Ego4D in its released layout (the CLI's v2 folders): every narration mapped as a point with
its provenance and cleaned text, the split and task taken from the metadata, every bad input a
person can produce named by file and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.errors import BadInput
from pipelines.common.video_sources import DATASETS
from pipelines.common.video_sources.ego4d import Ego4D, clean, label_of
from tests.pipelines.common.video_sources.conftest import copy_of, listed

NAR = "v2/annotations/narration.json"
META = "v2/ego4d.json"
BIKES, CAR = "3f1c2a9e-5b7d-4c1e-9a2f-6d8e0b4c7a15", "a7e4c3b2-1d0f-4e9a-8b6c-5f2d1e0a9c38"
GONE, SILENT = "c2d4e6f8-0a1b-4c3d-8e5f-7a9b1c3d5e76", "e5f6a7b8-c9d0-4e1f-a2b3-c4d5e6f7a8b9"
STRAY, CUT = "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d", "0b9d8c7e-6f5a-4b3c-9d2e-1f0a8b7c6d54"


def _edit(root: Path, rel: str, edit) -> None:
    path = root / rel
    doc = json.loads(path.read_text())
    edit(doc)
    path.write_text(json.dumps(doc))


def test_demo_layout_maps_every_narration_with_its_file_and_field(native_demo: Path) -> None:
    reader = DATASETS["ego4d"](str(native_demo / "ego4d"))
    reader.check()
    videos, filtered, bad = listed(reader)
    assert sorted(videos) == sorted([BIKES, CAR, CUT])
    bikes = videos[BIKES]
    assert (bikes.video, bikes.split, bikes.environment, bikes.annotation_file) == \
        (f"v2/full_scale/{BIKES}.mp4", "val", "physical", NAR)
    assert (bikes.task, bikes.topic, bikes.annotated_duration_s) == \
        ("the camera wearer watched cyclists ride through a city street", "cycling / jogging", 10.0)
    assert videos[CAR].split == "train"
    # pass 1 only (six narrations, not pass 2's one), sorted by time: the file is not
    assert [s.start for s in bikes.spans] == [0.6, 1.4, 3.2, 4.2, 6.5, 8.6]
    first = bikes.spans[0]
    assert (first.kind, first.start, first.end, first.text, first.phrase) == \
        ("narration", 0.6, 0.6, "a car drives along the road", "a car drives along the road")
    assert first.field == f"{NAR}: {BIKES}.narration_pass_1.narrations[1].timestamp_sec"
    assert bikes.spans[4].text == "a bicycle stands behind a railing something"
    # one action narrated twice compares equal
    assert bikes.spans[1].label == bikes.spans[2].label == "a man rides a bicycle past the cars"
    car = videos[CAR]
    assert car.task == "the camera wearer sat in a car with a man who talked to the camera wearer"
    assert car.spans[0].text == "a man talks to the camera wearer in a car"
    assert [(f.item_id, f.rule) for f in filtered] == [(f"ego4d/{SILENT}", "not narrated")]
    assert sorted((b.source_file, b.field, b.item_id) for b in bad) == [
        (NAR, GONE, f"ego4d/{GONE}"),
        (f"v2/full_scale/{STRAY}.mp4", "path", f"ego4d/{STRAY}"),
    ]
    assert "not on disk" in next(b.reason for b in bad if b.field == GONE)
    assert list(reader.unrecognized()) == []


def test_narration_tags_become_words() -> None:
    assert clean("#C C picks a knife") == "the camera wearer picks a knife"
    assert clean("#c c picks #unsure") == "the camera wearer picks something"
    assert clean("#O X gives C a cup") == "another person gives the camera wearer a cup"
    assert clean("#O A woman X stands beside C") == "a woman stands beside the camera wearer"
    assert clean("#C C looks at X's T-shirt") == "the camera wearer looks at another person's T-shirt"
    assert clean("#Summary C stood in a kitchen.") == "the camera wearer stood in a kitchen."
    assert label_of("The camera wearer picks a knife.") == label_of("the camera wearer picks a knife")


def _narration(k: int, **change) -> object:
    return lambda d: d[CAR]["narration_pass_1"]["narrations"][k].update(change)


@pytest.mark.parametrize(("edit", "rel", "field", "reason"), [
    (_narration(1, timestamp_sec=30.0), NAR, f"{CAR}.narration_pass_1.narrations[1].timestamp_sec",
     "past the annotated duration (4.0 s)"),
    (_narration(1, timestamp_sec=float("nan")), NAR,
     f"{CAR}.narration_pass_1.narrations[1].timestamp_sec", "not finite"),
    (_narration(1, timestamp_sec=float("-inf")), NAR,
     f"{CAR}.narration_pass_1.narrations[1].timestamp_sec", "not finite"),
    (_narration(1, timestamp_sec=-2.0), NAR,
     f"{CAR}.narration_pass_1.narrations[1].timestamp_sec", "negative time -2.0 s"),
    (_narration(1, narration_text="#O #summary"), NAR,
     f"{CAR}.narration_pass_1.narrations[1].narration_text", "nothing left"),
    (lambda d: d[CAR]["narration_pass_1"]["summaries"][0].update(summary_text=7), NAR,
     f"{CAR}.narration_pass_1.summaries[0].summary_text", "must be a string"),
])
def test_a_bad_narration_rejects_that_video_only(native_demo: Path, tmp_path: Path, edit, rel: str,
                                                 field: str, reason: str) -> None:
    root = copy_of(native_demo, "ego4d", tmp_path)
    _edit(root, rel, edit)
    videos, _filtered, bad = listed(Ego4D(str(root)))
    assert CAR not in videos and BIKES in videos
    (err,) = [b for b in bad if b.item_id == f"ego4d/{CAR}"]
    assert (err.source_file, err.field) == (rel, field)
    assert reason in err.reason, err


@pytest.mark.parametrize(("edit", "field", "reason"), [
    (lambda d: d["videos"][1].update(duration_sec=float("inf")), "videos[1].duration_sec", "not finite"),
    (lambda d: d["videos"][1].update(split_fho=3), "videos[1].split_fho", "must be a split name"),
    (lambda d: d["videos"].append(dict(d["videos"][1])), "videos[5].video_uid", "also videos[1]"),
])
def test_bad_metadata_rejects_that_video_only(native_demo: Path, tmp_path: Path, edit, field: str,
                                              reason: str) -> None:
    root = copy_of(native_demo, "ego4d", tmp_path)
    _edit(root, META, edit)
    videos, _filtered, bad = listed(Ego4D(str(root)))
    assert CAR not in videos and BIKES in videos
    (err,) = [b for b in bad if b.item_id == f"ego4d/{CAR}"]
    assert (err.source_file, err.field) == (META, field)
    assert reason in err.reason, err


def test_a_byte_that_is_not_utf8_rejects_its_video_naming_the_narration(native_demo: Path,
                                                                      tmp_path: Path) -> None:
    root = copy_of(native_demo, "ego4d", tmp_path)
    path = root / NAR
    path.write_bytes(path.read_bytes().replace(b"tilts his head", b"tilts h\xefs head"))
    videos, _f, bad = listed(Ego4D(str(root)))
    assert CAR not in videos and BIKES in videos
    (err,) = [b for b in bad if b.item_id == f"ego4d/{CAR}"]
    assert (err.field, err.reason) == (f"{CAR}.narration_pass_1.narrations[2].narration_text",
                                       "not valid UTF-8: byte 0xef at column 17")


def test_a_video_listed_twice_or_a_key_held_twice_is_rejected(native_demo: Path, tmp_path: Path) -> None:
    root = copy_of(native_demo, "ego4d", tmp_path)
    path = root / NAR
    doc = json.loads(path.read_text())
    # JSON allows a key twice; json.loads would keep the last without a word
    text = json.dumps(doc)[:-1] + f', "{CAR}": {json.dumps(doc[CAR])}}}'
    text = text.replace('"status": "complete"', '"status": "complete", "status": "complete"', 1)
    path.write_text(text)
    videos, _f, bad = listed(Ego4D(str(root)))
    assert CAR not in videos
    by_item = {b.item_id: b for b in bad}
    assert (by_item[f"ego4d/{CAR}"].field, "listed twice" in by_item[f"ego4d/{CAR}"].reason) == (CAR, True)
    first = next(iter(doc))  # the first video's entry now holds "status" twice
    assert first not in videos
    assert (by_item[f"ego4d/{first}"].field) == f"{first}.status"


def test_no_pass_1_falls_back_to_pass_2(native_demo: Path, tmp_path: Path) -> None:
    root = copy_of(native_demo, "ego4d", tmp_path)
    _edit(root, NAR, lambda d: d[BIKES].pop("narration_pass_1"))
    videos, _f, _bad = listed(Ego4D(str(root)))
    (span,) = videos[BIKES].spans
    assert (span.start, span.text) == (2.0, "a cyclist rides between cars")
    assert span.field == f"{NAR}: {BIKES}.narration_pass_2.narrations[0].timestamp_sec"
    # no summary in pass 2: the task comes from the scenarios
    assert videos[BIKES].task == "a first-person video of cycling / jogging"


def test_whole_source_problems_stop_before_the_build(native_demo: Path, tmp_path: Path) -> None:
    root = copy_of(native_demo, "ego4d", tmp_path)
    (root / NAR).write_text('{"x": [')
    with pytest.raises(BadInput) as err:
        Ego4D(str(root)).check()
    assert (err.value.source_file, err.value.field) == (NAR, "json")
    (root / NAR).write_text("{}")
    (root / META).write_text('{"videos": {}}')
    with pytest.raises(BadInput) as err:
        Ego4D(str(root)).check()
    assert (err.value.source_file, err.value.field) == (META, "videos")
    (root / META).unlink()
    with pytest.raises(BadInput, match="missing"):
        Ego4D(str(root)).check()
