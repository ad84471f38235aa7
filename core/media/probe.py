"""Video probing: a file's real timeline and content, against what its header and name claim.

The 1 FPS sampler built on it is :mod:`core.media.video`; browser-playable review copies are
made by :mod:`core.media.browser`.

Why this module exists
----------------------
StreamVibe serializes every sample as a causal 1 FPS stream (StreamVibe §3.3: "validated annotations
are aligned to 1 FPS streams"; App. B.2: "at time t, the record exposes only frames … available
by t"), ChangeIt episodes are frames sampled at 1 FPS (ProactiveBench App. 0.A.6) and ProReady-QA
evidence windows are in seconds of the video (StreamReady §4.2–4.3; videos are sampled at 1 FPS,
App. D). All of them need the *real* timeline of a file, and real files lie:

* Debian ``opencv-doc``'s ``tree.avi`` says 444 frames at 15 fps in its header. Only 68 frames
  decode, but they are **not** the first 4.5 s: the AVI holds empty "repeat previous frame" chunks,
  so the 68 frames carry timestamps spread over the whole 29.6 s (0.0, 0.733, 1.133, …, 29.533).
  Counting decoded frames and dividing by the fps gives 4.5 s — wrong by a factor of 6.5.
* A file cut in half keeps its header (795 frames) and decodes only part of it.

So we never trust ``CAP_PROP_FRAME_COUNT``: we decode to the end, take each frame's presentation
time from the decoder (``CAP_PROP_POS_MSEC``) and define the duration as *last decoded timestamp +
one nominal frame period* (what ``ffprobe`` reports as the stream duration for all three registry
videos). A file from which no frame decodes is :class:`~core.errors.BadInput`; a file
that decodes only part of what its header promises is *not* an error by itself — the shortfall is
reported in :class:`VideoInfo` so a pipeline can decide. The readers' rule
(:func:`reject_truncated`): a video whose decoded timeline ends more than
:data:`TRUNCATION_TOLERANCE_S` before the duration its header promises (header frames / fps) is
*truncated* and rejected; one whose timeline is complete but holds fewer frames than the header
counts (``tree.avi``: held frames) is kept, and the shortfall is recorded as a note.

Content against name (design.md §Conventions "Bad input", as images do): a file whose magic
bytes are another container than its extension names — AVI bytes saved as ``.mp4`` — is
BadInput (:func:`check_container`); FFmpeg would decode it, and the release would name the file
for what it is not. A video whose frame size exceeds the image pixel limit
(:data:`core.media.images.MAX_PIXELS`) is BadInput before a frame is decoded.
"""

from __future__ import annotations

import logging
import math
import os
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

# libav (inside OpenCV) prints its decoder complaints ("moov atom not found", "Error at MB")
# straight to the console; what matters of them reaches the user as a rejection or a note
# naming the file (decodable frames vs header), so only fatal libav messages are printed.
os.environ.setdefault("OPENCV_FFMPEG_LOGLEVEL", "8")

import cv2  # noqa: E402
import numpy as np

from core.errors import BadInput
from core.media.images import check_pixels

log = logging.getLogger(__name__)
# how much shorter than its header's promise (header frames / fps) a decoded timeline may be
# before the file counts as truncated: container durations are estimates, a second is not.
TRUNCATION_TOLERANCE_S = 1.0

# container -> the extensions that name it; what the magic bytes say is :func:`sniff_container`
CONTAINERS = {"AVI": (".avi",), "MP4/QuickTime": (".mp4", ".m4v", ".mov"),
              "Matroska/WebM": (".mkv", ".webm")}
_EXTENSION_CONTAINER = {ext: name for name, exts in CONTAINERS.items() for ext in exts}
# the box types an ISO base media file (MP4, QuickTime) starts with: ``ftyp`` in every file
# written since 2001, the others in older QuickTime files
_ISO_BMFF_FIRST_BOXES = {b"ftyp", b"moov", b"mdat", b"free", b"skip", b"wide", b"pnot"}

