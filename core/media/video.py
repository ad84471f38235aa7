"""Video normalization: probe the real timeline, sample causal 1 FPS frames.

Browser-playable review copies are made by :mod:`core.media.browser`.

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

One sampler (:func:`causal_frames`): every consumer of 1 FPS frames — StreamVibe's stream, the
ProReady-QA evidence check, the ChangeIt / VSOD video reader, the Gemini reviewer — gets the frame
*on screen* at each second (never a later one: a frame from the future would let a stream or an
evidence window see what has not happened yet), shrunk by one rule (:func:`resize_max_side`)
and encoded by one rule (:func:`encode_jpeg`). Callers differ only in the cap on the longest
side and, for StreamVibe, the configured JPEG quality.

Content against name (design.md §Conventions "Bad input", as images do): a file whose magic
bytes are another container than its extension names — AVI bytes saved as ``.mp4`` — is
BadInput (:func:`check_container`); FFmpeg would decode it, and the release would name the file
for what it is not. A video whose frame size exceeds the image pixel limit
(:data:`core.media.images.MAX_PIXELS`) is BadInput before a frame is decoded.

Determinism (design.md §Conventions): frames are encoded with OpenCV's bundled libjpeg-turbo at
fixed parameters, so the same file gives the same bytes on every worker running the pinned wheel.
"""

from __future__ import annotations

import logging
import math
import os
import sys
import tempfile
import threading
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
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
_EPS = 1e-6  # seconds; decoder timestamps are msec floats (1.0000000001 s is 1 s)
JPEG_QUALITY = 90  # the JPEG rule's default quality (configs/streamvibe.yaml frames.jpeg_quality)
# the longest side of the 1 FPS frames the benchmarks' models see (configs/streamvibe.yaml
# frames.max_side, configs/proready.yaml frame_max_side); the Gemini reviewer sees the same
STREAM_MAX_SIDE = 448
# how much shorter than its header's promise (header frames / fps) a decoded timeline may be
# before the file counts as truncated: container durations are estimates, a second is not.
TRUNCATION_TOLERANCE_S = 1.0
# how far a sampling rate may exceed the video's own before ``at_most_native`` rejects it: a
# manifest's 30 fps for an NTSC 29.97 fps video asks for no frame the video lacks
FPS_TOLERANCE = 0.01

# container -> the extensions that name it; what the magic bytes say is :func:`sniff_container`
CONTAINERS = {"AVI": (".avi",), "MP4/QuickTime": (".mp4", ".m4v", ".mov"),
              "Matroska/WebM": (".mkv", ".webm")}
_EXTENSION_CONTAINER = {ext: name for name, exts in CONTAINERS.items() for ext in exts}
# the box types an ISO base media file (MP4, QuickTime) starts with: ``ftyp`` in every file
# written since 2001, the others in older QuickTime files
_ISO_BMFF_FIRST_BOXES = {b"ftyp", b"moov", b"mdat", b"free", b"skip", b"wide", b"pnot"}

