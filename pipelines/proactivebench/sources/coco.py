"""MS-COCO (ProactiveBench App. 0.A.7): single-object images, explored by camera-movement crops.

Native layout: ``<root>/annotations/instances_<split>.json`` and ``<root>/<split>/<file_name>``
(the paper uses ``val2014``). Every image entry is an input; only images with exactly one
annotation become samples ("we discard all those samples that contain more than one object"):
the others are *filtered* by the rule ``multi-object image`` (or ``no object``), counted and
listed. Annotations whose ``image_id`` matches no image, and every entry of an image id given
twice, are rejected; so is an image with a bad annotation (a box that is not finite or lies
outside the image, an unknown category) or a ``file_name`` leading outside the root, whatever
its number of objects: a defect is reported as what it is, not hidden behind the rule. Per
sample the direction and the number of steps K ∈ {3, 4, 5} are drawn from
``rng_for(global_seed, sample_id, "coco_crop")`` among the directions that admit a
challenging first crop (see :mod:`pipelines.proactivebench.sources._coco_crops`). The crops grow towards the
move in whole-pixel steps exactly as the authors' ``COCO2014Environment`` computes them, so every
episode replays in their evaluation package.
"""

from __future__ import annotations

import contextlib
import io
import math
import posixpath
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from pycocotools.coco import COCO

from core.errors import BadInput, Rejection
from core.files import sha256_hex
from core.media.images import crop, decode_image, encode_image, pixels_sha256
from core.seeding import rng_for
from core.text import json_value
from pipelines.common.sources import (
    Filtered,
    Frame,
    ItemRef,
    SourceItem,
    SourceReader,
    safe_relative,
)
from pipelines.proactivebench.sources._coco_crops import DEFAULT_MAX_IOU, DIRECTIONS, STEPS, plan_crops

ANN_DIR = "annotations"
PREFIX, SUFFIX = "instances_", ".json"


@dataclass(frozen=True)
class _Object:
    """One checked annotation: its id, its box clipped to the image, its category's name."""

    ann_id: Any
    box: tuple[float, float, float, float]
    category: str


def _has_id(entry: Any, key: str = "id") -> bool:
    """An object with ``key`` pycocotools can index by (``null`` included)."""
    if not isinstance(entry, dict) or key not in entry:
        return False
    value = entry[key]
    return value is None or (isinstance(value, int | str) and not isinstance(value, bool))


