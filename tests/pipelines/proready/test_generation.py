"""ProReady-QA per-video frames (``pipelines/proready/generation.py`` ``video_frames``).

The frame-wise evidence check asks the VLM about the frame of each second; StreamReady §4.3
defines t_s as when sufficient evidence *first appears*, so the frame for second t must be the
one on screen at t. The old sampler took the first frame at or after t: on tree.avi's sparse
timeline a frame from up to 0.4 s later, which moved t_s one second early when the evidence
appears between two seconds. Frames are identified by their pixels (tests/support/frames.py),
so the two tests of that bug run (and fail) on the old sampler too.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import cv2
import numpy as np
import pytest

from clients import Outcome
from pipelines.proready.generation import (
    FrameVerdict,
    GenerationConfig,
    load_prompts,
    video_frames,
    vlm_windows,
)
from pipelines.proready.models import model_settings
from pipelines.proready.sources import VideoSource
from tests.support.frames import decode_all, which_frame

# tree.avi: the frame on screen at each whole second (tests/core/media/test_video.py, by hand)
TREE_ON_SCREEN = (0, 1, 3, 6, 8, 11, 14, 15, 18, 20, 23, 25, 28, 30, 32, 34, 36, 39, 41, 43,
                  45, 47, 50, 52, 54, 56, 59, 61, 63, 65)
HAND = 53  # the first decoded frame of tree.avi with the hand in front of the tree (23.133 s)


def source(path: Path) -> VideoSource:
    return VideoSource(path.stem, f"video/{path.name}", str(path),
                       hashlib.sha256(path.read_bytes()).hexdigest(), 0.0, 0.0, "test", "manifest.yaml",
                       {}, (), (), ())


@pytest.fixture(scope="module")
def tree(media: Path) -> tuple[Path, list[float], list[np.ndarray]]:
    pts, pixels = decode_all(media / "tree.avi")
    return media / "tree.avi", pts, pixels


def test_evidence_frames_never_come_from_after_t(tree) -> None:
    path, pts, pixels = tree
    frames = video_frames(source(path), 448)
    assert sorted(frames) == list(range(30))
    shown = [which_frame(frames[t], pixels) for t in range(30)]
    assert shown == list(TREE_ON_SCREEN)  # 1 s -> frame 1 (0.733 s), not frame 2 (1.133 s)
    assert all(pts[i] <= t for t, i in zip(range(30), shown, strict=True))


def test_evidence_start_is_not_pulled_early(tree) -> None:
    """A VLM that sees the hand from frame 53 (23.133 s) on: the evidence first appears on screen
    at 24 s (at 23 s the screen still shows frame 52, 22.667 s), so t_s = 24 — not 23."""
    path, pts, pixels = tree

    class HandSpotter:  # the vlm: judges only what the frame shows
        name = "hand-spotter"

        def ask_many(self, requests):
            seen = [which_frame(r.images[0], pixels) >= HAND for r in requests]
            return [Outcome("answered", parsed=FrameVerdict(answer_inferable=s, cue_visible=s))
                    for s in seen]

    models = model_settings({"vlm": {"backend": "openai", "model": "m"}}, "test", Path.cwd())
    cfg = GenerationConfig(evidence="vlm_framewise", models=models,
                           prompts=load_prompts(), pad_s=2.0, dwell_frames=2)
    turn = {"task_type": "crr", "question": "What will cover the tree?", "answer": "a hand",
            "ask_time_s": 18.0, "coarse_start_s": 22.0, "coarse_end_s": 27.0}
    frames = video_frames(source(path), cfg.frame_max_side)
    refined, evidence = vlm_windows(source(path), "tree.crr-0", [turn], frames, cfg, HandSpotter())
    assert evidence["turns[0]"]["times"] == list(range(20, 30))  # 22 - 2 s pad .. 27 + 2 s pad
    assert evidence["turns[0]"]["answer_inferable"] == [t >= 24 for t in range(20, 30)]
    assert (refined[0]["t_s"], refined[0]["t_e"]) == (24.0, 29.0)


def test_video_frames_use_the_one_resize_rule(media: Path) -> None:
    from core.media.video import causal_frames

    frames = video_frames(source(media / "bikes.mp4"), 448)
    ref = causal_frames(media / "bikes.mp4", max_side=448)
    assert [frames[t] for t in range(10)] == [f.image for f in ref.frames]
    img = cv2.imdecode(np.frombuffer(frames[3], np.uint8), cv2.IMREAD_COLOR)
    assert img.shape == (190, 448, 3)  # 640x272, longest side capped at 448, aspect kept
