"""Held out by two keys (ProactiveBench §5): a training item that matches an evaluation item by its
source dataset's id or by its decoded content is left out, with a reason naming the training file,
the field that matched and the evaluation item."""

from __future__ import annotations

from pipelines.common.sources import Frame, SourceItem
from pipelines.proactivebench import heldout


def item(env: str, sid: str, content: str, files: list[tuple[str, str]], frame: str) -> SourceItem:
    return SourceItem(environment=env, source_id=sid, frames=[Frame(b"", frame)], category="cat",
                      start_frame=0, reference_frame=0, goal_frames=[0], source_files=files,
                      content_sha256=content)


EVAL_QD = item("quickdraw", "cat/4611", "a" * 64, [("cat.ndjson", "f")], "cat.ndjson:1#strokes[0:1]")
EVAL_COCO = item("coco", "val2014/300", "b" * 64, [("annotations/instances_val2014.json", "s")],
                 "val2014/apple.jpg#crop(0,0,1,1)")
HELD = {k: f"{it.environment}/{it.source_id}" for it in (EVAL_QD, EVAL_COCO) for k in heldout.keys(it)}


def test_keys_are_the_source_datasets_id_and_the_content() -> None:
    assert heldout.keys(EVAL_COCO) == {"id:coco:300": "source_id", f"content:{'b' * 64}": "content_sha256"}
    assert heldout.source_key("quickdraw", "The Eiffel Tower/99") == "quickdraw:99"


def test_an_unrelated_item_passes() -> None:
    train = item("quickdraw", "cat/5000", "c" * 64, [("cat.ndjson", "g")], "cat.ndjson:7#strokes[0:1]")
    assert heldout.match(train, HELD) is None


def test_a_reused_key_id_is_held_out_naming_file_line_and_field() -> None:
    train = item("quickdraw", "cat/4611", "c" * 64, [("cat.ndjson", "g")], "cat.ndjson:4#strokes[0:1]")
    filtered, matches = heldout.match(train, HELD)
    assert (filtered.environment, filtered.rule, filtered.stage, filtered.source_file) == \
        ("train/quickdraw", "held out", "held_out", "cat.ndjson:4")
    assert filtered.reason == ("key_id: its source id matches the evaluation split's "
                               "quickdraw/cat/4611 (held out, ProactiveBench §5)")
    assert matches == [{"environment": "quickdraw", "item": "cat/4611", "by": "source_id",
                        "test_item": "quickdraw/cat/4611"}]


def test_a_copy_under_another_name_and_id_is_held_out_by_content() -> None:
    train = item("coco", "train2014/410", "b" * 64,
                 [("annotations/instances_train2014.json", "t"), ("train2014/x.jpg", "u")],
                 "train2014/x.jpg#crop(0,0,2,2)")
    filtered, matches = heldout.match(train, HELD)
    assert filtered.source_file == "train2014/x.jpg"
    assert filtered.reason.startswith("pixels: its decoded pixels (sha256 bbbbbbbbbbbb…) matches "
                                      "the evaluation split's coco/val2014/300")
    assert [m["by"] for m in matches] == ["content_sha256"]
    # the same image id as well: both keys are named, the id first (the annotation file)
    both = item("coco", "train2014/300", "b" * 64, train.source_files, "train2014/x.jpg#crop(0,0,2,2)")
    filtered, matches = heldout.match(both, HELD)
    assert filtered.source_file == "annotations/instances_train2014.json"
    assert filtered.reason.startswith("images[id=300].id: its source id matches")
    assert "; pixels: its decoded pixels" in filtered.reason
    assert [m["by"] for m in matches] == ["source_id", "content_sha256"]
