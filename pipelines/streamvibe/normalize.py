"""Normalize a task video: real decodable duration and the causal 1 FPS stream (StreamVibe §3.3).

"The validated annotations are aligned to 1 FPS streams" and "at time t, the record exposes only
frames and user turns available by t" (App. B.2). Two consequences:

* the timeline is the *decoded* one (:func:`pipelines.media.video.sample_frames`): a header can
  lie — Debian opencv-doc's ``tree.avi`` claims 444 frames and 68 decode, spread over 29.6 s — so
  windows are checked against ``duration_s`` from decoding, never from the header;
* the frame for second k is the one on screen at k (policy ``at_or_before``), so a stream never
  shows a frame presented after its decision time (the causal invariant the quality suite checks).

Undecodable, empty or missing files raise :class:`BadInput` (the pairs of that video are
rejected with the reason). Frames are resized to ``max_side`` and JPEG-encoded with fixed
parameters, so the same file gives the same bytes on every worker (design.md §Conventions).
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass

import cv2

from core.blobs import BlobRef
from core.errors import BadInput
from core.files import sha256_hex
from pipelines.media.video import sample_frames


@dataclass(frozen=True)
class VideoFailure:
    """Why a video could not be normalized. A plain record, not the exception: Beam pickles
    elements between stages, and exceptions with custom constructors do not round-trip."""

    source_file: str
    field: str
    reason: str

    @classmethod
    def of(cls, err: BadInput) -> VideoFailure:
        return cls(err.source_file, err.field, err.reason)

    def to_bad_input(self) -> BadInput:
        return BadInput(self.source_file, self.field, self.reason)


@dataclass(frozen=True)
class NormalizedVideo:
    """A decoded task video: real timeline facts plus its 1 FPS frames (t, pts, JPEG bytes)."""

    source_file: str
    sha256: str
    fps: float
    header_frames: int
    decodable_frames: int
    duration_s: float
    width: int
    height: int
    frame_times: tuple[float, ...]
    frame_pts: tuple[float, ...]
    frames: tuple[bytes | BlobRef, ...]  # JPEG bytes; references once in the build's blob store

    @property
    def note(self) -> str:
        if self.header_frames > self.decodable_frames:
            return f"header says {self.header_frames} frames, only {self.decodable_frames} decode"
        return ""


def _resize(bgr, max_side: int):
    h, w = bgr.shape[:2]
    scale = max_side / max(h, w)
    if max_side <= 0 or scale >= 1:
        return bgr
    return cv2.resize(bgr, (max(1, round(w * scale)), max(1, round(h * scale))),
                      interpolation=cv2.INTER_AREA)


def normalize_video(data: bytes, source_file: str, *, max_side: int = 448,
                    jpeg_quality: int = 90) -> NormalizedVideo:
    """Decode ``data`` (the file's bytes) and build its causal 1 FPS stream."""
    if not data:
        raise BadInput(source_file, "video", "empty file (0 bytes); decodes 0 frames")
    suffix = os.path.splitext(source_file)[1] or ".bin"
    with tempfile.NamedTemporaryFile(suffix=suffix) as tmp:
        tmp.write(data)
        tmp.flush()
        try:
            picked, info = sample_frames(tmp.name, rate=1.0, policy="at_or_before",
                                         source_file=source_file)
        except BadInput as err:
            raise BadInput(source_file, "video", err.reason) from err
    if info.duration_s <= 0 or not picked:
        raise BadInput(source_file, "video", "decodes to an empty timeline (duration 0 s)")
    cache: dict[int, bytes] = {}
    frames, times, pts_list = [], [], []
    for t, index, pts, bgr in picked:
        if index not in cache:
            ok, buf = cv2.imencode(".jpg", _resize(bgr, max_side),
                                   [cv2.IMWRITE_JPEG_QUALITY, jpeg_quality, cv2.IMWRITE_JPEG_OPTIMIZE, 0])
            if not ok:
                raise BadInput(source_file, f"frame[{index}]", "cannot encode frame as JPEG")
            cache[index] = buf.tobytes()
        frames.append(cache[index])
        times.append(round(t, 3))
        # true pts; only the t=0 frame may lie after t (no earlier frame exists), see quality.py
        pts_list.append(round(pts, 3))
    return NormalizedVideo(
        source_file=source_file, sha256=sha256_hex(data), fps=info.fps,
        header_frames=info.header_frames, decodable_frames=info.decodable_frames,
        duration_s=round(info.duration_s, 3), width=info.width, height=info.height,
        frame_times=tuple(times), frame_pts=tuple(pts_list), frames=tuple(frames),
    )
