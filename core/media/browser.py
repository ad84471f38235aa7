"""Browser-playable copies of source videos, for review in Label Studio.

Why a module of its own: browsers do not play mp4v or AVI (Label Studio shows "error rendering
your video" or spins forever), so every video a reviewer must watch gets an H.264 (or VP8/VP9)
copy that keeps the source's real timeline, and the reviewers' timestamps stay the source's. The
copies are the largest cost of a video benchmark's pending-review state (docs/scaling.md), so
:func:`browser_copies` makes several at once.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from core.errors import BadInput
from core.media.probe import VideoInfo, grabbed_frames, open_video, probe_video

__all__ = ["BrowserCopy", "browser_copies", "transcode_for_browser"]


@dataclass(frozen=True)
class BrowserCopy:
    """One review copy to make: ``src`` → ``dst`` (its suffix picks the codec); ``source_file``
    names the source in errors."""

    src: str | os.PathLike[str]
    dst: Path
    source_file: str


def browser_copies(copies: Sequence[BrowserCopy], threads: int = 1) -> list[VideoInfo]:
    """Make every copy (:func:`transcode_for_browser`), ``threads`` at a time; the probes in the
    order given. Each H.264 / VP9 copy is an ffmpeg process, so a thread only waits on it: two at
    once use two cores where one ffmpeg encoding a small review video kept about one busy. A
    failure raises the first failing copy's error in the order given, after the others ran."""
    def one(copy: BrowserCopy) -> VideoInfo:
        return transcode_for_browser(copy.src, copy.dst, source_file=copy.source_file)

    if threads <= 1 or len(copies) <= 1:
        return [one(c) for c in copies]
    with ThreadPoolExecutor(min(threads, len(copies))) as pool:
        futures = [pool.submit(one, c) for c in copies]
        wait(futures)  # not pool.map: its iterator cancels the copies not started when one fails
    return [f.result() for f in futures]


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
    cap = open_video(src, srcs)
    n_out = max(1, int(round(info.duration_s * fps)))
    written = 0
    held: np.ndarray | None = None
    try:
        for _, pts in grabbed_frames(cap, info.fps):
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
