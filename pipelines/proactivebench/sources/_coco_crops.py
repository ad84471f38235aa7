"""Camera-movement crop plans for the MS-COCO environment (ProactiveBench App. 0.A.7).

Paper: "Crops are generated to allow for exploration of one of the ordinal or cardinal directions
or zooming out"; the first crop is "a trimmed picture with missing object details" (low IoU with
the box) and "MLLMs can propose proactive suggestions as many as the predefined discrete steps,
set between 3 and 5".

The geometry is the one of the authors' evaluation class (``proactivebench`` 0.1.1,
``COCO2014Environment._get_transform``), because the release must replay there unchanged
(``pipelines/proactivebench/compat/convert.py``): ONE image, and every move *widens* the crop
towards the move by the same step while the opposite edge stays put — "move the camera left"
lowers the left edge by ``horizontal_step`` and keeps the right one, so the view reveals what lies
to the left.
Ordinal directions widen the two edges of their components independently; zoom-out widens all
four sides, left/right by ``horizontal_step`` and top/bottom by ``vertical_step`` per zoom.

Steps are whole pixels. The official class accumulates steps in floats
(``step / k * (k + 1)``) and PIL rounds the resulting box half-to-even; with integer steps that
arithmetic is exact, so the class hides an exhausted option at exactly our last crop and shows
exactly our boxes (fractional steps would make both depend on float rounding).

Per axis:

* *reference window* — ``max(1.1 × object, 0.3 × image, 32 px)`` (at most the image), centred on
  the object and shifted inside the image; the last crop spans about it on every axis (see
  below), so it shows the whole object with context (the goal frame).
* *moving axis* — the far edge is the reference edge; the first crop shows ``VISIBLE`` of the
  object on the side opposite to the move (≥ ``MIN_START`` px), and the near edge reaches (or
  passes by < K px) the reference edge after exactly ``K`` equal integer steps.
* *zoom-out* — the first crop is a central ``ZOOM_START`` fraction of the box; the step is the
  one closest to reaching the reference window in K zooms such that the last crop contains the
  object and fits the image, with the start shifted (or resized by < K px) so that both sides
  widen by the same integer step.

The exporter derives the class's ``crop`` (the view one move *before* the first crop, since the
class already adds one step at turn 0) from these boxes; it may be an empty or inverted box when
the first step is larger than the first crop — the class only uses it arithmetically.

A direction is *feasible* when every moving step is ≥ 1 px, the moves reveal ≥ a quarter of the
object and the first crop hides at least half of it on each moving axis (cardinal/ordinal: a
large crop around a tiny object has a low IoU but misses no detail), the zoom start is ≥
``MIN_START`` px, and the first crop's IoU with the box is at most ``max_iou``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

CARDINAL = ("up", "down", "left", "right")
ORDINAL = ("up_left", "up_right", "down_left", "down_right")
DIRECTIONS = (*CARDINAL, *ORDINAL, "zoom_out")
STEPS = (3, 4, 5)
VISIBLE = 0.2  # fraction of the object extent the first crop shows on a moving axis
ZOOM_START = 0.45  # zoom-out start window, as a fraction of the box per axis
MIN_WINDOW = 32  # smallest reference window per axis
MIN_START = MIN_WINDOW // 2  # smallest first-crop extent per axis
MAX_VISIBLE = 0.5  # the first crop hides at least half of the object on a moving axis
DEFAULT_MAX_IOU = 0.3

# direction -> (vertical mode, horizontal mode); "neg" = camera moves toward smaller coordinates
_MODES = {
    "up": ("neg", "fixed"), "down": ("pos", "fixed"),
    "left": ("fixed", "neg"), "right": ("fixed", "pos"),
    "up_left": ("neg", "neg"), "up_right": ("neg", "pos"),
    "down_left": ("pos", "neg"), "down_right": ("pos", "pos"),
    "zoom_out": ("zoom", "zoom"),
}

Box = tuple[int, int, int, int]  # left, top, right, bottom


@dataclass(frozen=True)
class CropPlan:
    """Boxes in frame order plus the official class's integer per-move steps (0 = axis fixed)."""

    direction: str
    steps: int
    layout: str  # "line" | "grid"
    boxes: list[Box]  # frame order (see module doc / docs/sources.md)
    initial_iou: float
    horizontal_step: int
    vertical_step: int


@dataclass(frozen=True)
class _Axis:
    """One axis of a plan: crop edges after ``k`` moves are ``(lo0 - k*dlo, hi0 + k*dhi)``."""

    lo0: int
    hi0: int
    dlo: int  # 0 or the step: the low edge moves (camera left/up, zoom)
    dhi: int  # 0 or the step: the high edge moves (camera right/down, zoom)

    def at(self, k: int) -> tuple[int, int]:
        return self.lo0 - k * self.dlo, self.hi0 + k * self.dhi

    @property
    def step(self) -> int:
        return max(self.dlo, self.dhi)


def iou(box: Box, bbox: tuple[float, float, float, float]) -> float:
    """IoU of a crop box (l, t, r, b) with a COCO bbox (x, y, w, h)."""
    x, y, w, h = bbox
    iw = max(0.0, min(box[2], x + w) - max(box[0], x))
    ih = max(0.0, min(box[3], y + h) - max(box[1], y))
    inter = iw * ih
    union = (box[2] - box[0]) * (box[3] - box[1]) + w * h - inter
    return inter / union if union > 0 else 0.0