__all__ = [
    "CONTAINERS",
    "TRUNCATION_TOLERANCE_S",
    "VideoInfo",
    "check_container",
    "grabbed_frames",
    "open_video",
    "probe_video",
    "reject_truncated",
    "sniff_container",
    "timeline_duration",
]


@dataclass(frozen=True)
class VideoInfo:
    """What a video really contains, next to what its header claims.

    ``header_frames`` is ``CAP_PROP_FRAME_COUNT`` (may lie); ``decodable_frames`` is the number of
    frames the decoder actually produced; ``duration_s`` is the real timeline length (last decoded
    timestamp + one frame period), which for files with held/dropped frames (``tree.avi``) is much
    longer than ``decodable_frames / fps``.
    """

    path: str
    fps: float
    header_frames: int
    decodable_frames: int
    duration_s: float
    width: int
    height: int
    last_frame_s: float = 0.0

    @property
    def header_mismatch(self) -> bool:
        """True when the header promises more frames than decode (truncated or sparse file)."""
        return self.header_frames > self.decodable_frames

    @property
    def note(self) -> str:
        """Human-readable shortfall, for reports/manifests ("" when the header is honest)."""
        if not self.header_mismatch:
            return ""
        return f"header says {self.header_frames} frames, only {self.decodable_frames} decode"

    @property
    def promised_s(self) -> float:
        """The duration the header promises (0 when it gives no frame rate)."""
        return self.header_frames / self.fps if self.fps > 0 else 0.0

    @property
    def truncated(self) -> bool:
        """The decoded timeline ends well before the header's promise: part of the file is gone
        (a cut download), unlike a sparse file whose held frames still fill the timeline."""
        return self.promised_s - self.duration_s > TRUNCATION_TOLERANCE_S


def reject_truncated(info: VideoInfo, source_file: str, field: str) -> None:
    """The readers' rule for a video that decodes less than its header promises: BadInput when
    it is :attr:`VideoInfo.truncated`; otherwise (``info.note``) the caller records the note."""
    if info.truncated:
        raise BadInput(source_file, field,
                       f"truncated: the header promises {info.header_frames} frames "
                       f"({info.promised_s:.1f} s), only {info.decodable_frames} decode "
                       f"({info.duration_s:.1f} s)")


_STDERR_SWAP = threading.Lock()  # file descriptor 2 is the process's: one swap at a time


@contextmanager
def _stderr_to_log() -> Iterator[None]:
    """Send what native code writes to stderr (file descriptor 2) to the log for a moment. One
    thread at a time: two interleaved swaps would leave fd 2 pointing at a deleted temp file
    (threads open videos at once: review copies, the release gate)."""
    with _STDERR_SWAP:
        yield from _swapped_stderr()


def _swapped_stderr() -> Iterator[None]:
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            sink.seek(0)
            text = sink.read().decode("utf-8", "replace").strip()
            if text:
                log.debug("decoder: %s", text)


def sniff_container(head: bytes) -> str | None:
    """The container a file's first 12 bytes name (a key of :data:`CONTAINERS`), ``None`` for
    any other (MPEG-TS, FLV, noise: the decoder then decides)."""
    if head[:4] == b"RIFF" and head[8:12] == b"AVI ":
        return "AVI"
    if head[4:8] in _ISO_BMFF_FIRST_BOXES:
        return "MP4/QuickTime"
    if head[:4] == b"\x1a\x45\xdf\xa3":  # EBML
        return "Matroska/WebM"
    return None


def check_container(head: bytes, source_file: str, field: str) -> None:
    """BadInput when ``head`` (a file's first bytes) starts another container than
    ``source_file``'s extension names; an unknown extension or container is not judged."""
    ext = os.path.splitext(source_file)[1]
    named = _EXTENSION_CONTAINER.get(ext.lower())
    found = sniff_container(head)
    if named and found and found != named:
        raise BadInput(source_file, field, f"the content is {found}, but the extension {ext} "
                                           f"names {named}")


