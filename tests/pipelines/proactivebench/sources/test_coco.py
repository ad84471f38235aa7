"""COCO reader: single-annotation rule, crop semantics, bad boxes and files (ProactiveBench App. 0.A.7)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import apache_beam as beam
import pytest
from apache_beam.testing import test_pipeline as beam_testing
from apache_beam.testing.util import assert_that, equal_to

from core.errors import BadInput, Rejection
from core.media.images import decode_image
from pipelines.common.sources import Filtered, ItemRef, ReaderConfig
from pipelines.common.transforms import ReadSources
from pipelines.proactivebench.sources._coco_crops import DIRECTIONS, iou, plan_crops
from pipelines.proactivebench.sources.coco import COCOReader
from tests.core.media.bombs import huge_header


def _split(reader: COCOReader) -> tuple[dict[str, ItemRef], list[Rejection]]:
    refs, rejections = {}, []
    for x in reader.enumerate():
        if isinstance(x, ItemRef):
            refs[x.source_id] = x
        elif isinstance(x, Rejection):
            rejections.append(x)
    return refs, rejections


def test_every_image_entry_is_kept_filtered_or_rejected(coco_root: Path) -> None:
    """ProactiveBench App. 0.A.7 keeps single-object images; the others are inputs *filtered*
    by a named rule, not silently skipped; an annotation of no image and every entry of an id
    given twice are rejected."""
    out = list(COCOReader(str(coco_root)).enumerate())
    refs, rejections = _split(COCOReader(str(coco_root)))
    filtered = {x.item_id: x for x in out if isinstance(x, Filtered)}
    assert sorted(refs) == ["val2014/1", "val2014/2", "val2014/5", "val2014/6"]
    assert {k: f.rule for k, f in filtered.items()} == {"val2014/3": "multi-object image",
                                                         "val2014/8": "no object"}
    assert filtered["val2014/3"].source_file == "annotations/instances_val2014.json"
    assert filtered["val2014/3"].reason.startswith("2 annotations")
    by_field = {r.field: r for r in rejections}
    bbox = by_field["annotations[14].bbox"]
    assert bbox.source_file == "annotations/instances_val2014.json"
    assert bbox.item_id == "val2014/4" and "outside the 640x427 image" in bbox.reason
    for index in (6, 8):  # both entries of image id 7, not only the second
        dup = by_field[f"images[{index}].id"]
        assert dup.item_id == "val2014/7"
        assert dup.reason == ("image id 7 is given by images[6], images[8]: every entry sharing "
                              "it is rejected")
    dangling = by_field["annotations[18].image_id"]
    assert dangling.item_id == "val2014/99" and dangling.reason == "image id 99 matches no image " \
        "(1 annotation: [18])"
    assert len(rejections) == 4
    # 9 image entries + 1 annotation of no image: every one accounted for once
    assert len(refs) + len(filtered) + len(rejections) == 10


def test_unreadable_instances_file_is_bad_input_for_the_whole_source(coco_root: Path) -> None:
    """A malformed instances file is no item's problem: the reader raises for the source (the
    build reports it before it starts), with a reason that reads well."""
    ann = coco_root / "annotations" / "instances_val2014.json"
    ann.write_text('{"images": [{"id": 1, "file_name": "cat.jpg}]}')
    reader = COCOReader(str(coco_root))
    for call in (reader.vocabulary, lambda: list(reader.enumerate())):
        with pytest.raises(BadInput) as err:
            call()
        assert (err.value.source_file, err.value.field) == ("annotations/instances_val2014.json", "json")
        assert err.value.reason == "malformed JSON: Unterminated string starting at: line 1 column 36"


def test_entries_pycocotools_cannot_index_are_rejected(coco_root: Path) -> None:
    ann = coco_root / "annotations" / "instances_val2014.json"
    data = json.loads(ann.read_text())
    data["annotations"].append({"id": 30, "category_id": 47, "bbox": [1, 1, 5, 5]})  # no image_id
    data["images"].append("not an image")
    ann.write_text(json.dumps(data))
    _, rejections = _split(COCOReader(str(coco_root)))
    fields = {r.field: r.item_id for r in rejections}
    assert fields["annotations[9]"] == "val2014/annotations[9]"
    assert fields["images[9].id"] == "val2014/images[9]"


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
                             "image_size", "split", "horizontal_step", "vertical_step"}
        assert meta["initial_iou"] <= 0.3
        x, y, w, h = meta["bbox"]
        ref_box = tuple(int(v) for v in item.frames[-1].source.split("#crop(")[1][:-1].split(","))
        assert ref_box[0] <= x and ref_box[1] <= y and ref_box[2] >= x + w and ref_box[3] >= y + h
        img = decode_image(item.frames[0].data, "f0")
        first = tuple(int(v) for v in item.frames[0].source.split("#crop(")[1][:-1].split(","))
        assert img.size == (first[2] - first[0], first[3] - first[1])
        assert item.category == {"val2014/1": "cat", "val2014/2": "cup"}[sid]


BBOX = (250.0, 150.0, 100.0, 100.0)


@pytest.mark.parametrize("direction", ["left", "right", "up", "down"])
def test_cardinal_crops_grow_towards_the_move(direction: str) -> None:
    """'move the camera left' reveals what is left: as in the authors' COCO2014Environment the
    left edge drops by the same whole-pixel step per move and every other edge stays put."""
    plan = plan_crops(600, 400, BBOX, direction, 4)
    assert plan is not None and plan.layout == "line" and len(plan.boxes) == 5
    edge = {"left": 0, "up": 1, "right": 2, "down": 3}[direction]
    sign = -1 if direction in ("left", "up") else 1
    step = plan.horizontal_step if direction in ("left", "right") else plan.vertical_step
    other = plan.vertical_step if direction in ("left", "right") else plan.horizontal_step
    assert step >= 1 and other == 0
    for k, box in enumerate(plan.boxes):
        want = list(plan.boxes[0])
        want[edge] += sign * k * step
        assert list(box) == want
    # App. 0.A.7: a trimmed first crop (low IoU, at most half the object shown on the moving
    # axis) and a last crop with the whole object
    assert plan.initial_iou == iou(plan.boxes[0], BBOX) < 0.3
    first, last = plan.boxes[0], plan.boxes[-1]
    shown = (min(first[2], 350) - max(first[0], 250)) if edge in (0, 2) else \
        (min(first[3], 250) - max(first[1], 150))
    assert 0 < shown <= 50
    assert last[0] <= 250 and last[1] <= 150 and last[2] >= 350 and last[3] >= 250


def test_zoom_widens_all_sides_equally() -> None:
    """Zoom-out: left/right by ``horizontal_step``, top/bottom by ``vertical_step`` per zoom (the
    official class's arithmetic), from a central part of the box to a crop with the object."""
    plan = plan_crops(600, 400, BBOX, "zoom_out", 3)
    assert plan is not None and plan.layout == "line" and len(plan.boxes) == 4
    h, v = plan.horizontal_step, plan.vertical_step
    assert h >= 1 and v >= 1
    l0, t0, r0, b0 = plan.boxes[0]
    assert plan.boxes == [(l0 - k * h, t0 - k * v, r0 + k * h, b0 + k * v) for k in range(4)]
    assert 250 <= l0 < r0 <= 350 and 150 <= t0 < b0 <= 250  # starts inside the object
    last = plan.boxes[-1]
    assert last[0] <= 250 and last[1] <= 150 and last[2] >= 350 and last[3] >= 250


def test_zoom_fits_an_object_touching_both_borders() -> None:
    """A box spanning the full image height leaves no slack: the start size is adjusted (by
    < K px) so that both sides still widen by the same integer step."""
    for k in (3, 4, 5):
        plan = plan_crops(451, 300, (10.0, 0.0, 390.0, 300.0), "zoom_out", k)
        assert plan is not None
        assert plan.boxes[-1][1] == 0 and plan.boxes[-1][3] == 300


def test_ordinal_grid_indexing() -> None:
    plan = plan_crops(600, 400, BBOX, "up_left", 3)
    assert plan is not None and plan.layout == "grid" and len(plan.boxes) == 16
    k1 = 4
    # a = vertical (up) steps, b = horizontal (left) steps: frame a*(K+1)+b
    l0, t0, r0, b0 = plan.boxes[0]
    h, v = plan.horizontal_step, plan.vertical_step
    for a in range(k1):
        for b in range(k1):
            assert plan.boxes[a * k1 + b] == (l0 - b * h, t0 - a * v, r0, b0)
    assert plan.boxes[-1][0] <= 250 and plan.boxes[-1][2] >= 350
    assert plan.boxes[-1][1] <= 150 and plan.boxes[-1][3] >= 250


def test_no_challenging_crop_for_a_tiny_object() -> None:
    """A 4 px object: every crop of ≥ 16 px shows all of it (low IoU, but no detail missing)."""
    assert all(plan_crops(640, 480, (10.0, 10.0, 4.0, 4.0), d, 5) is None for d in DIRECTIONS)


def test_large_object_still_has_a_trimmed_start() -> None:
    """Growing crops (unlike a sliding window) also serve an object filling the image."""
    plan = plan_crops(100, 100, (0.0, 0.0, 100.0, 100.0), "left", 3)
    assert plan is not None and plan.initial_iou <= 0.3 and plan.boxes[-1] == (0, 0, 100, 100)


def test_directions_option_restricts_the_draw(coco_root: Path) -> None:
    config = ReaderConfig(extra={"directions": ["zoom_out"]})
    refs, _ = _split(COCOReader(str(coco_root), config))
    assert {r.payload["direction"] for r in refs.values()} == {"zoom_out"}
    with pytest.raises(ValueError, match="directions"):
        _split(COCOReader(str(coco_root), ReaderConfig(extra={"directions": ["sideways"]})))


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


def _edit_instances(coco_root: Path, edit: Callable[[dict], None]) -> None:
    ann = coco_root / "annotations" / "instances_val2014.json"
    data = json.loads(ann.read_text())
    edit(data)
    ann.write_text(json.dumps(data))  # json writes NaN and Infinity as JSON readers take them


def _ann(data: dict, ann_id: int) -> dict:
    return next(a for a in data["annotations"] if a["id"] == ann_id)


def test_a_box_that_is_not_finite_is_rejected(coco_root: Path) -> None:
    """``NaN`` passed every comparison of the box check and the crop planner invented a box
    (``[0, 7, 418, 485]``) for it; a box must be finite, on single- and multi-object images."""
    def edit(data: dict) -> None:
        _ann(data, 10)["bbox"] = [float("nan"), 7.0, 418.0, 485.0]
        _ann(data, 13)["bbox"] = [0.0, 0.0, float("inf"), 50.0]  # image 3 has two objects
    _edit_instances(coco_root, edit)
    out = list(COCOReader(str(coco_root)).enumerate())
    rej = {r.item_id: r for r in out if isinstance(r, Rejection)}
    assert (rej["val2014/1"].source_file, rej["val2014/1"].field, rej["val2014/1"].reason) == (
        "annotations/instances_val2014.json", "annotations[10].bbox",
        "[nan, 7.0, 418.0, 485.0] is not finite")
    assert (rej["val2014/3"].field, rej["val2014/3"].reason) == (
        "annotations[13].bbox", "[0.0, 0.0, inf, 50.0] is not finite")
    assert {x.source_id for x in out if isinstance(x, ItemRef)} == {"val2014/2", "val2014/5",
                                                                    "val2014/6"}
    assert len(out) == 10  # every input still accounted for once


def test_a_bad_box_on_a_multi_object_image_is_reported(coco_root: Path) -> None:
    """The box outside the image was hidden behind the rule ``multi-object image``: every
    annotation of an image is checked, and a defect rejects the image, naming the box."""
    _edit_instances(coco_root, lambda data: _ann(data, 13).update(bbox=[500.0, 0.0, 50.0, 50.0]))
    out = list(COCOReader(str(coco_root)).enumerate())
    (bad,) = [x for x in out if getattr(x, "item_id", "") == "val2014/3"]
    assert isinstance(bad, Rejection)
    assert (bad.source_file, bad.field, bad.reason) == (
        "annotations/instances_val2014.json", "annotations[13].bbox",
        "[500.0, 0.0, 50.0, 50.0] lies outside the 512x512 image")
    assert [x.item_id for x in out if isinstance(x, Filtered)] == ["val2014/8"]  # no object
    assert len(out) == 10


def test_a_file_name_escaping_the_root_is_rejected(coco_root: Path) -> None:
    """``../../../elsewhere.jpg`` was read from outside the source root and kept; it is
    rejected as the manifest readers reject such paths, before anything is read."""
    outside = coco_root.parent / "elsewhere.jpg"
    outside.write_bytes((coco_root / "val2014" / "cat.jpg").read_bytes())
    _edit_instances(coco_root, lambda data: data["images"][0].update(file_name="../../elsewhere.jpg"))
    out = list(COCOReader(str(coco_root)).enumerate())
    (bad,) = [x for x in out if getattr(x, "item_id", "") == "val2014/1"]
    assert isinstance(bad, Rejection)
    assert (bad.source_file, bad.field, bad.reason) == (
        "annotations/instances_val2014.json", "images[1].file_name",
        "path 'val2014/../../elsewhere.jpg' escapes the dataset root")


def test_a_decompression_bomb_is_rejected_and_the_read_completes(coco_root: Path,
                                                                 tmp_path: Path) -> None:
    """A 600-byte JPEG whose header claims 20000x20000 raised DecompressionBombError through
    the Load step and the whole build died; it is one rejected item, the others load."""
    (coco_root / "val2014" / "cup.jpg").write_bytes(huge_header("jpeg", 20000, 20000))
    reader = COCOReader(str(coco_root))
    refs, _ = _split(reader)
    with pytest.raises(BadInput) as err:
        reader.load(refs["val2014/2"])
    assert (err.value.source_file, err.value.field, err.value.item_id) == (
        "val2014/cup.jpg", "file_name", "val2014/2")
    assert err.value.reason.startswith("the header claims over 89,478,485 pixels")
    with beam_testing.TestPipeline() as p:
        read = p | ReadSources({"coco": reader}, str(tmp_path / "blobs"))
        assert_that(read["items"] | beam.Map(lambda item: item.source_id), equal_to(["val2014/1"]),
                    label="Loaded")
        assert_that(read["load_rejected"] | beam.Map(lambda r: (r.item_id, r.source_file, r.field,
                                                                "decompression bomb" in r.reason)),
                    equal_to([("val2014/2", "val2014/cup.jpg", "file_name", True),
                              ("val2014/5", "val2014/broken.jpg", "file_name", False),
                              ("val2014/6", "val2014/missing.jpg", "file_name", False)]),
                    label="Rejected")


def test_an_instances_file_behind_a_bad_link_stops_the_source(coco_root: Path) -> None:
    """A second split's instances file that was a dangling link vanished from the listing and
    the release was built without the split; it now makes the source unreadable, naming it."""
    ann = coco_root / "annotations"
    (ann / "instances_train2014.json").symlink_to("instances_gone.json")
    with pytest.raises(BadInput) as err:
        COCOReader(str(coco_root)).vocabulary()
    assert (err.value.source_file, err.value.field, err.value.reason) == (
        "annotations/instances_train2014.json", "file", "a symbolic link whose target does not exist")


def test_an_image_linked_from_elsewhere_is_read_like_its_target(coco_root: Path) -> None:
    """A link to an existing file is followed wherever it leads (a raw-dir assembled from links
    to shared storage); the frame names the link, relative to the root, never the host path."""
    outside = coco_root.parent / "elsewhere"
    outside.mkdir()
    (coco_root / "val2014" / "cat.jpg").rename(outside / "cat.jpg")
    (coco_root / "val2014" / "cat.jpg").symlink_to(outside / "cat.jpg")
    (coco_root / "val2014" / "cup.jpg").rename(coco_root / "cup.jpg")
    (coco_root / "val2014" / "cup.jpg").symlink_to("../cup.jpg")  # inside the root
    reader = COCOReader(str(coco_root))
    refs, _ = _split(reader)
    item = reader.load(refs["val2014/1"])
    assert item.frames and all(str(outside) not in f.source for f in item.frames)
    assert all(str(outside) not in name for name, _ in item.source_files)
    assert len(reader.load(refs["val2014/2"]).frames) >= 4