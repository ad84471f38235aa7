"""core.media.browser: review copies that browsers play, with the source's real timeline."""

from __future__ import annotations

import subprocess
from dataclasses import replace
from pathlib import Path

import cv2
import pytest

from core.errors import BadInput
from core.media.browser import BrowserCopy, browser_copies, transcode_for_browser

NAMES = ("vtest.avi", "tree.avi", "bikes.mp4", "carphone_distorted.mp4")


@pytest.fixture(scope="session")
def media(videos: Path) -> dict[str, Path]:
    """The real registry videos by name (make setup)."""
    return {n: videos / n for n in NAMES}


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


def test_copies_made_at_once_are_the_copies_made_one_by_one(media: dict[str, Path], tmp_path: Path,
                                                             ffmpeg: str) -> None:
    """Two threads only change when each ffmpeg runs, never what it writes; a copy that fails
    raises its own error, naming its source, after the others were made."""
    names = ("vtest.avi", "bikes.mp4", "carphone_distorted.mp4")
    made = {}
    for threads in (1, 2):
        copies = [BrowserCopy(media[n], tmp_path / f"t{threads}" / f"{n}.mp4", f"raw/{n}") for n in names]
        probes = browser_copies(copies, threads)
        made[threads] = ([c.dst.read_bytes() for c in copies], [replace(p, path="") for p in probes])
    assert made[1] == made[2]
    broken = tmp_path / "broken.mp4"
    broken.write_bytes(media["bikes.mp4"].read_bytes()[:2000])
    copies = [BrowserCopy(broken, tmp_path / "bad" / "broken.mp4", "raw/broken.mp4"),
              BrowserCopy(media["bikes.mp4"], tmp_path / "bad" / "bikes.mp4", "raw/bikes.mp4")]
    with pytest.raises(BadInput) as err:
        browser_copies(copies, 2)
    assert err.value.source_file == "raw/broken.mp4"
    assert (tmp_path / "bad" / "bikes.mp4").stat().st_size > 0