__all__ = [
    "CONTAINERS",
    "FPS_TOLERANCE",
    "JPEG_QUALITY",
    "STREAM_MAX_SIDE",
    "TRUNCATION_TOLERANCE_S",
    "CausalFrames",
    "TimedFrame",
    "VideoInfo",
    "causal_frames",
    "causal_frames_bytes",
    "check_container",
    "encode_jpeg",
    "probe_video",
    "reject_truncated",
    "resize_max_side",
    "sniff_container",
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


@dataclass(frozen=True)
class TimedFrame:
    """One sampled frame: ``t`` is the sampling time (k seconds at 1 FPS), ``pts`` the decoded
    frame's own presentation time (≤ t, except before the first frame), ``index`` its position
    among *decodable* frames (0-based), and ``image`` its JPEG bytes (resized and encoded by the
    module's one rule)."""

    t: float
    index: int
    pts: float
    image: bytes


@dataclass(frozen=True)
class CausalFrames:
    """What :func:`causal_frames` returns: the frames, one per sampling time in order, and what
    decoding the whole file taught about it (real duration, header shortfall) — one pass gives
    both, so callers that need the timeline do not decode twice."""

    frames: tuple[TimedFrame, ...]
    info: VideoInfo


# --------------------------------------------------------------------------------------------
# decoding


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


def _open(path: str | os.PathLike[str], source_file: str) -> cv2.VideoCapture:
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


def _iter_grabbed(cap: cv2.VideoCapture, fps: float) -> Iterator[tuple[int, float]]:
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


def _duration(last_pts: float, n: int, fps: float, gaps: list[float]) -> float:
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
    cap = _open(path, src)
    try:
        fps = float(cap.get(cv2.CAP_PROP_FPS) or 0.0)
        header = int(round(cap.get(cv2.CAP_PROP_FRAME_COUNT) or 0))
        n = 0
        last = 0.0
        gaps: list[float] = []
        for i, pts in _iter_grabbed(cap, fps):
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
        duration_s=_duration(last, n, fps, gaps),
        width=width,
        height=height,
        last_frame_s=last,
    )


# --------------------------------------------------------------------------------------------
# sampling: the one causal 1 FPS rule, the one resize rule, the one JPEG rule


def resize_max_side(bgr: np.ndarray, max_side: int | None) -> np.ndarray:
    """The one resize rule for video frames: the longest side capped at ``max_side``.

    Aspect ratio kept (each side scaled by ``max_side / longest`` and rounded, at least 1 px),
    never enlarged, ``None`` = keep the decoded size. Interpolation ``cv2.INTER_AREA`` (pixel-area
    averaging): OpenCV's recommended filter for shrinking, it does not alias the fine texture
    (leaves, text) that bilinear sampling of every n-th pixel would turn into moiré.
    """
    if max_side is None:
        return bgr
    if max_side <= 0:
        raise ValueError(f"max_side must be a positive number of pixels or None, got {max_side}")
    h, w = bgr.shape[:2]
    if max(h, w) <= max_side:
        return bgr
    scale = max_side / max(h, w)
    size = (max(1, round(w * scale)), max(1, round(h * scale)))
    return cv2.resize(bgr, size, interpolation=cv2.INTER_AREA)


def encode_jpeg(bgr: np.ndarray, quality: int = JPEG_QUALITY, *, source_file: str = "",
                index: int = -1) -> bytes:
    """The one JPEG rule for video frames: OpenCV's bundled libjpeg-turbo, baseline, 4:2:0,
    no optimisation pass, fixed ``quality`` — so the same pixels give the same bytes on every
    worker running the pinned wheel (design.md §Conventions, determinism)."""
    ok, buf = cv2.imencode(".jpg", bgr, [cv2.IMWRITE_JPEG_QUALITY, quality, cv2.IMWRITE_JPEG_OPTIMIZE, 0])
    if not ok:
        raise BadInput(source_file, f"frame[{index}]", "cannot encode frame as JPEG")
    return buf.tobytes()


