"""A tiny copy of HoloAssist's released layout (docs/video_sources.md §holoassist) around the real
registry videos: the annotation JSON as the project page's Labels download names it, the split
lists of ``data-splits-v1_2.zip`` unpacked at the root, and one recording folder
``<video_name>/Export_py/Video_pitchshift.mp4`` per video.

The release's videos are MP4 (H.264), and a stream copy cannot put ``vtest.avi`` (MS-MPEG4) or
``tree.avi`` (Cinepak) into MP4, so only ``bikes.mp4`` (10 s of street cycling, five shots) and
``carphone_distorted.mp4`` (4 s, a man talking in a car) are used. The actions describe what those
videos show (their 1 FPS frames; ``native.BIKES_SHOTS`` / ``CARPHONE``); the utterances are
transcribed ``*unintelligible*`` with low confidence — a value the README itself shows — since the
demo videos carry no instructor's voice, and their purposes are the demo's own. Besides the usable
videos the folder holds what a real download has: an annotated video never downloaded, a download
cut short of its annotated duration, an annotated video with no action annotated, a test-split
video whose annotations are not in the trainval file, and a recording nobody lists.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

ANNOTATION = "data-annotation-trainval-v1_1.json"
BIKES, CAR, CUT = "R901-5Dec-Bicycle", "R902-5Dec-Car", "R903-5Dec-Bicycle"
GONE, QUIET, TEST, STRAY = "R904-5Dec-Car", "R905-5Dec-Car", "R906-5Dec-Bicycle", "R907-5Dec-Car"
VIDEO = "Export_py/Video_pitchshift.mp4"
UNSURE = {"Transcription": "*unintelligible*", "Transcription Confidence": "low-confidence-transcription"}


def _event(n: int, label: str, start: float, end: float, attributes: dict[str, Any]) -> dict[str, Any]:
    return {"id": n, "label": label, "start": start, "end": end, "type": "range", "attributes": attributes}


def _coarse(n: int, start: float, end: float, sentence: str, verb: str, noun: str) -> dict[str, Any]:
    return _event(n, "Coarse grained action", start, end,
                  {"Action sentence": sentence, "Verb": verb, "Adjective": "none", "Noun": noun})


def _fine(n: int, start: float, end: float, verb: str, noun: str, correctness: str = "Correct Action",
          explanation: str = "none", corrected_by: str = "none") -> dict[str, Any]:
    return _event(n, "Fine grained action", start, end, {
        "Action Correctness": correctness, "Incorrect Action Explanation": explanation,
        "Incorrect Action Corrected by": corrected_by, "Verb": verb, "Adjective": "none",
        "Noun": noun, "adverbial": "none"})


def _talk(n: int, start: float, end: float, purpose: str) -> dict[str, Any]:
    return _event(n, "Conversation", start, end, {"Conversation Purpose": purpose, **UNSURE})


def _entry(name: str, task: str, raw: str, whole: int, fps: float, size: tuple[int, int],
           events: list[dict[str, Any]], n: int) -> dict[str, Any]:
    return {"batch": "demo", "taskId": f"{n:024d}", "taskType": task, "video_name": name,
            "videoMetadata": {"video": {"container": "mov", "codec": "h264", "fps": fps,
                                        "resolution": {"w": size[0], "h": size[1]}},
                              "duration": {"raw": raw, "seconds": whole}},
            "events": events}


# bikes.mp4: shots at 1.2, 3.04, 5.48, 7.48 s (native.BIKES_SHOTS)
BIKES_EVENTS = [
    _event(1, "Narration", 0.0, 9.9, {"Long form description": (
        "A cyclist rides along a city street between cars and crosses in front of a stopped car. "
        "The view moves to a square behind a railing, where people walk past a bicycle parked "
        "against a wall.")}),
    _talk(2, 0.2, 1.1, "instructor-start-conversation_describing high-level instruction"),
    _coarse(3, 1.2, 5.48, "The cyclist rides through the traffic.", "ride", "bicycle"),
    _fine(4, 1.3, 3.0, "ride", "bicycle"),
    _fine(5, 3.1, 5.4, "cross", "road", "Wrong Action, corrected by instructor verbally",
          "The cyclist crosses in front of a stopped car.", "instructor"),
    _talk(6, 4.0, 4.8, "instructor-start-conversation_correct the wrong action"),
    _coarse(7, 7.48, 9.68, "People walk past a bicycle parked against a wall.", "walk_past", "bicycle"),
    _fine(8, 7.5, 9.6, "walk_past", "bicycle"),
]
# carphone_distorted.mp4: a man in a suit and red bow tie talks in a car; from about 2.3 s he raises
# a hand by the window and tilts his head (native.CARPHONE)
CAR_EVENTS = [
    _event(1, "Narration", 0.0, 4.0, {"Long form description": (
        "A man in a dark suit and red bow tie sits in a car and talks. He raises a hand by the "
        "window and tilts his head as he talks.")}),
    _coarse(2, 0.0, 2.3, "The man talks while sitting in a car.", "talk", "none"),
    _fine(3, 0.1, 2.2, "talk", "none"),
    _coarse(4, 2.3, 4.0, "The man raises a hand by the window and tilts his head.", "raise", "hand"),
    _fine(5, 2.3, 3.1, "raise", "hand"),
    _fine(6, 3.1, 4.0, "tilt", "head"),
]
QUIET_EVENTS = [CAR_EVENTS[0], _talk(2, 0.5, 1.5, "student-start-conversation_other")]


def write(media: Path, root: Path) -> None:
    """The HoloAssist demo folder at ``root`` from the registry videos in ``media``."""
    from pipelines.common.video_sources.demo.files import dump, remux
    from pipelines.common.video_sources.demo.files import write as write_text

    bikes = ("00:00:10.00", 10, 25.0, (640, 272))
    car = ("00:00:04.00", 4, 29.97, (176, 144))
    write_text(root / ANNOTATION, dump([
        _entry(BIKES, "ride bicycle in traffic", *bikes, BIKES_EVENTS, 901),
        _entry(CAR, "talk in a car", *car, CAR_EVENTS, 902),
        _entry(CUT, "ride bicycle in traffic", *bikes, BIKES_EVENTS, 903),  # the download stopped at 4 s
        _entry(GONE, "talk in a car", *car, CAR_EVENTS, 904),  # annotated, never downloaded
        _entry(QUIET, "talk in a car", *car, QUIET_EVENTS, 905),  # no action annotated
    ]))
    write_text(root / "train-v1_2.txt", "".join(f"{n}\n" for n in (CAR, CUT, GONE, QUIET)))
    write_text(root / "val-v1_2.txt", f"{BIKES}\n")
    write_text(root / "test-v1_2.txt", f"{TEST}\n")  # its annotations are not in the trainval file
    remux(media / "bikes.mp4", root / BIKES / VIDEO)
    remux(media / "carphone_distorted.mp4", root / CAR / VIDEO)
    remux(media / "bikes.mp4", root / CUT / VIDEO, 0, 4)
    remux(media / "carphone_distorted.mp4", root / QUIET / VIDEO)
    remux(media / "bikes.mp4", root / TEST / VIDEO)
    remux(media / "carphone_distorted.mp4", root / STRAY / VIDEO)  # in no file
