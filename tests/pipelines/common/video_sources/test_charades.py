"""Charades in its released layout: every action mapped with its class and provenance, ends past
the video's length clipped as the maintainer says, every bad input a person can produce named by
file, line and field."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.errors import BadInput
from pipelines.common.video_sources import DATASETS
from pipelines.common.video_sources.charades import Charades, action_clause, scene_place
from tests.pipelines.common.video_sources.conftest import copy_of, listed

TRAIN = "Charades/Charades_v1_train.csv"
CAR_ACTIONS = "c000 0.00 4.00;c001 0.00 4.40;c002 2.30 4.00"


def _replace(root: Path, rel: str, old: str, new: str) -> None:
    path = root / rel
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


def test_demo_layout_maps_every_action_with_its_line_and_field(native_demo: Path) -> None:
    reader = DATASETS["charades"](str(native_demo / "charades"))
    reader.check()
    videos, filtered, bad = listed(reader)
    assert sorted(videos) == ["B1CUT", "B1KES", "C4RPH"]
    car = videos["C4RPH"]
    assert (car.video, car.split, car.environment, car.annotation_file) == \
        ("Charades_v1_480/C4RPH.mp4", "train", "physical", TRAIN)
    # scene "Other" names no place
    assert (car.task, car.topic, car.annotated_duration_s) == \
        ("a person going about everyday activities", "everyday activities", 4.0)
    raising = car.spans[2]
    assert (raising.kind, raising.start, raising.end, raising.label, raising.text) == \
        ("action", 2.3, 4.0, "c002", "Raising a hand")
    assert raising.phrase == "someone starts raising a hand"
    assert raising.extra == (("state", "someone is raising a hand"),)
    assert raising.field == f"{TRAIN}:2: actions[2]"
    # c001 ends at 4.40 on a 4.00 s video: clipped, the annotated end kept
    talking = car.spans[1]
    assert (talking.start, talking.end, talking.get("annotated_end")) == (0.0, 4.0, "4.4")
    bikes = videos["B1KES"]
    assert (bikes.split, bikes.annotation_file) == ("test", "Charades/Charades_v1_test.csv")
    walking = bikes.spans[2]
    assert (walking.label, walking.text, walking.phrase, walking.get("state")) == (
        "c004", "Someone is walking somewhere", "someone starts walking somewhere",
        "someone is walking somewhere")
    # repeats of one class compare equal
    assert [s.label for s in bikes.spans] == ["c003", "c003", "c004"]
    assert filtered == []
    assert sorted((b.source_file, b.field, b.item_id) for b in bad) == [
        (f"{TRAIN}:4", "id", "charades/G0NE1"),
        ("Charades_v1_480/N0B0D.mp4", "path", "charades/N0B0D"),
    ]
    assert list(reader.unrecognized()) == []


def test_scene_and_class_names_read_as_phrases() -> None:
    assert scene_place("Kitchen") == "in the kitchen"
    assert scene_place("Home Office / Study (A room in a house used for work)") == "in the home office"
    assert scene_place("Stairs") == "on the stairs"
    assert scene_place("Other") == ""
    assert action_clause("Holding some clothes") == "holding some clothes"
    assert action_clause("Someone is laughing") == "laughing"


@pytest.mark.parametrize(("actions", "field", "reason"), [
    ("c000 0.00 4.00;c001 11.90", "actions[1]", "expected '<class> <start> <end>', got 'c001 11.90'"),
    ("c000 0.00 4.00;c999 0.00 1.00", "actions[1]", "class c999 is not in Charades_v1_classes.txt"),
    ("c000 3.00 1.00", "actions[0]", "end 1.0 s is before start 3.0 s"),
    ("c000 4.20 5.00", "actions[0]", "starts at or after the annotated length (4.0 s)"),
    ("c000 nan 1.00", "actions[0].start", "not finite"),
    ("c000 0.00 inf", "actions[0].end", "not finite"),
    ("c000 -1.00 1.00", "actions[0].start", "negative time -1.0 s"),
])
def test_a_bad_action_rejects_that_video_only(native_demo: Path, tmp_path: Path, actions: str,
                                              field: str, reason: str) -> None:
    root = copy_of(native_demo, "charades", tmp_path)
    _replace(root, TRAIN, CAR_ACTIONS, actions)
    videos, _filtered, bad = listed(Charades(str(root)))
    assert "C4RPH" not in videos and "B1KES" in videos
    (err,) = [b for b in bad if b.item_id == "charades/C4RPH"]
    assert (err.source_file, err.field) == (f"{TRAIN}:2", field)
    assert reason in err.reason, err


def test_a_bad_length_or_an_empty_actions_field(native_demo: Path, tmp_path: Path) -> None:
    root = copy_of(native_demo, "charades", tmp_path)
    _replace(root, TRAIN, f'"{CAR_ACTIONS}",4.00', '"",4.00')
    _replace(root, TRAIN, ",10.00\n", ",NaN\n")  # B1CUT's length
    videos, filtered, bad = listed(Charades(str(root)))
    assert sorted(videos) == ["B1KES"]
    assert [(f.item_id, f.source_file, f.rule) for f in filtered] == \
        [("charades/C4RPH", f"{TRAIN}:2", "no actions annotated")]
    (err,) = [b for b in bad if b.item_id == "charades/B1CUT"]
    assert (err.source_file, err.field, err.reason) == (f"{TRAIN}:3", "length", "not finite: 'NaN'")


def test_a_byte_that_is_not_utf8_rejects_its_video_only(native_demo: Path, tmp_path: Path) -> None:
    root = copy_of(native_demo, "charades", tmp_path)
    path = root / TRAIN
    path.write_bytes(path.read_bytes().replace(b"C4RPH,D3MO,Other", b"C4RPH,D3MO,Oth\xe9r", 1))
    videos, _f, bad = listed(Charades(str(root)))
    assert "C4RPH" not in videos and "B1CUT" in videos
    (err,) = [b for b in bad if b.item_id == "charades/C4RPH"]
    assert (err.source_file, err.field, err.reason) == \
        (f"{TRAIN}:2", "scene", "not valid UTF-8: byte 0xe9 at column 4")


def test_an_id_on_two_rows_is_rejected_naming_both(native_demo: Path, tmp_path: Path) -> None:
    root = copy_of(native_demo, "charades", tmp_path)
    test = root / "Charades" / "Charades_v1_test.csv"
    car_row = (root / TRAIN).read_text().splitlines()[1]
    test.write_text(test.read_text() + car_row + "\n")
    videos, _f, bad = listed(Charades(str(root)))
    assert "C4RPH" not in videos and "B1KES" in videos
    (err,) = [b for b in bad if b.item_id == "charades/C4RPH"]
    assert (err.source_file, err.field) == ("Charades/Charades_v1_test.csv:3", "id")
    assert f"also on {TRAIN}:2" in err.reason


def test_whole_source_problems_stop_before_the_build(native_demo: Path, tmp_path: Path) -> None:
    root = copy_of(native_demo, "charades", tmp_path)
    (root / TRAIN).write_text((root / TRAIN).read_text() + 'X1,D3MO,"Kitchen\n')
    with pytest.raises(BadInput) as err:
        Charades(str(root)).check()
    assert (err.value.source_file, err.value.field) == (f"{TRAIN}:5", "csv")
    (root / TRAIN).write_text("id,scene,actions\nC4RPH,Other,\n")
    with pytest.raises(BadInput) as err:
        Charades(str(root)).check()
    assert (err.value.source_file, err.value.field) == (f"{TRAIN}:1", "header")
    classes = root / "Charades" / "Charades_v1_classes.txt"
    classes.write_text("c000 Sitting in a car\nc000 Talking to the camera\n")
    with pytest.raises(BadInput) as err:
        Charades(str(root)).check()
    assert (err.value.source_file, err.value.field) == ("Charades/Charades_v1_classes.txt:2", "class id")
    classes.unlink()
    with pytest.raises(BadInput, match="missing"):
        Charades(str(root)).check()
