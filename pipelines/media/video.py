"""Video normalization: probe the real timeline, sample 1 FPS frames, transcode for browsers.

Why this module exists
----------------------
StreamVibe serializes every sample as a causal 1 FPS stream (StreamVibe §3.3: "validated annotations
are aligned to 1 FPS streams"), ChangeIt episodes are frames sampled at 1 FPS (ProactiveBench App. 0.A.6)
and ProReady-QA evidence windows are in seconds (StreamReady §4). All three need the *real* timeline of
a file, and real files lie:

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
reported in :class:`VideoInfo` so a pipeline can decide (and the manifest can count it).

Determinism (design.md §Conventions): frames are encoded with OpenCV's bundled libjpeg/libpng at
fixed parameters,
so the same file gives the same bytes on every worker running the pinned wheel.
"""

from __future__ import annotations

import logging
import math
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

# libav (inside OpenCV) prints its decoder complaints ("moov atom not found", "Error at MB")
# straight to the console; what matters of them reaches the user as a rejection or a note
# naming the file (decodable frames vs header), so only fatal libav messages are printed.
os.environ.setdefault("OPENCV_FFMPEG_LOGLEVEL", "8")

import cv2  # noqa: E402
import numpy as np

from core.errors import BadInput

log = logging.getLogger(__name__)
_EPS = 1e-6  # seconds; decoder timestamps are msec floats (1.0000000001 s is 1 s)
SamplePolicy = Literal["at_or_after", "at_or_before", "nearest"]
ImageFormat = Literal["jpeg", "png"]

