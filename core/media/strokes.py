"""QuickDraw cumulative stroke rendering (ProactiveBench App. 0.A.5).

Each frame adds one more stroke of the user's drawing, from the first stroke alone (the least
informative state) to the full drawing (the reference). Strokes use the *simplified* QuickDraw
format: ``[[x0, x1, ...], [y0, y1, ...]]`` per stroke, coordinates in a 0–255 box.
"""

from __future__ import annotations

import hashlib
import json

from PIL import Image, ImageDraw

from core.media.images import encode_image

CANVAS = 256
LINE_WIDTH = 3  # close to the browser stroke of the original game at 256 px
PAD = 8  # keep strokes that touch 0 or 255 fully visible

Stroke = tuple[list[float], list[float]]


def render_strokes(strokes: list[Stroke], count: int, size: int = CANVAS) -> Image.Image:
    """Black strokes 0..count-1 on white, coordinates mapped from 0–255 into the padded canvas."""
    img = Image.new("L", (size, size), 255)
    draw = ImageDraw.Draw(img)
    scale = (size - 2 * PAD) / 255.0
    for xs, ys in strokes[:count]:
        pts = [(PAD + x * scale, PAD + y * scale) for x, y in zip(xs, ys, strict=True)]
        if len(pts) == 1:
            x, y = pts[0]
            r = LINE_WIDTH / 2
            draw.ellipse((x - r, y - r, x + r, y + r), fill=0)
        else:
            draw.line(pts, fill=0, width=LINE_WIDTH, joint="curve")
    return img


def cumulative_pngs(strokes: list[Stroke], size: int = CANVAS) -> list[bytes]:
    """One PNG per prefix of the stroke list: frame i shows strokes 0..i."""
    return [encode_image(render_strokes(strokes, i + 1, size), "png") for i in range(len(strokes))]


def strokes_sha256(strokes: list[Stroke] | list[list[list[float]]]) -> str:
    """sha256 of a drawing's stroke data as canonical JSON (``[[xs, ys], ...]``, whole numbers
    written as integers, no spaces): the same drawing gives the same key under any ``key_id``,
    in any file, on any line, whether a writer stored ``12`` or ``12.0``."""

    def number(v: float) -> float | int:
        return int(v) if float(v).is_integer() else float(v)

    canonical = [[[number(x) for x in s[0]], [number(y) for y in s[1]]] for s in strokes]
    return hashlib.sha256(json.dumps(canonical, separators=(",", ":")).encode()).hexdigest()