def _hull(length: int, a: float, size: float) -> tuple[int, int]:
    """Integer extent covering the object on one axis, inside the image."""
    return max(0, math.floor(a)), min(length, math.ceil(a + size))


def _reference(length: int, a: float, size: float) -> tuple[int, int]:
    """The last crop's extent: a window around the object with context, inside the image."""
    lo_obj, hi_obj = _hull(length, a, size)
    c = min(length, max(math.ceil(size * 1.1), math.ceil(length * 0.3), MIN_WINDOW))
    r = round(a + size / 2 - c / 2)
    r = max(hi_obj - c, min(r, lo_obj))  # window contains the object
    r = max(0, min(r, length - c))
    return r, r + c


def _moving(length: int, a: float, size: float, mode: str, k: int) -> _Axis | None:
    """Cardinal component: the far edge stays at the reference, the near one grows past it.

    The first crop keeps its ``VISIBLE`` target and the last crop extends beyond the reference
    edge by < K px so that the distance divides by K; only at the image border does the start
    move instead (by < K px, which the ``MAX_VISIBLE`` check guards).
    """
    ref_lo, ref_hi = _reference(length, a, size)
    if mode == "fixed":
        return _Axis(ref_lo, ref_hi, 0, 0)
    if mode == "neg":  # start shows the object's high side; the low edge moves down past ref_lo
        start = min(math.floor(a + size * (1 - VISIBLE)), ref_hi - MIN_START)
        step = -(-(start - ref_lo) // k)  # ceil
        if start - k * step < 0:
            step = (start - ref_lo) // k
            start = ref_lo + k * step
        axis = _Axis(start, ref_hi, step, 0)
        visible = (a + size - start) / size
    else:  # "pos": start shows the object's low side; the high edge moves up past ref_hi
        start = max(math.ceil(a + size * VISIBLE), ref_lo + MIN_START)
        step = -(-(ref_hi - start) // k)
        if start + k * step > length:
            step = (ref_hi - start) // k
            start = ref_hi - k * step
        axis = _Axis(ref_lo, start, 0, step)
        visible = (start - a) / size
    if step < 1 or k * step < size / 4 or visible > MAX_VISIBLE:
        return None
    return axis


def _zoom(length: int, a: float, size: float, k: int) -> _Axis | None:
    """Zoom-out component: both edges widen by the same integer step per zoom."""
    lo_obj, hi_obj = _hull(length, a, size)
    ref_lo, ref_hi = _reference(length, a, size)
    z0 = max(1, round(size * ZOOM_START))
    # start sizes closest to ZOOM_START first: over 2K consecutive sizes every parity of
    # (final - start) / 2K occurs, which a box touching both image borders needs
    for z in sorted(range(z0 - k, z0 + k + 1), key=lambda z: (abs(z - z0), z)):
        if z < MIN_START or z > hi_obj - lo_obj:
            continue
        h_min = max(1, math.ceil((hi_obj - lo_obj - z) / (2 * k)))  # last crop covers the object
        h_max = (length - z) // (2 * k)  # the last crop fits the image
        h_pref = math.ceil((ref_hi - ref_lo - z) / (2 * k))
        for h in sorted(range(h_min, h_max + 1), key=lambda h: (abs(h - h_pref), h)):
            # start inside the object, last crop containing it and inside the image
            lo = max(lo_obj, k * h, hi_obj - z - k * h)
            hi = min(hi_obj - z, lo_obj + k * h, length - z - k * h)
            if lo <= hi:
                start = max(lo, min(hi, round(a + size / 2 - z / 2)))
                return _Axis(start, start + z, h, h)
    return None


def plan_crops(width: int, height: int, bbox: tuple[float, float, float, float],
               direction: str, steps: int, max_iou: float = DEFAULT_MAX_IOU) -> CropPlan | None:
    """The crop boxes for one direction, or ``None`` when it is not feasible.

    Frame order: ``line`` (cardinal, zoom) frame ``k`` = after ``k`` moves; ``grid`` (ordinal)
    frame ``a*(K+1)+b`` = after ``a`` moves along the vertical component and ``b`` along the
    horizontal one (``pipelines/proactivebench/graph.py``).
    """
    x, y, w, h = bbox
    vmode, hmode = _MODES[direction]
    if direction == "zoom_out":
        hor, ver = _zoom(width, x, w, steps), _zoom(height, y, h, steps)
    else:
        hor, ver = _moving(width, x, w, hmode, steps), _moving(height, y, h, vmode, steps)
    if hor is None or ver is None:
        return None
    boxes: list[Box] = []
    if direction in ORDINAL:
        layout = "grid"
        for a in range(steps + 1):
            for b in range(steps + 1):
                (left, right), (top, bottom) = hor.at(b), ver.at(a)
                boxes.append((left, top, right, bottom))
    else:
        layout = "line"
        for i in range(steps + 1):
            (left, right), (top, bottom) = hor.at(i), ver.at(i)
            boxes.append((left, top, right, bottom))
    first = iou(boxes[0], bbox)
    if first > max_iou:
        return None
    return CropPlan(direction, steps, layout, boxes, first, hor.step, ver.step)