def open_video(path: str | os.PathLike[str], source_file: str) -> cv2.VideoCapture:
    p = Path(path)
    if not p.is_file():
        raise BadInput(source_file, "path", "video file not found")
    if p.stat().st_size == 0:
        raise BadInput(source_file, "frames", "empty file (0 bytes); decodes 0 frames")
    with p.open("rb") as fh:
        check_container(fh.read(12), source_file, "frames")
    # FFmpeg only (OpenCV's fallback AVI parser adds nothing a reader can use), and what OpenCV
    # prints while failing to open a corrupt file goes to the log: the rejection says it better.
    with _stderr_to_log():
        cap = cv2.VideoCapture(str(p), cv2.CAP_FFMPEG)
    if not cap.isOpened():
        cap.release()
        raise BadInput(
            source_file, "frames", "cannot open video (unknown/corrupt container); decodes 0 frames"
        )
    try:
        check_pixels(int(cap.get(cv2.CAP_PROP_FRAME_WIDTH) or 0),
                     int(cap.get(cv2.CAP_PROP_FRAME_HEIGHT) or 0), source_file, "frames")
    except BadInput:
        cap.release()
        raise
    return cap


def grabbed_frames(cap: cv2.VideoCapture, fps: float) -> Iterator[tuple[int, float]]:
    """Grab every decodable frame; yield (index, pts seconds) with a strictly increasing pts.

    The decoder's ``POS_MSEC`` is the real presentation time (it skips held frames in AVI). If a
    backend reports a non-increasing time we fall back to previous + one nominal period, so the
    timeline stays monotonic and the sampler stays well defined.
    """
    period = 1.0 / fps if fps > 0 else 0.0
    prev = -math.inf
    i = 0
    while cap.grab():
        pts = float(cap.get(cv2.CAP_PROP_POS_MSEC)) / 1000.0
        if not math.isfinite(pts) or pts <= prev:
            pts = prev + period if prev > -math.inf else 0.0
            if pts <= prev:  # no usable fps either
                pts = prev + 1e-3
        prev = pts
        yield i, pts
        i += 1


def timeline_duration(last_pts: float, n: int, fps: float, gaps: list[float]) -> float:
    if fps > 0:
        return last_pts + 1.0 / fps
    if n >= 2:
        return last_pts + float(np.median(gaps))
    return 0.0


def probe_video(path: str | os.PathLike[str], *, source_file: str | None = None) -> VideoInfo:
    """Decode ``path`` to the end and report header vs. reality.

    Raises :class:`BadInput` (field ``path`` or ``frames``) when the file is missing, empty,
    not a video, or decodes 0 frames. A header/decode mismatch alone is *not* an error.
    """
    src = source_file if source_file is not None else str(path)
    cap = open_video(path, src)
    try:
        fps = float(cap.get(cv2.CAP_PROP_FPS) or 0.0)
        header = int(round(cap.get(cv2.CAP_PROP_FRAME_COUNT) or 0))
        n = 0
        last = 0.0
        gaps: list[float] = []
        for i, pts in grabbed_frames(cap, fps):
            if i:
                gaps.append(pts - last)
            last = pts
            n += 1
        width = int(cap.get(cv2.CAP_PROP_FRAME_WIDTH) or 0)
        height = int(cap.get(cv2.CAP_PROP_FRAME_HEIGHT) or 0)
    finally:
        cap.release()
    if n == 0:
        why = f"decodes 0 frames (header says {header})" if header > 0 else "decodes 0 frames"
        raise BadInput(src, "frames", why)
    return VideoInfo(
        path=str(path),
        fps=fps,
        header_frames=max(header, 0),
        decodable_frames=n,
        duration_s=timeline_duration(last, n, fps, gaps),
        width=width,
        height=height,
        last_frame_s=last,
    )