def causal_frames(
    path: str | os.PathLike[str],
    *,
    fps: float = 1.0,
    max_side: int | None = None,
    jpeg_quality: int = JPEG_QUALITY,
    source_file: str | None = None,
    at_most_native: bool = False,
) -> CausalFrames:
    """The frame on screen at each t = k / ``fps`` (k = 0, 1, 2, …) while t < duration, as JPEG.

    ``at_most_native``: an ``fps`` above the video's own nominal rate (by more than
    :data:`FPS_TOLERANCE`) is BadInput, field ``fps``, before anything is decoded — it asks for
    frames the video does not have, and each would repeat (1000 fps of a 25 fps clip: 40 copies
    of every frame). A video whose header gives no rate is not judged.

    The rule (StreamVibe App. B.2 "at time t, the record exposes only frames … available by t";
    StreamReady §4.3: t_s is when evidence first appears): for each t, the *last decoded frame
    whose presentation time is ≤ t*. Seconds before the first frame (a stream whose first pts is
    > 0) show the first frame — the only exception, and only when no earlier frame exists. The
    timeline is the decoded one (module doc): ``tree.avi`` gives 30 frames over its 29.6 s.
    Each chosen frame goes through :func:`resize_max_side` and :func:`encode_jpeg` once, even
    when it stands for several seconds (a held frame), so repeated seconds share their bytes.

    Speed (benchmarks/frames_1fps.py, target: at most the time of ffmpeg ``-vf fps=1``): every frame
    is decoded (``grab``), but only frames that can be the one on screen at the next t are
    colour-converted (``retrieve``). A frame at pts p can only be the one at t if its successor
    comes after t; the successor is not known yet, so a frame is retrieved when p + ``margin``
    > t, where ``margin`` is the largest gap between frames seen so far (at least one nominal
    frame period). On a constant-rate video that is one or two frames per second. Only a gap
    larger than every gap before it (sparse AVIs, variable-rate phone videos) can make a skipped
    frame the one on screen after all: the pick is still right (it is decided from timestamps
    alone), and the pixels of such frames are fetched in one second pass that decodes up to the
    last of them. Correctness is tested against decoding and converting every frame.
    """
    if fps <= 0 or not math.isfinite(fps):
        raise ValueError(f"fps must be a positive number, got {fps}")
    src = source_file if source_file is not None else str(path)
    picks: list[tuple[float, int, float]] = []  # (t, decoded index, pts)
    missing: set[int] = set()  # picked frames that were not retrieved in the first pass
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="jpeg") as pool:
        # Chosen frames are shrunk and encoded on a second thread while this one decodes (both
        # release the GIL), and as soon as they are chosen: only JPEG bytes are kept, not one
        # decoded picture per second of a one-hour video.
        encoded: dict[int, Future[bytes]] = {}
        pending: deque[Future[bytes]] = deque()

        def keep(index: int, bgr: np.ndarray | None) -> None:
            if index in encoded:
                return
            if bgr is None:
                missing.add(index)
                return
            encoded[index] = job = pool.submit(_shrink_encode, bgr, max_side, jpeg_quality, src, index)
            pending.append(job)
            if len(pending) > 8:  # the encoder fell behind: wait rather than queue pictures
                pending.popleft().result()

        cap = _open(path, src)
        try:
            native = float(cap.get(cv2.CAP_PROP_FPS) or 0.0)
            if at_most_native:
                _check_rate(fps, native, src)
            header = int(round(cap.get(cv2.CAP_PROP_FRAME_COUNT) or 0))
            margin = 1.0 / native if native > 0 else math.inf  # no nominal rate: retrieve every frame
            retrieve = cap.retrieve
            k, t = 0, 0.0  # the next sampling time still without a frame
            held: tuple[int, float, np.ndarray | None] | None = None  # latest frame: index, pts, BGR
            prev_pts = 0.0
            gaps: list[float] = []
            for i, pts in _iter_grabbed(cap, native):
                if i:
                    gap = pts - prev_pts
                    gaps.append(gap)
                    if gap > margin:
                        margin = gap
                prev_pts = pts
                if held is None and t < pts - _EPS:
                    # times before the first frame: nothing earlier exists, the first frame stands in
                    ok, bgr = retrieve()
                    keep(i, bgr if ok else None)
                    while t < pts - _EPS:
                        picks.append((t, i, pts))
                        k += 1
                        t = k / fps
                # every time before this frame shows the held frame
                while held is not None and t < pts - _EPS:
                    keep(held[0], held[2])
                    picks.append((t, held[0], held[1]))
                    k += 1
                    t = k / fps
                # now t >= pts: this frame is on screen at t unless its successor comes by t
                if pts + margin > t + _EPS:
                    ok, bgr = retrieve()
                    held = (i, pts, bgr if ok else None)
                else:
                    held = (i, pts, None)
            width = int(cap.get(cv2.CAP_PROP_FRAME_WIDTH) or 0)
            height = int(cap.get(cv2.CAP_PROP_FRAME_HEIGHT) or 0)
        finally:
            cap.release()
        if held is None:
            why = f"decodes 0 frames (header says {header})" if header > 0 else "decodes 0 frames"
            raise BadInput(src, "frames", why)
        n = held[0] + 1
        info = VideoInfo(
            path=str(path), fps=native, header_frames=max(header, 0), decodable_frames=n,
            duration_s=_duration(held[1], n, native, gaps), width=width, height=height,
            last_frame_s=held[1],
        )
        # the last frame stays on screen until the end of the real timeline
        while t < info.duration_s - 1e-9:
            keep(held[0], held[2])
            picks.append((t, held[0], held[1]))
            k += 1
            t = k / fps
        if not picks:
            raise BadInput(src, "frames", "decodes to an empty timeline (duration 0 s)")
        if missing:
            for index, bgr in _read_frames(path, missing, src).items():
                keep(index, bgr)
        images = {index: job.result() for index, job in encoded.items()}
    return CausalFrames(
        frames=tuple(TimedFrame(t=t, index=i, pts=pts, image=images[i]) for t, i, pts in picks),
        info=info,
    )


