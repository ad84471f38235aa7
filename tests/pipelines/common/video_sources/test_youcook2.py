"""YouCook2 in its released layout: every field mapped with its provenance, every bad input a
person can produce named by file and field, nothing listed twice or dropped."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.errors import BadInput
from pipelines.common.video_sources.youcook2 import YouCook2
from tests.pipelines.common.video_sources.conftest import copy_of, listed

ANN = "annotations/youcookii_annotations_trainval.json"


def _edit(root: Path, edit) -> None:
    path = root / ANN
    doc = json.loads(path.read_text())
    edit(doc["database"])
    path.write_text(json.dumps(doc))


def test_demo_layout_maps_every_step_with_its_file_and_field(native_demo: Path) -> None:
    reader = YouCook2(str(native_demo / "youcook2"))
    reader.check()
    videos, filtered, bad = listed(reader)
    assert sorted(videos) == ["-cAmPuS0001", "bIkEsDemo01", "cAmPuScut02"]
    bikes = videos["bIkEsDemo01"]
    assert (bikes.video, bikes.split, bikes.environment) == \
        ("raw_videos/validation/1/bIkEsDemo01.mp4", "val", "physical")
    assert (bikes.task, bikes.topic, bikes.annotated_duration_s) == \
        ("cooking street cycling footage", "how to make street cycling footage", 10.0)
    step = bikes.spans[1]
    assert (step.kind, step.start, step.end, step.text) == \
        ("step", 1.0, 3.0, "a cyclist rides past cars in traffic")
    assert step.field == f"{ANN}: database.bIkEsDemo01.annotations[1].segment"
    assert step.phrase == 'the step "a cyclist rides past cars in traffic" begins'
    assert [(f.item_id, f.rule) for f in filtered] == \
        [("youcook2/tReEtEsT001", "test split: captions withheld")]
    assert sorted((b.source_file, b.field, b.item_id) for b in bad) == [
        (ANN, "database.gOnEvIdeo01", "youcook2/gOnEvIdeo01"),
        ("raw_videos/training/2/nObOdYlIsTs.mkv", "path", "youcook2/nObOdYlIsTs"),
    ]
    assert "not on disk" in next(b.reason for b in bad if b.field == "database.gOnEvIdeo01")
    assert list(reader.unrecognized()) == []


@pytest.mark.parametrize(("edit", "field", "reason"), [
    (lambda db: db["bIkEsDemo01"]["annotations"][1].update(segment=[3, 1]),
     "database.bIkEsDemo01.annotations[1].segment", "end 1.0 s is before start 3.0 s"),
    (lambda db: db["bIkEsDemo01"]["annotations"][1].update(segment=[1, 30]),
     "database.bIkEsDemo01.annotations[1].segment", "ends past the annotated duration (10.0 s)"),
    (lambda db: db["bIkEsDemo01"]["annotations"][1].update(segment=[1, float("nan")]),
     "database.bIkEsDemo01.annotations[1].segment[1]", "not finite"),
    (lambda db: db["bIkEsDemo01"]["annotations"][1].update(segment=[1]),
     "database.bIkEsDemo01.annotations[1].segment", "must be [start, end]"),
    (lambda db: db["bIkEsDemo01"]["annotations"][1].pop("sentence"),
     "database.bIkEsDemo01.annotations[1].sentence", "must be a string"),
    (lambda db: db["bIkEsDemo01"].update(recipe_type="999"),
     "database.bIkEsDemo01.recipe_type", "not in label_foodtype.csv"),
    (lambda db: db["bIkEsDemo01"].update(subset="dev"),
     "database.bIkEsDemo01.subset", "is not one of"),
    (lambda db: db["bIkEsDemo01"].update(subset="training"),
     "video id", "in val, but annotations/youcookii_annotations_trainval.json: database.bIkEsDemo01 "
                 "says training / 1"),
])
def test_a_bad_field_rejects_that_video_only(native_demo: Path, tmp_path: Path, edit, field: str,
                                             reason: str) -> None:
    root = copy_of(native_demo, "youcook2", tmp_path)
    _edit(root, edit)
    videos, _filtered, bad = listed(YouCook2(str(root)))
    assert "bIkEsDemo01" not in videos and "-cAmPuS0001" in videos
    found = [b for b in bad if b.item_id == "youcook2/bIkEsDemo01"]
    assert len(found) == 1, bad
    assert reason in found[0].reason, found[0]
    assert field in (found[0].field, f"{found[0].source_file}: {found[0].field}") or \
        found[0].field.startswith(field) or field in found[0].reason, found[0]


def test_a_byte_that_is_not_utf8_rejects_its_video_naming_the_sentence(native_demo: Path,
                                                                     tmp_path: Path) -> None:
    root = copy_of(native_demo, "youcook2", tmp_path)
    path = root / ANN
    path.write_bytes(path.read_bytes().replace(b"cyclist rides", b"cyclist r\xffdes"))
    videos, _f, bad = listed(YouCook2(str(root)))
    assert "bIkEsDemo01" not in videos
    (err,) = [b for b in bad if b.item_id == "youcook2/bIkEsDemo01"]
    assert (err.field, err.reason) == ("database.bIkEsDemo01.annotations[1].sentence",
                                       "not valid UTF-8: byte 0xff at column 12")


def test_an_id_in_two_split_lists_or_two_annotation_files_is_named(native_demo: Path, tmp_path: Path) -> None:
    root = copy_of(native_demo, "youcook2", tmp_path)
    (root / "splits" / "test_list.txt").write_text("2/tReEtEsT001\n1/bIkEsDemo01\n")
    test = root / "annotations" / "youcookii_annotations_test_segments_only.json"
    doc = json.loads(test.read_text())
    doc["database"]["-cAmPuS0001"] = doc["database"]["tReEtEsT001"]
    test.write_text(json.dumps(doc))
    videos, _f, bad = listed(YouCook2(str(root)))
    by_item = {b.item_id: b for b in bad}
    assert "bIkEsDemo01" not in videos
    assert by_item["youcook2/bIkEsDemo01"].source_file == "splits/test_list.txt:2"
    assert "also on splits/val_list.txt:1" in by_item["youcook2/bIkEsDemo01"].reason
    dup = by_item["youcook2/-cAmPuS0001"]
    assert dup.source_file == "annotations/youcookii_annotations_test_segments_only.json"
    assert "also in annotations/youcookii_annotations_trainval.json" in dup.reason


def test_whole_source_problems_stop_before_the_build(native_demo: Path, tmp_path: Path) -> None:
    root = copy_of(native_demo, "youcook2", tmp_path)
    (root / ANN).write_text('{"database": {"x": ')
    with pytest.raises(BadInput) as err:
        YouCook2(str(root)).check()
    assert (err.value.source_file, err.value.field) == (ANN, "json")
    (root / ANN).write_text('{"database": {"x": {"duration": 1' + "0" * 5000 + "}}}")
    with pytest.raises(BadInput, match="an integer of 5001 digits") as err:
        YouCook2(str(root)).check()  # json.loads raises a bare ValueError for it
    (root / ANN).unlink()
    with pytest.raises(BadInput, match="missing"):
        YouCook2(str(root)).check()
    (root / "label_foodtype.csv").write_text('1,"' + "x" * 200_000 + '"\n')
    with pytest.raises(BadInput, match="malformed CSV") as err:
        YouCook2(str(root))._foodtypes()  # a cell over the csv module's field limit
    assert err.value.source_file == "label_foodtype.csv:1"


def test_two_files_of_one_video_and_files_outside_the_layout(native_demo: Path, tmp_path: Path) -> None:
    root = copy_of(native_demo, "youcook2", tmp_path)
    src = root / "raw_videos" / "validation" / "1" / "bIkEsDemo01.mp4"
    (src.parent / "bIkEsDemo01.webm").write_bytes(src.read_bytes())
    (root / "notes.txt").write_text("x")
    (root / "raw_videos" / "stray.mp4").write_bytes(b"x")
    videos, _f, bad = listed(YouCook2(str(root)))
    assert "bIkEsDemo01" not in videos
    assert any("on disk more than once" in b.reason for b in bad)
    odd = sorted((r.source_file, r.reason.split(" (")[0]) for r in YouCook2(str(root)).unrecognized())
    assert [f for f, _ in odd] == ["notes.txt", "raw_videos/stray.mp4"]

