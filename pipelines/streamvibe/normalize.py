"""Normalize a task video: real decodable duration and the causal 1 FPS stream (StreamVibe §3.3).

"The validated annotations are aligned to 1 FPS streams" and "at time t, the record exposes only
frames and user turns available by t" (App. B.2). Two consequences:

* the timeline is the *decoded* one (:func:`core.media.video.causal_frames`): a header can
  lie — Debian opencv-doc's ``tree.avi`` claims 444 frames and 68 decode, spread over 29.6 s — so
  windows are checked against ``duration_s`` from decoding, never from the header;
* the frame for second k is the one on screen at k (the project's one causal sampler), so a
  stream never shows a frame presented after its decision time (the causal invariant the
  quality suite checks).

Undecodable, empty, missing or truncated files (the decoded timeline ends well before the
header's promise: :func:`core.media.probe.reject_truncated`) raise :class:`BadInput` (the pairs of
that video are rejected with the reason). Frames go through the sampler's one resize rule (longest side
capped at ``max_side``) and one JPEG rule, so the same file gives the same bytes on every worker
(design.md §Conventions) and the same frames the ProReady-QA evidence check and the Gemini
reviewer see.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from typing import Any

from core.blobs import BlobRef
from core.errors import BadInput
from core.files import sha256_hex
from core.media import probe, video
from core.media.probe import reject_truncated
from core.media.video import JPEG_QUALITY, OPENCV_VERSION, STREAM_MAX_SIDE, causal_frames_bytes
from pipelines.common.decoded_frames import code_fingerprint, settings_key


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

    def timeline(self) -> dict[str, Any]:
        """What decoding taught about the video besides its frames and where it was listed, as
        JSON values (kept for the release: :mod:`pipelines.common.decoded_frames`)."""
        return {name: list(v) if isinstance(v := getattr(self, name), tuple) else v
                for name in _TIMELINE_TYPES}

    @classmethod
    def from_timeline(cls, timeline: dict[str, Any], source_file: str,
                      frames: tuple[bytes | BlobRef, ...]) -> NormalizedVideo:
        """The video :meth:`timeline` described, listed as ``source_file``, with ``frames``.
        ValueError names what does not fit: a field missing or extra, a value of another type,
        a number that is not finite, a frame time for each frame."""
        if set(timeline) != set(_TIMELINE_TYPES):
            raise ValueError(f"a timeline has the fields {sorted(timeline)}")
        for name, kind in _TIMELINE_TYPES.items():
            value = timeline[name]
            items = value if isinstance(value, list) else [value]
            if isinstance(value, list) != (kind is list) or not all(_is(x, kind) for x in items):
                raise ValueError(f"timeline field {name} is {value!r:.60}")
        if not len(timeline["frame_times"]) == len(timeline["frame_pts"]) == len(frames):
            raise ValueError(f"{len(frames)} frames, {len(timeline['frame_times'])} frame times")
        return cls(source_file=source_file, frames=frames, **{
            k: tuple(v) if isinstance(v, list) else v for k, v in timeline.items()})

    @property
    def note(self) -> str:
        if self.header_frames > self.decodable_frames:
            return f"header says {self.header_frames} frames, only {self.decodable_frames} decode"
        return ""


# every field but source_file and frames, with its JSON type (list: of finite numbers)
_TIMELINE_TYPES: dict[str, type] = {
    "sha256": str, "fps": float, "header_frames": int, "decodable_frames": int, "duration_s": float,
    "width": int, "height": int, "frame_times": list, "frame_pts": list}


def _is(x: Any, kind: type) -> bool:
    if kind is str:
        return isinstance(x, str)
    if isinstance(x, bool) or not isinstance(x, int | float):
        return False
    return isinstance(x, int) if kind is int else math.isfinite(x)


def decoder_key(max_side: int, jpeg_quality: int) -> str:
    """The name of everything that shapes a normalized video's frames: the sampler's settings,
    the OpenCV build that decodes and encodes, and this module's and the sampler's source."""
    return settings_key({"max_side": max_side, "jpeg_quality": jpeg_quality, "opencv": OPENCV_VERSION,
                         "code": code_fingerprint([video, probe, sys.modules[__name__]])})


def normalize_video(data: bytes, source_file: str, *, max_side: int = STREAM_MAX_SIDE,
                    jpeg_quality: int = JPEG_QUALITY) -> NormalizedVideo:
    """Decode ``data`` (the file's bytes) and build its causal 1 FPS stream."""
    sampled = causal_frames_bytes(data, source_file, field="video", max_side=max_side,
                                  jpeg_quality=jpeg_quality)
    info = sampled.info
    reject_truncated(info, source_file, "video")  # a cut file's stream would end too early
    return NormalizedVideo(
        source_file=source_file, sha256=sha256_hex(data), fps=info.fps,
        header_frames=info.header_frames, decodable_frames=info.decodable_frames,
        duration_s=round(info.duration_s, 3), width=info.width, height=info.height,
        frame_times=tuple(round(f.t, 3) for f in sampled.frames),
        # true pts, <= t: only a t before the first frame (in practice t = 0, decoders start at
        # 0 s) shows a later one, as none earlier exists; quality.py checks exactly that
        frame_pts=tuple(round(f.pts, 3) for f in sampled.frames),
        frames=tuple(f.image for f in sampled.frames),
    )
