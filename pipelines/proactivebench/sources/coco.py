"""MS-COCO (ProactiveBench App. 0.A.7): single-object images, explored by camera-movement crops.

Native layout: ``<root>/annotations/instances_<split>.json`` and ``<root>/<split>/<file_name>``
(the paper uses ``val2014``). Only images with exactly one annotation are candidates ("we
discard all those samples that contain more than one object"); others are skipped silently —
they are not inputs. Per sample the direction and the number of steps K ∈ {3, 4, 5} are drawn
from ``rng_for(global_seed, sample_id, "coco_crop")`` among the directions that admit a
challenging first crop (see :mod:`pipelines.proactivebench.sources._coco_crops`). The crops grow towards the
move in whole-pixel steps exactly as the authors' ``COCO2014Environment`` computes them, so every
episode replays in their evaluation package.
"""

from __future__ import annotations

import contextlib
import io
import json
import posixpath
from collections import Counter
from collections.abc import Iterator
from typing import Any

from apache_beam.io.filesystems import FileSystems
from pycocotools.coco import COCO

from core.errors import BadInput, Rejection
from core.files import sha256_hex
from core.media.images import crop, decode_image, encode_image
from core.seeding import rng_for
from pipelines.common.sources import Frame, ItemRef, SourceItem, SourceReader
from pipelines.proactivebench.sources._coco_crops import DEFAULT_MAX_IOU, DIRECTIONS, STEPS, plan_crops

ANN_DIR = "annotations"
PREFIX, SUFFIX = "instances_", ".json"


class COCOReader(SourceReader):
    """COCO instances files read with pycocotools; frames are JPEG crops of the image."""

    environment = "coco"

    def splits(self) -> list[str]:
        """``extra["split"]`` (str or list) or every ``annotations/instances_*.json``."""
        chosen = self.config.extra.get("split")
        if chosen:
            return [chosen] if isinstance(chosen, str) else list(chosen)
        found = FileSystems.match([self.path(f"{ANN_DIR}/{PREFIX}*{SUFFIX}")])[0].metadata_list
        names = [posixpath.basename(m.path)[len(PREFIX):-len(SUFFIX)] for m in found]
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

    def _load_coco(self, split: str) -> tuple[COCO, str, str]:
        rel = f"{ANN_DIR}/{PREFIX}{split}{SUFFIX}"
        raw = self.read_bytes(rel, field="file")
        try:
            dataset = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise BadInput(rel, "json", f"malformed JSON: {exc}") from exc
        for key in ("images", "annotations", "categories"):
            if not isinstance(dataset.get(key), list):
                raise BadInput(rel, key, "missing or not a list")
        coco = COCO()
        coco.dataset = dataset
        with contextlib.redirect_stdout(io.StringIO()):  # pycocotools prints progress
            coco.createIndex()
        return coco, rel, sha256_hex(raw)

    def vocabulary(self) -> list[str]:
        names: set[str] = set()
        for split in self.splits():
            coco, _, _ = self._load_coco(split)
            names.update(c["name"] for c in coco.dataset["categories"])
        return sorted(names)

    def enumerate(self) -> Iterator[ItemRef | Rejection]:
        for split in self.splits():
            try:
                coco, rel, digest = self._load_coco(split)
            except BadInput as err:
                yield self.rejection(err, item_id=split)
                continue
            yield from self._enumerate_split(split, coco, rel, digest)

    def _enumerate_split(self, split: str, coco: COCO, rel: str, digest: str
                         ) -> Iterator[ItemRef | Rejection]:
        images = coco.dataset["images"]
        per_image = Counter(a.get("image_id") for a in coco.dataset["annotations"])
        seen: set[Any] = set()
        for idx, img in enumerate(images):
            iid = img.get("id")
            if iid in seen:
                err = BadInput(rel, f"images[{idx}].id", f"duplicate image id {iid!r}",
                               item_id=f"{split}/{iid}")
                yield self.rejection(err)
                continue
            seen.add(iid)
            if per_image[iid] != 1:
                continue  # App. 0.A.7: only single-object images are candidates
            ann = coco.imgToAnns[iid][0]
            try:
                yield self._ref(split, img, ann, coco, rel, digest)
            except BadInput as err:
                yield self.rejection(err, item_id=f"{split}/{iid}")

    def _ref(self, split: str, img: dict[str, Any], ann: dict[str, Any], coco: COCO, rel: str,
             digest: str) -> ItemRef:
        sid = f"{split}/{img['id']}"
        field = f"annotations[{ann.get('id')}].bbox"
        width, height = img.get("width"), img.get("height")
        if not all(isinstance(v, int) and v > 0 for v in (width, height)):
            raise BadInput(rel, f"images[{img['id']}].width/height", "missing or not positive")
        if not isinstance(img.get("file_name"), str):
            raise BadInput(rel, f"images[{img['id']}].file_name", "missing")
        bbox = ann.get("bbox")
        if not (isinstance(bbox, list) and len(bbox) == 4
                and all(isinstance(v, int | float) for v in bbox)):
            raise BadInput(rel, field, f"{bbox!r} is not [x, y, w, h]")
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
        rng = rng_for(self.config.global_seed, f"{self.environment}/{sid}", "coco_crop")
        steps = rng.choice(STEPS)
        max_iou = float(self.config.extra.get("max_initial_iou", DEFAULT_MAX_IOU))
        plans = [p for d in self.directions()
                 if (p := plan_crops(width, height, (x, y, w, h), d, steps, max_iou))]
        if not plans:
            raise BadInput(rel, field, "object too large or too small for a challenging crop")
        plan = rng.choice(plans)
        payload = {
            "split": split, "file_name": img["file_name"], "annotation_file": rel,
            "annotation_sha256": digest, "category": cat["name"], "bbox": [x, y, w, h],
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
        )
