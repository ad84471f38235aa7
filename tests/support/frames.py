"""Ground truth for frame-sampling tests: every decodable frame of a video, and which of them a
JPEG shows.

Why pixels and not bytes: a caller's bug (a frame from after t) must be caught whatever JPEG
settings that caller used, so a sampled JPEG is identified as the decoded frame it is closest to
(mean absolute difference), which survives re-encoding and also works on old code's output.
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np


def decode_all(path: Path) -> tuple[list[float], list[np.ndarray]]:
    """(pts in seconds, BGR picture) of every decodable frame, read one by one to the end."""
    cap = cv2.VideoCapture(str(path), cv2.CAP_FFMPEG)
    pts: list[float] = []
    pixels: list[np.ndarray] = []
    while True:
        ok, bgr = cap.read()
        if not ok:
            break
        pts.append(cap.get(cv2.CAP_PROP_POS_MSEC) / 1000.0)
        pixels.append(bgr)
    cap.release()
    return pts, pixels


def which_frame(jpeg: bytes, pixels: list[np.ndarray]) -> int:
    """Index of the decoded frame ``jpeg`` shows (resized to the JPEG's size before comparing)."""
    img = cv2.imdecode(np.frombuffer(jpeg, np.uint8), cv2.IMREAD_COLOR).astype(np.int16)
    h, w = img.shape[:2]
    errors = [np.abs(cv2.resize(p, (w, h), interpolation=cv2.INTER_AREA).astype(np.int16) - img).mean()
              for p in pixels]
    return int(np.argmin(errors))
