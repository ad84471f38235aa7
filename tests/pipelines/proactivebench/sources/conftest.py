"""Fixtures: tiny datasets in the native layouts, built in tmp dirs from scikit-image's bundled
photos (real pixels, no network). Each fixture returns the dataset root."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
import skimage.data
from PIL import Image

from core.media.corruptions import apply_corruption
from core.media.images import encode_image


def _jpeg(arr: np.ndarray) -> bytes:
    return encode_image(Image.fromarray(arr), "jpeg")


@pytest.fixture(scope="session")
def photos() -> dict[str, np.ndarray]:
    """Real photos bundled in the scikit-image wheel (no pooch download)."""
    return {"chelsea": skimage.data.chelsea(), "coffee": skimage.data.coffee(),
            "astronaut": skimage.data.astronaut(), "rocket": skimage.data.rocket()}


def write_jsonl(path: Path, lines: list[Any]) -> None:
    """Objects are dumped; strings are written verbatim (to plant malformed lines)."""
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines))


@pytest.fixture
def coco_root(tmp_path: Path, photos: dict[str, np.ndarray]) -> Path:
    root = tmp_path / "coco"
    (root / "annotations").mkdir(parents=True)
    (root / "val2014").mkdir()
    files = {"cat.jpg": photos["chelsea"], "cup.jpg": photos["coffee"],
             "astro.jpg": photos["astronaut"], "rocket.jpg": photos["rocket"]}
    for name, arr in files.items():
        (root / "val2014" / name).write_bytes(_jpeg(arr))
    good = _jpeg(photos["coffee"])
    (root / "val2014" / "broken.jpg").write_bytes(good[: len(good) // 3])  # truncated JPEG
    h, w = photos["chelsea"].shape[:2]
    ch, cw = photos["coffee"].shape[:2]
    ah, aw = photos["astronaut"].shape[:2]
    rh, rw = photos["rocket"].shape[:2]
    images = [
        {"id": 1, "file_name": "cat.jpg", "width": w, "height": h},
        {"id": 2, "file_name": "cup.jpg", "width": cw, "height": ch},
        {"id": 3, "file_name": "astro.jpg", "width": aw, "height": ah},
        {"id": 4, "file_name": "rocket.jpg", "width": rw, "height": rh},
        {"id": 5, "file_name": "broken.jpg", "width": cw, "height": ch},
        {"id": 6, "file_name": "missing.jpg", "width": cw, "height": ch},
        {"id": 7, "file_name": "cup.jpg", "width": cw, "height": ch},  # id 7 given twice
        {"id": 8, "file_name": "rocket.jpg", "width": rw, "height": rh},  # no annotation
        {"id": 7, "file_name": "cat.jpg", "width": w, "height": h},
    ]
    anns = [
        {"id": 10, "image_id": 1, "category_id": 17, "bbox": [120.0, 20.0, 180.0, 200.0]},
        {"id": 11, "image_id": 2, "category_id": 47, "bbox": [170.0, 150.0, 120.0, 110.0]},
        {"id": 12, "image_id": 3, "category_id": 1, "bbox": [100.0, 20.0, 300.0, 480.0]},
        {"id": 13, "image_id": 3, "category_id": 1, "bbox": [0.0, 0.0, 50.0, 50.0]},
        {"id": 14, "image_id": 4, "category_id": 5, "bbox": [300.0, 100.0, 400.0, 600.0]},
        {"id": 15, "image_id": 5, "category_id": 47, "bbox": [170.0, 150.0, 120.0, 110.0]},
        {"id": 16, "image_id": 6, "category_id": 47, "bbox": [170.0, 150.0, 120.0, 110.0]},
        {"id": 17, "image_id": 7, "category_id": 47, "bbox": [170.0, 150.0, 120.0, 110.0]},
        {"id": 18, "image_id": 99, "category_id": 47, "bbox": [1.0, 1.0, 10.0, 10.0]},  # no image 99
    ]
    cats = [{"id": 1, "name": "person"}, {"id": 5, "name": "airplane"},
            {"id": 17, "name": "cat"}, {"id": 47, "name": "cup"}]
    (root / "annotations" / "instances_val2014.json").write_text(
        json.dumps({"images": images, "annotations": anns, "categories": cats}))
    return root


# hand-written QuickDraw strokes (simplified format: 0-255 box)
CAT_STROKES = [
    [[60, 40, 50, 100, 160, 200, 210, 190], [80, 120, 200, 230, 230, 200, 120, 80]],
    [[60, 70, 100], [80, 30, 70]],
    [[160, 190, 190], [70, 30, 80]],
    [[100, 110], [130, 130]],
    [[150, 160], [130, 130]],
]


def qd_line(key: str, strokes: list[Any], recognized: bool = True, word: str = "cat") -> dict:
    return {"word": word, "countrycode": "IT", "timestamp": "2017-03-01 12:00:00.00000 UTC",
            "recognized": recognized, "key_id": key, "drawing": strokes}


@pytest.fixture
def quickdraw_root(tmp_path: Path) -> Path:
    root = tmp_path / "quickdraw"
    root.mkdir()
    write_jsonl(root / "cat.ndjson", [
        qd_line("5001", CAT_STROKES),
        qd_line("5002", CAT_STROKES[:3]),
        qd_line("5003", CAT_STROKES, recognized=False),
        '{"word": "cat", "key_id": "5004", "drawing": [[[1,2],[3,4]]',  # line 4: bad JSON
        qd_line("5005", [[[1, 2, 3], [4, 5]]]),  # line 5: xs/ys lengths differ
        qd_line("5006", CAT_STROKES[:2]),  # line 6: key_id given twice (line 8)
        qd_line("5007", CAT_STROKES[:1]),  # line 7: one stroke
        qd_line("5006", CAT_STROKES[:3]),  # line 8
    ])
    write_jsonl(root / "full_simplified_The Eiffel Tower.ndjson", [
        qd_line("7001", [[[128, 60], [20, 240]], [[128, 196], [20, 240]], [[90, 166], [150, 150]]],
                word="The Eiffel Tower"),
    ])
    return root


WNID_CAT = "n02123045"  # tabby, tabby cat
WNID_CUP = "n03063599"  # coffee mug


@pytest.fixture
def imagenet_c_root(tmp_path: Path, photos: dict[str, np.ndarray]) -> Path:
    """Native layout for two images; ``coffee`` lacks its severity-3 file."""
    root = tmp_path / "imagenet_c"
    small = {WNID_CAT: ("ILSVRC2012_val_00000001.JPEG", photos["chelsea"][:224, 100:324]),
             WNID_CUP: ("ILSVRC2012_val_00000002.JPEG", photos["coffee"][100:324, 200:424])}
    for wnid, (name, arr) in small.items():
        for sev in range(1, 6):
            if wnid == WNID_CUP and sev == 3:
                continue
            out = apply_corruption(arr, "pixelate", sev, global_seed=0, sample_id=name)
            d = root / "pixelate" / str(sev) / wnid
            d.mkdir(parents=True, exist_ok=True)
            (d / name).write_bytes(_jpeg(out))
    return root


@pytest.fixture
def imagenet_clean_root(tmp_path: Path, photos: dict[str, np.ndarray]) -> Path:
    root = tmp_path / "imagenet"
    for wnid, key in ((WNID_CAT, "chelsea"), (WNID_CUP, "coffee")):
        (root / wnid).mkdir(parents=True)
        (root / wnid / f"{key}.JPEG").write_bytes(_jpeg(photos[key]))
    return root


def occluded_sequence(photo: np.ndarray, n: int, block_w: int) -> list[np.ndarray]:
    """A grey block sliding left→right across the photo (frame n//2 centred)."""
    h, w = photo.shape[:2]
    out = []
    for i in range(n):
        frame = photo.copy()
        cx = round(w / 2 + (i - n // 2) * (w / 2 + block_w / 2) / (n // 2))
        lo, hi = max(0, cx - block_w // 2), min(w, cx + block_w // 2)
        frame[:, lo:hi] = (40, 60, 160)
        out.append(frame)
    return out


@pytest.fixture
def manifest_root(tmp_path: Path, photos: dict[str, np.ndarray]) -> Callable[..., Path]:
    """Factory: write frames of the chelsea photo and a manifest with the given lines."""
    def make(name: str, lines: list[Any], n_frames: int = 14) -> Path:
        root = tmp_path / name
        (root / "frames").mkdir(parents=True)
        small = photos["chelsea"][::2, ::2]
        for i, arr in enumerate(occluded_sequence(small, n_frames, 120)):
            (root / "frames" / f"{i:04d}.jpg").write_bytes(_jpeg(arr))
        write_jsonl(root / "manifest.jsonl", lines)
        return root
    return make


def frame_list(n: int) -> list[str]:
    return [f"frames/{i:04d}.jpg" for i in range(n)]


def write_video(path: Path, frames: list[np.ndarray], fps: float = 2.0) -> bytes:
    """A real MJPG AVI (OpenCV writes it); returns its bytes."""
    h, w = frames[0].shape[:2]
    out = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), fps, (w, h))
    for f in frames:
        out.write(cv2.cvtColor(f, cv2.COLOR_RGB2BGR))
    out.release()
    return path.read_bytes()