class COCOReader(SourceReader):
    """COCO instances files read with pycocotools; frames are JPEG crops of the image."""

    environment = "coco"

    def splits(self) -> list[str]:
        """``extra["split"]`` (str or list) or every ``annotations/instances_*.json``."""
        chosen = self.config.extra.get("split")
        if chosen:
            return [chosen] if isinstance(chosen, str) else list(chosen)
        found = self.match(f"{ANN_DIR}/{PREFIX}*{SUFFIX}")
        names = [posixpath.basename(rel)[len(PREFIX):-len(SUFFIX)] for rel in found]
        if not names:
            raise BadInput(f"{ANN_DIR}/{PREFIX}<split>{SUFFIX}", "file", "no annotation file")
        return sorted(names)

    def directions(self) -> tuple[str, ...]:
        """Candidate directions: ``extra["directions"]`` (a subset, e.g. a zoom-only build or a
        test that needs one kind) or all nine of App. 0.A.7, always in ``DIRECTIONS`` order so
        the seeded draw does not depend on how the list was written."""
        chosen = self.config.extra.get("directions")
        if chosen is None:
            return DIRECTIONS
        chosen = [chosen] if isinstance(chosen, str) else list(chosen)
        unknown = sorted(set(chosen) - set(DIRECTIONS))
        if unknown or not chosen:
            raise ValueError(f"coco: extra['directions'] {chosen!r}: expected a non-empty subset "
                             f"of {DIRECTIONS}")
        return tuple(d for d in DIRECTIONS if d in chosen)

    def _load_coco(self, split: str) -> tuple[COCO, str, str, list[BadInput]]:
        """The indexed instances file, its path and sha256, and the entries pycocotools cannot
        index (an image or annotation that is not an object with a scalar id / image_id): they
        are left out of the index and come back as rejections of their own."""
        rel = f"{ANN_DIR}/{PREFIX}{split}{SUFFIX}"
        raw = self.read_bytes(rel, field="file")
        dataset = json_value(raw, rel)
        if not isinstance(dataset, dict):
            raise BadInput(rel, "json", "not a JSON object")
        for key in ("images", "annotations", "categories"):
            if not isinstance(dataset.get(key), list):
                raise BadInput(rel, key, "missing or not a list")
        for i, cat in enumerate(dataset["categories"]):  # every image depends on them
            if not (_has_id(cat) and isinstance(cat.get("name"), str)):
                raise BadInput(rel, f"categories[{i}]", "must be an object with an id and a name")
        bad: list[BadInput] = []
        images, annotations = [], []
        for i, img in enumerate(dataset["images"]):
            if _has_id(img):
                images.append(img)
            else:
                bad.append(BadInput(rel, f"images[{i}].id", "not an object with a scalar id",
                                    item_id=f"{split}/images[{i}]"))
        for i, ann in enumerate(dataset["annotations"]):
            if _has_id(ann) and _has_id(ann, "image_id"):
                annotations.append(ann)
            else:
                bad.append(BadInput(rel, f"annotations[{i}]", "not an object with a scalar id and "
                                    "image_id", item_id=f"{split}/annotations[{i}]"))
        coco = COCO()
        coco.dataset = dict(dataset, images=images, annotations=annotations)
        with contextlib.redirect_stdout(io.StringIO()):  # pycocotools prints progress
            coco.createIndex()
        return coco, rel, sha256_hex(raw), bad

    def vocabulary(self) -> list[str]:
        names: set[str] = set()
        for split in self.splits():
            coco, _, _, _ = self._load_coco(split)
            names.update(c["name"] for c in coco.dataset["categories"])
        return sorted(names)

    def enumerate(self) -> Iterator[ItemRef | Rejection | Filtered]:
        """An unreadable instances file is a BadInput for the whole source (the build reports it
        before it starts: :func:`pipelines.common.sources.preflight`), never a silent gap."""
        for split in self.splits():
            coco, rel, digest, bad = self._load_coco(split)
            yield from (self.rejection(err) for err in bad)
            yield from self._enumerate_split(split, coco, rel, digest)

    def _enumerate_split(self, split: str, coco: COCO, rel: str, digest: str
                         ) -> Iterator[ItemRef | Rejection | Filtered]:
        images = coco.dataset["images"]
        annotations = coco.dataset["annotations"]
        per_image = Counter(a.get("image_id") for a in annotations)
        entries: dict[Any, list[int]] = {}
        for idx, img in enumerate(images):
            entries.setdefault(img.get("id"), []).append(idx)
        for idx, img in enumerate(images):
            iid = img.get("id")
            sid = f"{split}/{iid}"
            if len(entries[iid]) > 1:  # which entry the annotations belong to cannot be told
                where = ", ".join(f"images[{i}]" for i in entries[iid])
                yield self.rejection(BadInput(rel, f"images[{idx}].id", f"image id {iid!r} is given "
                                              f"by {where}: every entry sharing it is rejected",
                                              item_id=sid))
                continue
            n = per_image[iid]
            try:
                # every annotation is checked, so a bad box on a multi-object image is reported
                # as what it is, not hidden behind the rule that leaves the image out
                objects = self._objects(split, img, coco, rel)
                if n == 1:  # App. 0.A.7: only single-object images become samples
                    yield self._ref(split, img, objects[0], rel, digest)
                    continue
            except BadInput as err:
                yield self.rejection(err, item_id=sid)
                continue
            rule = "multi-object image" if n else "no object"
            yield self.filtered(sid, rel, rule, f"{n} annotations; App. 0.A.7 keeps images "
                                                "with exactly one object")
        dangling: dict[Any, list[Any]] = {}
        for ann in annotations:
            if ann.get("image_id") not in entries:
                dangling.setdefault(ann.get("image_id"), []).append(ann.get("id"))
        for iid, ann_ids in sorted(dangling.items(), key=lambda kv: str(kv[0])):
            yield self.rejection(BadInput(
                rel, f"annotations[{ann_ids[0]}].image_id",
                f"image id {iid!r} matches no image ({len(ann_ids)} annotation"
                f"{'s' if len(ann_ids) > 1 else ''}: {ann_ids[:5]})", item_id=f"{split}/{iid}"))

    def _objects(self, split: str, img: dict[str, Any], coco: COCO, rel: str) -> list[_Object]:
        """Each annotation of an image as an :class:`_Object`, after the checks every image with
        an object gets: its size, a ``file_name`` inside the dataset root, and every box finite,
        ``[x, y, w, h]``, of positive size, inside the image, of a known category. BadInput
        names the first failure."""
        width, height = img.get("width"), img.get("height")
        if not coco.imgToAnns[img["id"]]:
            return []
        if not all(isinstance(v, int) and v > 0 for v in (width, height)):
            raise BadInput(rel, f"images[{img['id']}].width/height", "missing or not positive")
        if not isinstance(img.get("file_name"), str):
            raise BadInput(rel, f"images[{img['id']}].file_name", "missing")
        safe_relative(posixpath.join(split, img["file_name"]), rel, f"images[{img['id']}].file_name")
        return [self._object(ann, width, height, coco, rel) for ann in coco.imgToAnns[img["id"]]]

    @staticmethod
    def _object(ann: dict[str, Any], width: int, height: int, coco: COCO, rel: str) -> _Object:
        field = f"annotations[{ann.get('id')}].bbox"
        bbox = ann.get("bbox")
        if not (isinstance(bbox, list) and len(bbox) == 4
                and all(isinstance(v, int | float) for v in bbox)):
            raise BadInput(rel, field, f"{bbox!r} is not [x, y, w, h]")
        if not all(math.isfinite(v) for v in bbox):  # JSON readers take NaN and Infinity
            raise BadInput(rel, field, f"{bbox!r} is not finite")
        x, y, w, h = (float(v) for v in bbox)
        if w <= 0 or h <= 0:
            raise BadInput(rel, field, f"non-positive size {bbox}")
        tol = 0.5  # float boxes may overshoot by rounding
        if x < -tol or y < -tol or x + w > width + tol or y + h > height + tol:
            raise BadInput(rel, field, f"{bbox} lies outside the {width}x{height} image")
        x, y = max(0.0, x), max(0.0, y)
        w, h = min(w, width - x), min(h, height - y)
        cat = coco.cats.get(ann.get("category_id"))
        if cat is None:
            raise BadInput(rel, f"annotations[{ann.get('id')}].category_id",
                           f"unknown category {ann.get('category_id')!r}")
        return _Object(ann.get("id"), (x, y, w, h), cat["name"])

    def _ref(self, split: str, img: dict[str, Any], obj: _Object, rel: str, digest: str) -> ItemRef:
        sid = f"{split}/{img['id']}"
        x, y, w, h = obj.box
        width, height = img["width"], img["height"]
        rng = rng_for(self.config.global_seed, f"{self.environment}/{sid}", "coco_crop")
        steps = rng.choice(STEPS)
        max_iou = float(self.config.extra.get("max_initial_iou", DEFAULT_MAX_IOU))
        plans = [p for d in self.directions()
                 if (p := plan_crops(width, height, (x, y, w, h), d, steps, max_iou))]
        if not plans:
            raise BadInput(rel, f"annotations[{obj.ann_id}].bbox",
                           "object too large or too small for a challenging crop")
        plan = rng.choice(plans)
        payload = {
            "split": split, "file_name": img["file_name"], "annotation_file": rel,
            "annotation_sha256": digest, "category": obj.category, "bbox": [x, y, w, h],
            "image_size": [width, height], "direction": plan.direction, "steps": plan.steps,
            "layout": plan.layout, "boxes": [list(b) for b in plan.boxes],
            "initial_iou": round(plan.initial_iou, 4), "image_id": img["id"],
            "horizontal_step": plan.horizontal_step, "vertical_step": plan.vertical_step,
        }
        return ItemRef(self.environment, sid, payload)

    def load(self, ref: ItemRef) -> SourceItem:
        p = ref.payload
        rel = f"{p['split']}/{p['file_name']}"
        try:
            data = self.read_bytes(rel, field="file_name")
            image = decode_image(data, rel, field="file_name")
            if list(image.size) != p["image_size"]:
                raise BadInput(rel, "width/height", f"decoded size {list(image.size)} differs "
                                                    f"from the annotation {p['image_size']}")
        except BadInput as err:
            err.item_id = err.item_id or ref.source_id
            raise
        frames = []
        for box in p["boxes"]:
            b = tuple(box)
            frames.append(Frame(encode_image(crop(image, b), "jpeg"),  # type: ignore[arg-type]
                                f"{rel}#crop({b[0]},{b[1]},{b[2]},{b[3]})"))
        last = len(frames) - 1
        meta = {k: p[k] for k in ("direction", "steps", "layout", "initial_iou", "bbox",
                                  "image_size", "split", "horizontal_step", "vertical_step")}
        return SourceItem(
            environment=self.environment, source_id=ref.source_id, frames=frames,
            category=p["category"], start_frame=0, reference_frame=last, goal_frames=[last],
            metadata=meta,
            source_files=[(p["annotation_file"], p["annotation_sha256"]), (rel, sha256_hex(data))],
            content_sha256=pixels_sha256(image),
        )