__all__ = [
    "TimedFrame",
    "VideoInfo",
    "frames_1fps",
    "frames_1fps_bytes",
    "probe_video",
    "sample_frames",
    "sample_video_bytes",
    "transcode_for_browser",
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


@dataclass(frozen=True)
class TimedFrame:
    """One sampled frame: ``t`` is the sampling time (k seconds for 1 FPS), ``pts`` the decoded
    frame's own presentation time, ``index`` its position among *decodable* frames (0-based), and
    ``image`` the encoded JPEG/PNG bytes."""

    t: float
    index: int
    image: bytes
    pts: float


# --------------------------------------------------------------------------------------------
# decoding


@contextmanager
def _stderr_to_log() -> Iterator[None]:
    """Send what native code writes to stderr (file descriptor 2) to the log for a moment."""
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


def _open(path: str | os.PathLike[str], source_file: str) -> cv2.VideoCapture:
    p = Path(path)
    if not p.is_file():
        raise BadInput(source_file, "path", f"video file not found: {p}")
    if p.stat().st_size == 0:
        raise BadInput(source_file, "frames", "empty file (0 bytes); decodes 0 frames")
    # FFmpeg only (OpenCV's fallback AVI parser adds nothing a reader can use), and what OpenCV
    # prints while failing to open a corrupt file goes to the log: the rejection says it better.
    with _stderr_to_log():
        cap = cv2.VideoCapture(str(p), cv2.CAP_FFMPEG)
    if not cap.isOpened():
        cap.release()
        raise BadInput(
            source_file, "frames", "cannot open video (unknown/corrupt container); decodes 0 frames"
        )
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
# sampling


def _encode(bgr: np.ndarray, fmt: ImageFormat, quality: int, src: str, index: int) -> bytes:
    if fmt == "jpeg":
        ok, buf = cv2.imencode(".jpg", bgr, [cv2.IMWRITE_JPEG_QUALITY, quality, cv2.IMWRITE_JPEG_OPTIMIZE, 0])
    elif fmt == "png":
        ok, buf = cv2.imencode(".png", bgr, [cv2.IMWRITE_PNG_COMPRESSION, 6])
    else:
        raise ValueError(f"fmt must be 'jpeg' or 'png', got {fmt!r}")
    if not ok:
        raise BadInput(src, f"frame[{index}]", f"cannot encode frame as {fmt}")
    return buf.tobytes()


def sample_frames(
    path: str | os.PathLike[str],
    *,
    rate: float = 1.0,
    policy: SamplePolicy = "at_or_after",
    source_file: str | None = None,
) -> tuple[list[tuple[float, int, float, np.ndarray]], VideoInfo]:
    """Pick one decoded frame per sampling time t_k = k / rate, for every t_k < duration.

    Returns ``([(t_k, index, pts, bgr), …], info)`` in one decoding pass.

    ``policy`` decides which frame stands for t_k:

    * ``"at_or_after"`` (default, the project's 1 FPS rule): first frame with pts ≥ t_k; past the
      last frame (t_k in the final frame period) the last frame, which is what is on screen.
    * ``"at_or_before"``: the frame on screen at t_k (latest pts ≤ t_k) — strictly causal, never
      shows a frame from after t_k, for streams where even a sub-second leak matters.
    * ``"nearest"``: frame whose pts is closest to t_k (ties → earlier); the legacy ChangeIt rule.

    For a regular video whose frames sit on the integer seconds all three agree. ``at_or_after``
    only retrieves (colour-converts) the chosen frames; the other two must keep each frame as a
    candidate until the next timestamp is known, which costs a retrieve per frame.
    """
    if rate <= 0:
        raise ValueError(f"rate must be > 0, got {rate}")
    src = source_file if source_file is not None else str(path)
    cap = _open(path, src)
    step = 1.0 / rate
    picked: list[tuple[float, int, float, np.ndarray]] = []
    try:
        fps = float(cap.get(cv2.CAP_PROP_FPS) or 0.0)
        header = int(round(cap.get(cv2.CAP_PROP_FRAME_COUNT) or 0))
        k = 0  # next sampling index still to fill
        prev: tuple[int, float, np.ndarray] | None = None  # (index, pts, bgr) for lookbehind
        last: tuple[int, float, np.ndarray | None] = (-1, 0.0, None)
        gaps: list[float] = []
        n = 0
        for i, pts in _iter_grabbed(cap, fps):
            if i:
                gaps.append(pts - last[1])
            n += 1
            if policy == "at_or_after":
                if k * step <= pts + _EPS:
                    ok, bgr = cap.retrieve()
                    if not ok:
                        break
                    while k * step <= pts + _EPS:
                        picked.append((k * step, i, pts, bgr))
                        k += 1
                    last = (i, pts, bgr)
                elif fps > 0 and k * step < pts + 1.0 / fps:
                    # if the stream ended here, this frame would stand for t_k: keep it
                    ok, bgr = cap.retrieve()
                    last = (i, pts, bgr if ok else None)
                else:
                    last = (i, pts, None)
                continue
            ok, bgr = cap.retrieve()
            if not ok:
                break
            while prev is not None and k * step < pts - _EPS:
                t = k * step
                if policy == "nearest" and (pts - t) < (t - prev[1]):
                    picked.append((t, i, pts, bgr))
                else:
                    picked.append((t, prev[0], prev[1], prev[2]))
                k += 1
            # exact hit, or t_k before the very first frame (first pts > 0): this frame
            while k * step <= pts + _EPS:
                picked.append((k * step, i, pts, bgr))
                k += 1
            prev = (i, pts, bgr)
            last = (i, pts, bgr)
        width = int(cap.get(cv2.CAP_PROP_FRAME_WIDTH) or 0)
        height = int(cap.get(cv2.CAP_PROP_FRAME_HEIGHT) or 0)
    finally:
        cap.release()
    if n == 0:
        why = f"decodes 0 frames (header says {header})" if header > 0 else "decodes 0 frames"
        raise BadInput(src, "frames", why)
    info = VideoInfo(
        path=str(path),
        fps=fps,
        header_frames=max(header, 0),
        decodable_frames=n,
        duration_s=_duration(last[1], n, fps, gaps),
        width=width,
        height=height,
        last_frame_s=last[1],
    )
    while k * step < info.duration_s - 1e-9:
        img = last[2]
        if img is None:
            img = _read_frame(path, last[0], src)
            last = (last[0], last[1], img)
        picked.append((k * step, last[0], last[1], img))
        k += 1
    return picked, info


def _read_frame(path: str | os.PathLike[str], index: int, src: str) -> np.ndarray:
    """Decode frame ``index`` by grabbing forward (seeking is unreliable on sparse AVIs)."""
    cap = _open(path, src)
    try:
        for i in range(index + 1):
            if not cap.grab():
                break
            if i == index:
                ok, bgr = cap.retrieve()
                if ok:
                    return bgr
    finally:
        cap.release()
    raise BadInput(src, f"frame[{index}]", "frame decoded in the first pass but not the second")


def frames_1fps(
    path: str | os.PathLike[str],
    *,
    fmt: ImageFormat = "jpeg",
    quality: int = 90,
    policy: SamplePolicy = "at_or_after",
    source_file: str | None = None,
) -> list[TimedFrame]:
    """One encoded frame per second of *real* time: t = 0, 1, 2, … while t < duration.

    The frame for second k is the first decoded frame at or after k s (``policy`` can make it the
    frame on screen at k, see :func:`sample_frames`). ``tree.avi`` therefore gives 30 frames over
    its 29.6 s, not 5. Same file ⇒ same bytes (fixed encoder parameters, no optimisation passes).
    """
    picked, _ = sample_frames(path, rate=1.0, policy=policy, source_file=source_file)
    src = source_file if source_file is not None else str(path)
    cache: dict[int, bytes] = {}
    out: list[TimedFrame] = []
    for t, index, pts, bgr in picked:
        if index not in cache:
            cache[index] = _encode(bgr, fmt, quality, src, index)
        out.append(TimedFrame(t=t, index=index, image=cache[index], pts=pts))
    return out


@contextmanager
def _temp_video(data: bytes, source_file: str) -> Iterator[str]:
    """Private temp file holding ``data`` (OpenCV decodes only from a path)."""
    suffix = os.path.splitext(source_file)[1] or ".bin"
    with tempfile.NamedTemporaryFile(suffix=suffix) as tmp:
        tmp.write(data)
        tmp.flush()
        yield tmp.name


def frames_1fps_bytes(data: bytes, source_file: str, **kwargs: object) -> list[TimedFrame]:
    """:func:`frames_1fps` for bytes read through Beam's file systems (GCS, S3, local).

    OpenCV decodes only from a path, so the bytes go to a private temp file first.
    """
    with _temp_video(data, source_file) as name:
        return frames_1fps(name, source_file=source_file, **kwargs)  # type: ignore[arg-type]


def sample_video_bytes(
    data: bytes, source_file: str, *, fps: float = 1.0, field: str = "video"
) -> tuple[list[np.ndarray], float]:
    """Decode ``data`` and keep one RGB frame per 1/fps seconds (frame nearest to t = k/fps).

    Returns (RGB frames, native fps). Kept for the ChangeIt reader (ProactiveBench App. 0.A.6); it now
    uses the real decoded timeline, so sparse files such as ``tree.avi`` are sampled over their
    full 29.6 s instead of over ``decoded_frames / fps``.
    """
    with _temp_video(data, source_file) as name:
        try:
            picked, info = sample_frames(name, rate=fps, policy="nearest", source_file=source_file)
        except BadInput as err:
            raise BadInput(source_file, field, err.reason) from err
    if info.fps <= 0:
        raise BadInput(source_file, field, "video header has no frame rate")
    return [cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB) for _, _, _, bgr in picked], info.fps


