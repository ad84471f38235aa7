"""QuickDraw cumulative rendering."""

from __future__ import annotations

import numpy as np

from core.media.images import decode_image
from core.media.strokes import cumulative_pngs, render_strokes

STROKES = [([0, 255], [0, 255]), ([0, 255], [255, 0]), ([128], [128])]


def test_cumulative_frames_add_ink_and_are_deterministic() -> None:
    pngs = cumulative_pngs(STROKES)
    assert len(pngs) == 3 and pngs == cumulative_pngs(STROKES)
    ink = [int((np.asarray(decode_image(p, "x").convert("L")) < 128).sum()) for p in pngs]
    assert ink[0] < ink[1] <= ink[2]


def test_render_is_black_on_white_256() -> None:
    img = render_strokes(STROKES, 1)
    arr = np.asarray(img)
    assert img.size == (256, 256) and arr.max() == 255 and arr.min() == 0
    assert arr[0, -1] == 255  # the first stroke is the main diagonal only


def test_strokes_sha256_keys_the_stroke_data() -> None:
    from core.media.strokes import strokes_sha256

    as_lists = [[list(xs), list(ys)] for xs, ys in STROKES]
    # tuples or lists, ints or the floats a JSON reader may give: the same drawing, the same key
    assert strokes_sha256(STROKES) == strokes_sha256(as_lists)
    assert strokes_sha256(STROKES) == strokes_sha256([[[float(x) for x in xs], ys] for xs, ys in as_lists])
    moved = [as_lists[0], [[0, 255], [255, 1]], as_lists[2]]
    assert len({strokes_sha256(as_lists), strokes_sha256(moved), strokes_sha256(as_lists[::-1])}) == 3
