"""Camera-movement crop plans for the MS-COCO environment (seed 000 App. 0.A.7).

"Crops are generated to allow for exploration of one of the ordinal or cardinal directions or
zooming out"; the first crop is "a trimmed picture with missing object details" (low IoU with
the box) and "MLLMs can propose proactive suggestions as many as the predefined discrete steps,
set between 3 and 5". Semantics: "move the camera left" reveals what lies to the LEFT, so for
``left`` the first window sits to the right of the object (showing only its right edge) and each
step slides the window left until it contains the whole object (the reference).

Per axis we use a window of ``max(1.1 × object, 0.3 × image)`` (at least 32 px, at most the
image), a reference position centred on the object, and a start position overlapping the
object by ``VISIBLE`` of its extent on the moving side. A direction is *feasible* when the start
window really moves (≥ a quarter of the object and ≥ 1 px per step) and its IoU with the box is
at most ``max_iou``. Zoom-out starts from a central ``ZOOM_START`` fraction of the box and widens
linearly to the reference window.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

CARDINAL = ("up", "down", "left", "right")
ORDINAL = ("up_left", "up_right", "down_left", "down_right")
DIRECTIONS = (*CARDINAL, *ORDINAL, "zoom_out")
STEPS = (3, 4, 5)
VISIBLE = 0.2  # fraction of the object extent the first window shows on a moving axis
ZOOM_START = 0.45  # zoom-out start window, as a fraction of the box per axis
MIN_WINDOW = 32
DEFAULT_MAX_IOU = 0.3

# direction -> (vertical mode, horizontal mode); "neg" = camera moves toward smaller coordinate
_MODES = {
    "up": ("neg", "fixed"), "down": ("pos", "fixed"),
    "left": ("fixed", "neg"), "right": ("fixed", "pos"),
    "up_left": ("neg", "neg"), "up_right": ("neg", "pos"),
    "down_left": ("pos", "neg"), "down_right": ("pos", "pos"),
}

Box = tuple[int, int, int, int]  # left, top, right, bottom


@dataclass(frozen=True)
class CropPlan:
    direction: str
    steps: int
    layout: str  # "line" | "grid"
    boxes: list[Box]  # frame order (see module doc / docs/sources.md)
    initial_iou: float


def iou(box: Box, bbox: tuple[float, float, float, float]) -> float:
    """IoU of a crop box (l, t, r, b) with a COCO bbox (x, y, w, h)."""
    x, y, w, h = bbox
    iw = max(0.0, min(box[2], x + w) - max(box[0], x))
    ih = max(0.0, min(box[3], y + h) - max(box[1], y))
    inter = iw * ih
    union = (box[2] - box[0]) * (box[3] - box[1]) + w * h - inter
    return inter / union if union > 0 else 0.0


def _axis(length: int, a: float, size: float, mode: str) -> tuple[int, int, int]:
    """(window, start, reference) positions on one axis."""
    c = min(length, max(math.ceil(size * 1.1), math.ceil(length * 0.3), MIN_WINDOW))
    r = round(a + size / 2 - c / 2)
    r = max(math.ceil(a + size) - c, min(r, math.floor(a)))  # window contains the object
    r = max(0, min(r, length - c))
    if mode == "neg":  # start further along the axis, showing the object's far edge
        s = min(length - c, max(r, math.floor(a + size * (1 - VISIBLE))))
    elif mode == "pos":
        s = max(0, min(r, math.ceil(a + size * VISIBLE) - c))
    else:
        s = r
    return c, s, r


def _lerp(s: int, r: int, i: int, k: int) -> int:
    return s + round((r - s) * i / k)


def plan_crops(width: int, height: int, bbox: tuple[float, float, float, float],
               direction: str, steps: int, max_iou: float = DEFAULT_MAX_IOU) -> CropPlan | None:
    """The crop windows for one direction, or ``None`` when it is not feasible."""
    x, y, w, h = bbox
    if direction == "zoom_out":
        cw, _, rx = _axis(width, x, w, "fixed")
        ch, _, ry = _axis(height, y, h, "fixed")
        zw, zh = max(1, round(w * ZOOM_START)), max(1, round(h * ZOOM_START))
        if min(zw, zh) < MIN_WINDOW // 2:
            return None
        start = (round(x + (w - zw) / 2), round(y + (h - zh) / 2))
        start = (start[0], start[1], start[0] + zw, start[1] + zh)
        ref = (rx, ry, rx + cw, ry + ch)
        boxes = [tuple(_lerp(start[j], ref[j], i, steps) for j in range(4)) for i in
                 range(steps + 1)]
        first = iou(boxes[0], bbox)  # type: ignore[arg-type]
        return CropPlan(direction, steps, "line", boxes, first)  # type: ignore[arg-type]
    vmode, hmode = _MODES[direction]
    cw, sx, rx = _axis(width, x, w, hmode)
    ch, sy, ry = _axis(height, y, h, vmode)
    for mode, s, r, size in ((hmode, sx, rx, w), (vmode, sy, ry, h)):
        if mode != "fixed" and (abs(s - r) < max(steps, size / 4)):
            return None
    if direction in CARDINAL:
        boxes = []
        for i in range(steps + 1):
            left, top = _lerp(sx, rx, i, steps), _lerp(sy, ry, i, steps)
            boxes.append((left, top, left + cw, top + ch))
        layout = "line"
    else:  # grid: frame a*(K+1)+b, a = vertical steps taken, b = horizontal steps taken
        boxes = []
        for a in range(steps + 1):
            for b in range(steps + 1):
                left, top = _lerp(sx, rx, b, steps), _lerp(sy, ry, a, steps)
                boxes.append((left, top, left + cw, top + ch))
        layout = "grid"
    first = iou(boxes[0], bbox)
    if first > max_iou:
        return None
    return CropPlan(direction, steps, layout, boxes, first)