def _check_rate(fps: float, native: float, src: str) -> None:
    if math.isfinite(native) and native > 0 and fps > native * (1 + FPS_TOLERANCE):
        raise BadInput(src, "fps", f"sampling at {fps:g} fps asks for more frames than the video "
                                   f"has: its own frame rate is {native:g} fps (each frame would "
                                   f"repeat {fps / native:.3g} times)")


def _shrink_encode(bgr: np.ndarray, max_side: int | None, quality: int, src: str, index: int) -> bytes:
    return encode_jpeg(resize_max_side(bgr, max_side), quality, source_file=src, index=index)


def _read_frames(path: str | os.PathLike[str], indices: set[int], src: str) -> dict[int, np.ndarray]:
    """Decode the frames ``indices`` by grabbing forward from the start (seeking is unreliable on
    sparse AVIs: it lands on key frames, not on the n-th decodable frame)."""
    out: dict[int, np.ndarray] = {}
    last = max(indices)
    cap = _open(path, src)
    try:
        for i in range(last + 1):
            if not cap.grab():
                break
            if i in indices:
                ok, bgr = cap.retrieve()
                if ok:
                    out[i] = bgr
    finally:
        cap.release()
    lost = sorted(indices - out.keys())
    if lost:
        raise BadInput(src, f"frame[{lost[0]}]", "frame decoded in the first pass but not the second")
    return out


@contextmanager
def _temp_video(data: bytes, source_file: str) -> Iterator[str]:
    """Private temp file holding ``data`` (OpenCV decodes only from a path)."""
    suffix = os.path.splitext(source_file)[1] or ".bin"
    with tempfile.NamedTemporaryFile(suffix=suffix) as tmp:
        tmp.write(data)
        tmp.flush()
        yield tmp.name


def causal_frames_bytes(
    data: bytes,
    source_file: str,
    *,
    field: str = "video",
    fps: float = 1.0,
    max_side: int | None = None,
    jpeg_quality: int = JPEG_QUALITY,
    at_most_native: bool = False,
) -> CausalFrames:
    """:func:`causal_frames` for bytes read through Beam's file systems (GCS, S3, local).

    OpenCV decodes only from a path, so the bytes go to a private temp file first. A video that
    cannot be read as a whole is reported as ``BadInput(source_file, field, …)`` — the caller's
    name of the file and of the key that pointed to it, never the temp file's.
    """
    if not data:
        raise BadInput(source_file, field, "empty file (0 bytes); decodes 0 frames")
    with _temp_video(data, source_file) as name:
        try:
            return causal_frames(name, fps=fps, max_side=max_side, jpeg_quality=jpeg_quality,
                                 source_file=source_file, at_most_native=at_most_native)
        except BadInput as err:
            if err.field.startswith("frame[") or err.field == "fps":  # one frame; the rate
                raise
            raise BadInput(source_file, field, err.reason) from err
