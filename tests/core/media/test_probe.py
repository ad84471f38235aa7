"""Video probing on real registry videos (design.md §Environment): the real timeline against the
header, truncated and sparse files, and content against name.

Expected numbers were read with ffprobe on the same files (`-count_frames`, packet pts):
tree.avi 444 header / 68 decodable frames spread over 29.600148 s; vtest.avi 795 frames at
10 fps = 79.5 s; bikes.mp4 250 frames at 25 fps = 10.0 s. Bad files go through the sampler's
entry points too, which reject them the same way (:mod:`core.media.video` probes with this).
"""

from __future__ import annotations

import struct
from pathlib import Path

import cv2
import numpy as np
import pytest

from core.errors import BadInput
from core.media.probe import probe_video, reject_truncated, sniff_container
from core.media.video import causal_frames, causal_frames_bytes

NAMES = ("vtest.avi", "tree.avi", "bikes.mp4", "carphone_distorted.mp4")


@pytest.fixture(scope="session")
def media(videos: Path) -> dict[str, Path]:
    """The real registry videos by name (make setup)."""
    return {n: videos / n for n in NAMES}


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


def test_truncated_avi_is_reported_not_rejected(media: dict[str, Path], tmp_path: Path) -> None:
    data = media["vtest.avi"].read_bytes()
    half = tmp_path / "vtest_half.avi"
    half.write_bytes(data[: len(data) // 2])
    info = probe_video(half)
    assert (info.header_frames, info.decodable_frames) == (795, 399)
    assert info.note == "header says 795 frames, only 399 decode"
    assert info.duration_s == pytest.approx(39.9, abs=1e-6)
    assert len(causal_frames(half).frames) == 40


def test_truncation_rule_rejects_cut_files_and_keeps_sparse_ones(media: dict[str, Path],
                                                                 tmp_path: Path) -> None:
    """The readers' rule: a timeline ending well before the header's promise is a cut file
    (rejected); fewer frames than the header over the full timeline is a sparse file (tree.avi:
    kept, with its note)."""
    data = media["vtest.avi"].read_bytes()
    half = tmp_path / "vtest_half.avi"
    half.write_bytes(data[: len(data) // 2])
    cut = probe_video(half)
    assert cut.truncated
    with pytest.raises(BadInput) as err:
        reject_truncated(cut, "clips/vtest_half.avi", "video")
    assert (err.value.source_file, err.value.field) == ("clips/vtest_half.avi", "video")
    assert err.value.reason == "truncated: the header promises 795 frames (79.5 s), only 399 decode (39.9 s)"
    tree = probe_video(media["tree.avi"])
    assert not tree.truncated and tree.note == "header says 444 frames, only 68 decode"
    reject_truncated(tree, "tree.avi", "video")  # no error


def test_truncated_mp4_decodes_nothing(media: dict[str, Path], tmp_path: Path) -> None:
    data = media["bikes.mp4"].read_bytes()
    half = tmp_path / "bikes_half.mp4"
    half.write_bytes(data[: len(data) // 2])  # moov atom is at the end: nothing decodes
    with pytest.raises(BadInput) as err:
        causal_frames(half, source_file="raw/bikes_half.mp4")
    assert err.value.source_file == "raw/bikes_half.mp4"
    assert err.value.field == "frames" and "decodes 0 frames" in err.value.reason
    with pytest.raises(BadInput) as err:  # from bytes: the caller's file and field, not the temp file
        causal_frames_bytes(half.read_bytes(), "raw/bikes_half.mp4", field="video")
    assert (err.value.source_file, err.value.field) == ("raw/bikes_half.mp4", "video")
    assert "decodes 0 frames" in err.value.reason


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
        causal_frames_bytes(rnd.read_bytes(), "raw/noise.mp4")
    with pytest.raises(BadInput) as err:
        causal_frames_bytes(b"", "raw/empty.avi", field="video")
    assert (err.value.source_file, err.value.field) == ("raw/empty.avi", "video")
    assert err.value.reason == "empty file (0 bytes); decodes 0 frames"


def test_container_must_be_what_the_extension_names(media: dict[str, Path], tmp_path: Path) -> None:
    """AVI bytes named ``.mp4`` were decoded and kept under a name that says what they are not;
    the container is sniffed from the magic bytes (RIFF…AVI, an ISO BMFF box, EBML), as images
    are checked against their extension."""
    avi = media["vtest.avi"].read_bytes()
    (tmp_path / "clip.mp4").write_bytes(avi)
    with pytest.raises(BadInput) as err:
        causal_frames_bytes(avi, "vsod/clip.mp4", field="video")
    assert (err.value.source_file, err.value.field) == ("vsod/clip.mp4", "video")
    assert err.value.reason == "the content is AVI, but the extension .mp4 names MP4/QuickTime"
    with pytest.raises(BadInput) as err:
        probe_video(tmp_path / "clip.mp4", source_file="clip.mp4")
    assert (err.value.field, err.value.reason) == (
        "frames", "the content is AVI, but the extension .mp4 names MP4/QuickTime")
    mp4 = media["bikes.mp4"].read_bytes()
    with pytest.raises(BadInput, match="the content is MP4/QuickTime, but the extension .MKV names "
                                       "Matroska/WebM"):
        causal_frames_bytes(mp4, "bikes.MKV")
    assert [sniff_container(d[:12]) for d in (avi, mp4)] == ["AVI", "MP4/QuickTime"]
    # the names that agree, and a name no container claims, decode as before
    assert len(causal_frames_bytes(mp4, "bikes.MOV").frames) == 10
    assert len(causal_frames_bytes(avi, "vtest.video").frames) == 80


def test_frame_size_over_the_pixel_limit_is_rejected_before_decoding(tmp_path: Path) -> None:
    """A video frame is an image: a header claiming 12000x12000 frames (144 M pixels, over
    ``core.media.images.MAX_PIXELS``) is rejected at open, like an image bomb."""
    small = tmp_path / "small.avi"
    out = cv2.VideoWriter(str(small), cv2.VideoWriter_fourcc(*"MJPG"), 2.0, (32, 24))
    for i in range(4):
        out.write(np.full((24, 32, 3), 40 * i, np.uint8))
    out.release()
    data = bytearray(small.read_bytes())
    avih, strf = data.index(b"avih"), data.index(b"strf")
    data[avih + 40:avih + 48] = struct.pack("<II", 12000, 12000)  # dwWidth, dwHeight
    data[strf + 12:strf + 20] = struct.pack("<ii", 12000, 12000)  # biWidth, biHeight
    sof = data.find(b"\xff\xc0")
    while sof >= 0:  # every frame's JPEG header too
        data[sof + 5:sof + 9] = struct.pack(">HH", 12000, 12000)
        sof = data.find(b"\xff\xc0", sof + 2)
    with pytest.raises(BadInput) as err:
        causal_frames_bytes(bytes(data), "vsod/huge.avi", field="video")
    assert (err.value.source_file, err.value.field) == ("vsod/huge.avi", "video")
    assert err.value.reason == ("the header claims 12000x12000 = 144,000,000 pixels, over the limit "
                                "of 89,478,485: a decompression bomb, or an image too large to "
                                "decode safely")
