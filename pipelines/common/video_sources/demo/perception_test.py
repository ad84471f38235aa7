"""A tiny copy of the Perception Test's released layout (docs/video_sources.md §perception_test)
around the real registry videos.

The release's videos are MP4 (``videos/<video_id>.mp4``), so only the registry's MP4 videos are
used (``vtest.avi`` and ``tree.avi`` are MS-MPEG4 and Cinepak, which an MP4 file cannot hold as
a stream copy): ``carphone_distorted.mp4`` (4.004 s, 120 frames at 30000/1001 fps: a man in a
suit and red bow tie talks in a car, raises a hand by the window at about 2.3 s, then tilts his
head) and ``bikes.mp4`` (10 s, 250 frames at 25 fps: cyclists ride past cars, one crosses in
front of a stopped car, a wide shot of a square, people walk past a parked bicycle). The action
classes are written in the dataset's templated style for what these videos show; they are the
demo's own, not classes of the real vocabulary. The demo carries the bad inputs a real download
has: a listed video never downloaded, a download shorter than its annotation, a video with no
action segments, a test-split video (segments withheld) and a video nobody annotated.

    python -c "from pathlib import Path; \
from pipelines.common.video_sources.demo.perception_test import write; \
write(Path('.cache/demo-media/video'), Path('/tmp/pt'))"
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

CAR, BIKES, CUT = "video_10001", "video_10002", "video_10003"
GONE, EMPTY, TEST, STRAY = "video_10004", "video_10005", "video_10006", "video_19999"
CAR_FPS, CAR_FRAMES = 30000 / 1001, 120
BIKES_FPS, BIKES_FRAMES = 25.0, 250
CLASSES = {"Talking to the camera": 0, "Raising a hand": 1, "Tilting the head": 2,
           "Riding a bicycle": 3, "Walking past something": 4}
CAR_ACTIONS = [(0.0, 2.3, "Talking to the camera"), (2.3, 3.2, "Raising a hand"),
               (3.2, 4.0, "Tilting the head")]
# bikes.mp4's shots (scene cuts measured by frame differencing: demo/native.py BIKES_SHOTS)
BIKES_ACTIONS = [(1.2, 3.04, "Riding a bicycle"), (3.04, 5.48, "Riding a bicycle"),
                 (7.48, 9.68, "Walking past something")]


def _segments(actions: list[tuple[float, float, str]], fps: float, first_id: int) -> list[dict[str, Any]]:
    """Action segments as the release writes them: timestamps in microseconds, frame ids."""
    return [{"id": first_id + k, "label": label, "label_id": CLASSES[label], "parent_objects": [],
             "timestamps": [round(s * 1e6), round(e * 1e6)],
             "frame_ids": [round(s * fps), round(e * fps)]}
            for k, (s, e, label) in enumerate(actions)]


def _entry(vid: str, split: str, fps: float, frames: int, height: int, width: int,
           actions: list[dict[str, Any]]) -> dict[str, Any]:
    """One video of an ``all_<split>.json``: the metadata and every task's annotations (only the
    action segments are filled; the demo clips carry no audio track)."""
    return {"metadata": {"split": split, "video_id": vid, "frame_rate": fps, "num_frames": frames,
                         "resolution": [height, width], "audio_samples": 0,
                         "audio_sample_rate": 16000, "is_cup_game": False, "is_camera_moving": False},
            "object_tracking": [], "point_tracking": [], "action_localisation": actions,
            "sound_localisation": [], "mc_question": [], "grounded_question": []}


def write(media: Path, root: Path) -> None:
    """The layout under ``root`` (annotation files at the root, the videos in ``videos/``),
    written identically on every run."""
    from pipelines.common.video_sources.demo.files import dump, remux
    from pipelines.common.video_sources.demo.files import write as write_text

    car = _segments(CAR_ACTIONS, CAR_FPS, 0)
    bikes = _segments(BIKES_ACTIONS, BIKES_FPS, 3)
    write_text(root / "all_train.json", dump({
        CAR: _entry(CAR, "train", CAR_FPS, CAR_FRAMES, 144, 176, car),
        # the download stopped at 4 s; the annotation still describes all 10 s
        CUT: _entry(CUT, "train", BIKES_FPS, BIKES_FRAMES, 272, 640, bikes),
        # listed, never downloaded
        GONE: _entry(GONE, "train", CAR_FPS, CAR_FRAMES, 144, 176, car),
        # nobody marked an action in it
        EMPTY: _entry(EMPTY, "train", CAR_FPS, CAR_FRAMES, 144, 176, []),
    }))
    write_text(root / "all_valid.json", dump({BIKES: _entry(BIKES, "valid", BIKES_FPS, BIKES_FRAMES,
                                                            272, 640, bikes)}))
    # the test split: its action segments are kept for the challenge server
    write_text(root / "all_test.json", dump({TEST: _entry(TEST, "test", BIKES_FPS, BIKES_FRAMES,
                                                          272, 640, [])}))
    videos = root / "videos"
    remux(media / "carphone_distorted.mp4", videos / f"{CAR}.mp4")
    remux(media / "bikes.mp4", videos / f"{BIKES}.mp4")
    remux(media / "bikes.mp4", videos / f"{CUT}.mp4", 0, 4)
    remux(media / "carphone_distorted.mp4", videos / f"{EMPTY}.mp4")
    remux(media / "bikes.mp4", videos / f"{TEST}.mp4")
    remux(media / "carphone_distorted.mp4", videos / f"{STRAY}.mp4")  # unannotated
