"""COCO reader: single-annotation rule, crop semantics, bad boxes and files (seed 000 App. 0.A.7)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipelines.common.errors import BadInput, Rejection
from pipelines.media.images import decode_image
from pipelines.sources._coco_crops import DIRECTIONS, iou, plan_crops
from pipelines.sources.base import ItemRef, ReaderConfig
from pipelines.sources.coco import COCOReader


def _split(reader: COCOReader) -> tuple[dict[str, ItemRef], list[Rejection]]:
    refs, rejections = {}, []
    for x in reader.enumerate():
        if isinstance(x, ItemRef):
            refs[x.source_id] = x
        else:
            rejections.append(x)
    return refs, rejections


def test_only_single_annotation_images_and_rejections(coco_root: Path) -> None:
    refs, rejections = _split(COCOReader(str(coco_root)))
    # image 3 has two annotations: not a candidate; image 4's box leaves the image
    assert sorted(refs) == ["val2014/1", "val2014/2", "val2014/5", "val2014/6"]
    by_field = {r.field: r for r in rejections}
    bbox = by_field["annotations[14].bbox"]
    assert bbox.source_file == "annotations/instances_val2014.json"
    assert bbox.item_id == "val2014/4" and "outside the 640x427 image" in bbox.reason
    dup = by_field["images[6].id"]
    assert dup.item_id == "val2014/2" and "duplicate image id 2" in dup.reason
    assert len(rejections) == 2


def test_nonpositive_box_is_rejected(coco_root: Path) -> None:
    ann = coco_root / "annotations" / "instances_val2014.json"
    ann.write_text(ann.read_text().replace("[120.0, 20.0, 180.0, 200.0]", "[120.0, 20.0, 0, 200]"))
    _, rejections = _split(COCOReader(str(coco_root)))
    rej = next(r for r in rejections if r.item_id == "val2014/1")
    assert rej.field == "annotations[10].bbox" and "non-positive size" in rej.reason


def test_load_frames_follow_the_plan(coco_root: Path) -> None:
    reader = COCOReader(str(coco_root))
    refs, _ = _split(reader)
    for sid in ("val2014/1", "val2014/2"):
        item = reader.load(refs[sid])
        meta = item.metadata
        k = meta["steps"]
        n = (k + 1) ** 2 if meta["layout"] == "grid" else k + 1
        assert k in (3, 4, 5) and meta["direction"] in DIRECTIONS
        assert len(item.frames) == n and item.start_frame == 0
        assert item.reference_frame == n - 1 and item.goal_frames == [n - 1]
        assert set(meta) == {"direction", "steps", "layout", "initial_iou", "bbox",
                             "image_size", "split"}
        assert meta["initial_iou"] <= 0.3
        x, y, w, h = meta["bbox"]
        ref_box = tuple(int(v) for v in item.frames[-1].source.split("#crop(")[1][:-1].split(","))
        assert ref_box[0] <= x and ref_box[1] <= y and ref_box[2] >= x + w and ref_box[3] >= y + h
        img = decode_image(item.frames[0].data, "f0")
        first = tuple(int(v) for v in item.frames[0].source.split("#crop(")[1][:-1].split(","))
        assert img.size == (first[2] - first[0], first[3] - first[1])
        assert item.category == {"val2014/1": "cat", "val2014/2": "cup"}[sid]


@pytest.mark.parametrize("direction", ["left", "right", "up", "down"])
def test_cardinal_semantics(direction: str) -> None:
    """'move the camera left' reveals what is left: the window slides left, ends on the object."""
    plan = plan_crops(600, 400, (250.0, 150.0, 100.0, 100.0), direction, 4)
    assert plan is not None and plan.layout == "line" and len(plan.boxes) == 5
    axis = 0 if direction in ("left", "right") else 1
    pos = [b[axis] for b in plan.boxes]
    if direction in ("left", "up"):
        assert pos == sorted(pos, reverse=True) and pos[0] > pos[-1]
    else:
        assert pos == sorted(pos) and pos[0] < pos[-1]
    assert plan.initial_iou == iou(plan.boxes[0], (250.0, 150.0, 100.0, 100.0)) < 0.3
    assert iou(plan.boxes[-1], (250.0, 150.0, 100.0, 100.0)) > plan.initial_iou


def test_ordinal_grid_indexing() -> None:
    bbox = (250.0, 150.0, 100.0, 100.0)
    plan = plan_crops(600, 400, bbox, "up_left", 3)
    assert plan is not None and plan.layout == "grid" and len(plan.boxes) == 16
    k1 = 4
    # a = vertical (up) steps, b = horizontal (left) steps: frame a*(K+1)+b
    for a in range(k1):
        for b in range(k1):
            box = plan.boxes[a * k1 + b]
            assert box[1] == plan.boxes[a * k1][1]  # same row, same top
            assert box[0] == plan.boxes[b][0]  # same column, same left
    tops = [plan.boxes[a * k1][1] for a in range(k1)]
    lefts = [plan.boxes[b][0] for b in range(k1)]
    assert tops == sorted(tops, reverse=True) and lefts == sorted(lefts, reverse=True)
    assert plan.boxes[-1][0] <= 250 and plan.boxes[-1][2] >= 350


def test_object_filling_the_image_has_no_challenging_crop() -> None:
    assert all(plan_crops(100, 100, (0.0, 0.0, 100.0, 100.0), d, 3) is None
               for d in DIRECTIONS if d != "zoom_out")


def test_corrupt_and_missing_images_are_bad_input(coco_root: Path) -> None:
    reader = COCOReader(str(coco_root))
    refs, _ = _split(reader)
    with pytest.raises(BadInput) as broken:
        reader.load(refs["val2014/5"])
    assert broken.value.source_file == "val2014/broken.jpg"
    assert broken.value.field == "file_name" and "truncated" in broken.value.reason
    assert broken.value.item_id == "val2014/5"
    with pytest.raises(BadInput) as missing:
        reader.load(refs["val2014/6"])
    assert missing.value.source_file == "val2014/missing.jpg"
    assert missing.value.field == "file_name" and "cannot read" in missing.value.reason


def test_draws_depend_on_seed_not_order(coco_root: Path) -> None:
    a, _ = _split(COCOReader(str(coco_root), ReaderConfig(global_seed=0)))
    b, _ = _split(COCOReader(str(coco_root), ReaderConfig(global_seed=0)))
    assert {k: v.payload for k, v in a.items()} == {k: v.payload for k, v in b.items()}


def test_vocabulary_from_json(coco_root: Path) -> None:
    assert COCOReader(str(coco_root)).vocabulary() == ["airplane", "cat", "cup", "person"]
