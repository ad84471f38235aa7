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

from dataclasses import dataclass

from core.blobs import BlobRef
from core.errors import BadInput
from core.files import sha256_hex
from core.media.probe import reject_truncated
from core.media.video import JPEG_QUALITY, STREAM_MAX_SIDE, causal_frames_bytes


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
