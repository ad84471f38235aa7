"""Video normalization: the causal 1 FPS frames of a file, on its real timeline.

The timeline itself (what decodes, when, and whether the file is what its name says) is probed
by :mod:`core.media.probe`; browser-playable review copies are made by :mod:`core.media.browser`.

One sampler (:func:`causal_frames`): every consumer of 1 FPS frames — StreamVibe's stream, the
ProReady-QA evidence check, the ChangeIt / VSOD video reader, the Gemini reviewer — gets the frame
*on screen* at each second (never a later one: a frame from the future would let a stream or an
evidence window see what has not happened yet), shrunk by one rule (:func:`resize_max_side`)
and encoded by one rule (:func:`encode_jpeg`). Callers differ only in the cap on the longest
side and, for StreamVibe, the configured JPEG quality.

Determinism (design.md §Conventions): frames are encoded with OpenCV's bundled libjpeg-turbo at
fixed parameters, so the same file gives the same bytes on every worker running the pinned wheel.
"""

from __future__ import annotations

import math
import os
import tempfile
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass

# libav's console messages: see core.media.probe (set before OpenCV loads, whichever module is first)
os.environ.setdefault("OPENCV_FFMPEG_LOGLEVEL", "8")

import cv2  # noqa: E402
import numpy as np

from core.errors import BadInput
from core.media.probe import VideoInfo, grabbed_frames, open_video, timeline_duration

_EPS = 1e-6  # seconds; decoder timestamps are msec floats (1.0000000001 s is 1 s)
JPEG_QUALITY = 90  # the JPEG rule's default quality (configs/streamvibe.yaml frames.jpeg_quality)
# the longest side of the 1 FPS frames the benchmarks' models see (configs/streamvibe.yaml
# frames.max_side, configs/proready.yaml frame_max_side); the Gemini reviewer sees the same
STREAM_MAX_SIDE = 448
# how far a sampling rate may exceed the video's own before ``at_most_native`` rejects it: a
# manifest's 30 fps for an NTSC 29.97 fps video asks for no frame the video lacks
FPS_TOLERANCE = 0.01
OPENCV_VERSION = cv2.__version__  # the build that decodes and encodes every frame

__all__ = [
    "FPS_TOLERANCE",
    "JPEG_QUALITY",
    "OPENCV_VERSION",
    "STREAM_MAX_SIDE",
    "CausalFrames",
    "TimedFrame",
    "causal_frames",
    "causal_frames_bytes",
    "encode_jpeg",
    "resize_max_side",
]


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

        cap = open_video(path, src)
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
            for i, pts in grabbed_frames(cap, native):
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
            duration_s=timeline_duration(held[1], n, native, gaps), width=width, height=height,
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
    cap = open_video(path, src)
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
