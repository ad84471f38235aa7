"""StreamVibe's causal 1 FPS stream (``pipelines/streamvibe/normalize.py``) is the project's one
sampler with the streams' cap: same frames, same resize, same JPEG bytes as every other caller."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from core.media.video import STREAM_MAX_SIDE, causal_frames
from pipelines.streamvibe.normalize import normalize_video


def test_stream_frames_are_the_samplers_with_the_streams_cap(media: Path) -> None:
    video = normalize_video((media / "vtest.avi").read_bytes(), "videos/vtest.avi")
    ref = causal_frames(media / "vtest.avi", max_side=STREAM_MAX_SIDE)
    assert list(video.frames) == [f.image for f in ref.frames]
    assert video.frame_times == tuple(float(k) for k in range(80))
    assert video.frame_pts == video.frame_times  # 10 fps: a frame exactly on every second
    shapes = {cv2.imdecode(np.frombuffer(f, np.uint8), cv2.IMREAD_COLOR).shape for f in video.frames}
    assert shapes == {(336, 448, 3)}  # 768x576, longest side capped at 448, aspect 4:3 kept
    assert (video.width, video.height, video.duration_s) == (768, 576, 79.5)  # the source's facts
