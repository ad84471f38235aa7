"""Benchmark: causal 1 FPS extraction (core.media.video.causal_frames) vs. ``ffmpeg -vf fps=1``.

Why: StreamVibe, ProReady-QA, ChangeIt and the Gemini reviewer all take a video as its 1 FPS
stream, so extraction time is paid once per source video per build. design.md §Conventions asks
for speed as a ratio against a baseline measured in the same run, on the same file, on the same
machine — here the Debian ffmpeg CLI writing JPEGs of the frames to a pipe (both sides decode the
whole file and encode ~1 full-size JPEG per second). The target is a ratio ≤ 1.0 on every demo
video: the build's own sampler should cost no more than the tool a team would otherwise use.
The ratio is for full-size frames (what ffmpeg writes); the line with the streams'
cap (``STREAM_MAX_SIDE``, what StreamVibe and ProReady-QA pay) is for information.

Usage::

    .venv/bin/python benchmarks/frames_1fps.py [video ...] [--repeats 5]

Default videos: the four demo videos in .cache/demo-media/video (vtest.avi, tree.avi, bikes.mp4,
carphone_distorted.mp4; scripts/fetch_videos.sh), the set the target is measured on.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEMO_VIDEOS = ("vtest.avi", "tree.avi", "bikes.mp4", "carphone_distorted.mp4")
sys.path.insert(0, str(ROOT))

from core.media.probe import probe_video  # noqa: E402
from core.media.video import STREAM_MAX_SIDE, causal_frames  # noqa: E402


def _cpu(children: bool) -> float:
    """CPU seconds (user + system) of this process, all threads, or of its finished children."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN if children else resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


Contender = tuple[Callable[[], int], bool]  # (run once -> frames written, is it a child process)


def _interleaved(fns: dict[str, Contender], repeats: int) -> dict[str, tuple[float, float, int]]:
    """Median (wall s, CPU s, result) per contender, the contenders taking turns in every repeat.

    Taking turns matters on a shared machine: load that comes and goes during the run then
    slows every contender alike instead of whichever block of repeats it hit. The CPU time
    (ours: every thread of this process; ffmpeg: the child) is printed too, as the number that
    other users' load changes least.
    """
    runs: dict[str, list[tuple[float, float, int]]] = {name: [] for name in fns}
    for _ in range(repeats):
        for name, (fn, child) in fns.items():
            c0, t0 = _cpu(child), time.perf_counter()
            n = fn()
            runs[name].append((time.perf_counter() - t0, _cpu(child) - c0, n))
    return {name: (statistics.median(r[0] for r in rs), statistics.median(r[1] for r in rs), rs[-1][2])
            for name, rs in runs.items()}


def _ffmpeg_fps1(ffmpeg: str, path: Path) -> int:
    out = subprocess.run(
        [
            ffmpeg,
            "-nostdin",
            "-v",
            "error",
            "-i",
            str(path),
            "-vf",
            "fps=1",
            "-c:v",
            "mjpeg",
            "-q:v",
            "3",
            "-f",
            "image2pipe",
            "-",
        ],
        capture_output=True,
        check=True,
    ).stdout
    return out.count(b"\xff\xd9")  # JPEG end-of-image markers ≈ frames written


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("videos", nargs="*", type=Path)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    videos = args.videos or [ROOT / ".cache/demo-media/video" / n for n in DEMO_VIDEOS]
    ffmpeg = shutil.which("ffmpeg")
    if ffmpeg is None:
        print("ffmpeg not found: apt-get install -y ffmpeg", file=sys.stderr)
        return 2
    print(f"cpus={os.cpu_count()} repeats={args.repeats} (median wall time, contenders taking turns)")
    for v in videos:
        if not v.is_file():
            print(f"missing {v}: run scripts/fetch_videos.sh", file=sys.stderr)
            return 2
        info = probe_video(v)
        res = _interleaved({
            "probe": (lambda v=v: probe_video(v).decodable_frames, False),
            "ours": (lambda v=v: len(causal_frames(v).frames), False),
            "capped": (lambda v=v: len(causal_frames(v, max_side=STREAM_MAX_SIDE).frames), False),
            "ffmpeg": (lambda v=v: _ffmpeg_fps1(ffmpeg, v), True),
        }, args.repeats)
        t_probe, t_cap = res["probe"][0], res["capped"][0]
        (t_ours, c_ours, n_ours), (t_ff, c_ff, n_ff) = res["ours"], res["ffmpeg"]
        print(
            f"{v.name}: {info.decodable_frames} frames ({info.header_frames} in header), "
            f"{info.duration_s:.2f} s, {info.width}x{info.height}\n"
            f"  probe_video          {t_probe * 1000:8.1f} ms\n"
            f"  causal_frames        {t_ours * 1000:8.1f} ms  -> {n_ours} frames (full size), "
            f"cpu {c_ours * 1000:.0f} ms\n"
            f"  causal_frames {STREAM_MAX_SIDE:<4d}   {t_cap * 1000:8.1f} ms  (longest side capped)\n"
            f"  ffmpeg -vf fps=1     {t_ff * 1000:8.1f} ms  -> {n_ff} frames, cpu {c_ff * 1000:.0f} ms\n"
            f"  ratio ours/ffmpeg    {t_ours / t_ff:8.2f}x  ({t_cap / t_ff:.2f}x capped; "
            f"cpu {c_ours / c_ff:.2f}x)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