# --------------------------------------------------------------------------------------------
# browser-playable review media (design.md §Environment: browsers do not play mp4v)


def transcode_for_browser(
    src: str | os.PathLike[str],
    dst: str | os.PathLike[str],
    *,
    use_ffmpeg: bool | None = None,
    source_file: str | None = None,
) -> VideoInfo:
    """Write a browser-playable copy of ``src`` for Label Studio review; return its probe.

    ``dst`` ending in ``.mp4`` → H.264 (yuv420p, faststart) via Debian ``ffmpeg`` (required: the
    OpenCV wheel cannot write H.264). ``dst`` ending in ``.webm`` → VP9 via ffmpeg when it is on
    PATH (``use_ffmpeg=None`` means auto), else VP8 via OpenCV (``VP80``: its ``VP90`` encoder is
    ~8x slower, 12 s for tree.avi's 444 frames).

    The OpenCV path writes a constant-rate stream at the header fps and repeats each decoded frame
    until the next one's timestamp, so a sparse file (tree.avi: 68 frames over 29.6 s) keeps its
    real length and the reviewers' timestamps stay those of the source.
    """
    srcs = source_file if source_file is not None else str(src)
    info = probe_video(src, source_file=srcs)
    out = Path(dst)
    out.parent.mkdir(parents=True, exist_ok=True)
    suffix = out.suffix.lower()
    if suffix not in (".mp4", ".webm"):
        raise ValueError(f"dst must end in .mp4 (H.264) or .webm (VP8/VP9), got {out.name}")
    ffmpeg = shutil.which("ffmpeg")
    want_ffmpeg = (ffmpeg is not None) if use_ffmpeg is None else use_ffmpeg
    if suffix == ".mp4" and not want_ffmpeg:
        raise RuntimeError("H.264 output needs ffmpeg (apt-get install ffmpeg); use .webm instead")
    if want_ffmpeg:
        if ffmpeg is None:
            raise RuntimeError("ffmpeg not found on PATH (apt-get install ffmpeg)")
        codec = (
            ["-c:v", "libx264", "-preset", "veryfast", "-crf", "23", "-movflags", "+faststart"]
            if suffix == ".mp4"
            else [
                "-c:v",
                "libvpx-vp9",
                "-deadline",
                "realtime",
                "-cpu-used",
                "8",
                "-b:v",
                "0",
                "-crf",
                "34",
                "-row-mt",
                "1",
            ]
        )
        cmd = [
            ffmpeg,
            "-nostdin",
            "-v",
            "error",
            "-y",
            "-i",
            str(src),
            "-an",
            "-pix_fmt",
            "yuv420p",
            "-vf",
            "pad=ceil(iw/2)*2:ceil(ih/2)*2",
            *codec,
            str(out),
        ]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise BadInput(srcs, "frames", f"ffmpeg transcode failed: {proc.stderr.strip()[-300:]}")
    else:
        _opencv_cfr_webm(src, out, info, srcs)
    return probe_video(out)


def _opencv_cfr_webm(src: str | os.PathLike[str], out: Path, info: VideoInfo, srcs: str) -> None:
    fps = info.fps if info.fps > 0 else 25.0
    writer = cv2.VideoWriter(str(out), cv2.VideoWriter_fourcc(*"VP80"), fps, (info.width, info.height))
    if not writer.isOpened():
        raise RuntimeError("this OpenCV build cannot write VP8 webm")
    cap = _open(src, srcs)
    n_out = max(1, int(round(info.duration_s * fps)))
    written = 0
    held: np.ndarray | None = None
    try:
        for _, pts in _iter_grabbed(cap, info.fps):
            ok, bgr = cap.retrieve()
            if not ok:
                break
            # slot j covers time j/fps; fill the slots before this frame with the held frame
            while held is not None and written < n_out and written / fps < pts - 1e-6:
                writer.write(held)
                written += 1
            held = bgr
        while held is not None and written < n_out:
            writer.write(held)
            written += 1
    finally:
        cap.release()
        writer.release()
