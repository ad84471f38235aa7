"""A tiny copy of VideoCUA's released layout (docs/video_sources.md §videocua), as the official
``download_data.sh`` extracts it: ``data/<Platform>/<task_id>/action_log.json`` and
``video/video.mp4``.

VideoCUA's videos are screen recordings, and none of the registry videos (``media``: a campus
square, a tree, cyclists, a man in a car) is one, so the two demonstrations are rendered here:
a note editor in which the pointer clicks the text area, "hello world" is typed and Ctrl+S saves
(the status bar turns to "Saved"), and a calculator on which 7, +, 5 and = are clicked (the
display ends at 12). Frames are drawn with OpenCV and encoded with FFmpeg's own MPEG-4 Part 2
encoder, single-threaded and ``+bitexact`` (no encoder version in the stream, no metadata), so
the files are the same bytes on every run. Each log describes exactly what its video shows, at
the recording's pixel positions and seconds. The platforms ("Notes", "Calculator") and task ids
(9001x) are the demo's own, not VideoCUA's. The demo carries the bad inputs a real extraction
has: a task whose video was never downloaded (its ``action_log.json`` alone) and a video nobody
annotated (a task folder with ``video/`` and no log).

    python -c "from pathlib import Path; from pipelines.common.video_sources.demo.videocua import write; \
write(Path('.cache/demo-media/video'), Path('/tmp/vc'))"
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

W, H, FPS = 640, 400, 30
NOTES, CALC, GONE, STRAY = "90011", "90012", "90013", "90014"
TEXT_AREA = (200, 150)
TYPED = "hello world"
TYPE_AT, CHAR_S = 1.6, 0.1  # the typed text appears one character every 0.1 s from 1.6 s
NOTES_CLICK, SAVE_AT, NOTES_END, NOTES_FRAMES = 1.0, 3.4, 4.6, 150
KEYS = [["7", "8", "9", "/"], ["4", "5", "6", "*"], ["1", "2", "3", "-"], ["0", ".", "=", "+"]]
BW, BH, GAP, X0, Y0 = 132, 46, 10, 40, 132
CALC_CLICKS = [(0.8, "7"), (1.6, "+"), (2.4, "5"), (3.2, "=")]
CALC_DISPLAY = [(0.0, "0"), (0.8, "7"), (1.6, "7 +"), (2.4, "7 + 5"), (3.2, "12")]
CALC_END, CALC_FRAMES = 3.9, 120
START = (560, 360)  # where the pointer rests when the recording starts
MOVE_S = 0.6  # the pointer glides to its target in the 0.6 s before a click


def button_center(label: str) -> tuple[int, int]:
    for r, row in enumerate(KEYS):
        if label in row:
            c = row.index(label)
            return X0 + c * (BW + GAP) + BW // 2, Y0 + r * (BH + 8) + BH // 2
    raise KeyError(label)


def _pointer(t: float, clicks: list[tuple[float, tuple[int, int]]]) -> tuple[int, int]:
    """Where the pointer is at ``t``: resting, or gliding to the next click's position."""
    here = START
    for at, target in clicks:
        if t >= at:
            here = target
            continue
        if t > at - MOVE_S:
            f = (t - (at - MOVE_S)) / MOVE_S
            return round(here[0] + (target[0] - here[0]) * f), round(here[1] + (target[1] - here[1]) * f)
        break
    return here


def _window(img: Any, title: str) -> None:
    import cv2

    img[:] = (225, 225, 225)
    cv2.rectangle(img, (20, 20), (620, 380), (255, 255, 255), -1)
    cv2.rectangle(img, (20, 20), (620, 48), (90, 60, 40), -1)
    cv2.putText(img, title, (32, 40), cv2.FONT_HERSHEY_SIMPLEX, 0.55, (255, 255, 255), 1, cv2.LINE_AA)
    cv2.rectangle(img, (20, 20), (620, 380), (120, 120, 120), 1)


def _cursor(img: Any, at: tuple[int, int], clicked: bool) -> None:
    import cv2
    import numpy as np

    x, y = at
    if clicked:
        cv2.circle(img, (x, y), 12, (0, 140, 255), 2, cv2.LINE_AA)
    arrow = np.array([(x, y), (x, y + 18), (x + 5, y + 14), (x + 9, y + 22), (x + 12, y + 20),
                      (x + 8, y + 13), (x + 14, y + 13)], dtype=np.int32)
    cv2.fillPoly(img, [arrow], (0, 0, 0), cv2.LINE_AA)
    cv2.polylines(img, [arrow], True, (255, 255, 255), 1, cv2.LINE_AA)


def notes_frame(img: Any, t: float) -> None:
    """The note editor at ``t`` s (module doc)."""
    import cv2

    _window(img, "Notes - untitled.txt" if t < SAVE_AT else "Notes - notes.txt")
    cv2.rectangle(img, (40, 64), (600, 330), (150, 150, 150), 1)
    shown = TYPED[: max(0, min(len(TYPED), int((t - TYPE_AT) / CHAR_S) + 1))] if t >= TYPE_AT else ""
    cv2.putText(img, shown, (52, 96), cv2.FONT_HERSHEY_SIMPLEX, 0.8, (20, 20, 20), 2, cv2.LINE_AA)
    if t >= NOTES_CLICK:  # the caret, once the text area has the focus
        x = 52 + cv2.getTextSize(shown, cv2.FONT_HERSHEY_SIMPLEX, 0.8, 2)[0][0] + 3 if shown else 52
        cv2.line(img, (x, 74), (x, 102), (20, 20, 20), 2)
    cv2.rectangle(img, (21, 350), (619, 379), (235, 235, 235), -1)
    status = "Saved" if t >= SAVE_AT else "Unsaved changes" if shown else "Ready"
    cv2.putText(img, status, (32, 370), cv2.FONT_HERSHEY_SIMPLEX, 0.5, (60, 60, 60), 1, cv2.LINE_AA)
    _cursor(img, _pointer(t, [(NOTES_CLICK, TEXT_AREA)]), NOTES_CLICK <= t < NOTES_CLICK + 0.2)


def calculator_frame(img: Any, t: float) -> None:
    """The calculator at ``t`` s (module doc)."""
    import cv2

    _window(img, "Calculator")
    cv2.rectangle(img, (40, 64), (598, 120), (245, 245, 245), -1)
    cv2.rectangle(img, (40, 64), (598, 120), (150, 150, 150), 1)
    display = [text for at, text in CALC_DISPLAY if t >= at][-1]
    width = cv2.getTextSize(display, cv2.FONT_HERSHEY_SIMPLEX, 1.1, 2)[0][0]
    cv2.putText(img, display, (588 - width, 106), cv2.FONT_HERSHEY_SIMPLEX, 1.1, (20, 20, 20), 2,
                cv2.LINE_AA)
    pressed = {label for at, label in CALC_CLICKS if at <= t < at + 0.2}
    for r, row in enumerate(KEYS):
        for c, label in enumerate(row):
            x, y = X0 + c * (BW + GAP), Y0 + r * (BH + 8)
            fill = (200, 170, 120) if label in pressed else (238, 238, 238)
            cv2.rectangle(img, (x, y), (x + BW, y + BH), fill, -1)
            cv2.rectangle(img, (x, y), (x + BW, y + BH), (160, 160, 160), 1)
            size = cv2.getTextSize(label, cv2.FONT_HERSHEY_SIMPLEX, 0.8, 2)[0]
            cv2.putText(img, label, (x + (BW - size[0]) // 2, y + (BH + size[1]) // 2),
                        cv2.FONT_HERSHEY_SIMPLEX, 0.8, (30, 30, 30), 2, cv2.LINE_AA)
    clicks = [(at, button_center(label)) for at, label in CALC_CLICKS]
    _cursor(img, _pointer(t, clicks), bool(pressed))


def render(dst: Path, frames: int, draw: Callable[[Any, float], None]) -> None:
    """``frames`` frames of ``draw`` at 30 fps, encoded into ``dst`` (MPEG-4 Part 2 in MP4), the
    same bytes on every run (module doc)."""
    import numpy as np

    ffmpeg = shutil.which("ffmpeg")
    if ffmpeg is None:
        raise SystemExit("ffmpeg not found: run `make setup` (scripts/setup_system.sh video)")
    dst.parent.mkdir(parents=True, exist_ok=True)
    img = np.zeros((H, W, 3), dtype=np.uint8)
    raw = bytearray()
    for n in range(frames):
        draw(img, n / FPS)
        raw += img.tobytes()
    cmd = [ffmpeg, "-v", "error", "-y", "-f", "rawvideo", "-pix_fmt", "bgr24", "-s", f"{W}x{H}",
           "-r", str(FPS), "-i", "-", "-c:v", "mpeg4", "-q:v", "3", "-g", str(FPS), "-bf", "0",
           "-pix_fmt", "yuv420p", "-threads", "1", "-map_metadata", "-1", "-flags:v", "+bitexact",
           "-fflags", "+bitexact", str(dst)]
    subprocess.run(cmd, input=bytes(raw), check=True)


def action(kind: str, t: float, **params: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {"action_type": kind, "timestamp": t}
    if params:
        entry["action_params"] = params
    return entry


def log(task: str, platform: str, instruction: str, actions: list[dict[str, Any]]) -> dict[str, Any]:
    return {"task_id": int(task), "task_instruction": instruction, "platform": platform,
            "action_log": actions}


def write(media: Path, root: Path) -> None:
    """The layout under ``root``, written identically on every run. ``media`` (the registry
    videos) is not used: none of them is a screen recording (module doc)."""
    from pipelines.common.video_sources.demo.files import dump
    from pipelines.common.video_sources.demo.files import write as write_text

    write_text(root / "README.md", "VideoCUA (benchforge demo of the layout download_data.sh "
                                   "extracts; the release's raw_data/*.zip are not copied)\n")
    notes = root / "data" / "Notes"
    calc = root / "data" / "Calculator"
    write_text(notes / NOTES / "action_log.json", dump(log(
        NOTES, "Notes", "Type hello world into the empty note and save it with Ctrl+S.", [
            action("CLICK", NOTES_CLICK, x=TEXT_AREA[0], y=TEXT_AREA[1], text="Left", numClicks=1),
            action("TYPE", TYPE_AT, text=TYPED),
            action("HOTKEY", SAVE_AT, keys=["ctrl", "s"]),
            action("AFTER_LAST_ACTION", NOTES_END)])))
    render(notes / NOTES / "video" / "video.mp4", NOTES_FRAMES, notes_frame)
    clicks = [action("CLICK", at, x=button_center(label)[0], y=button_center(label)[1], text="Left",
                     numClicks=1) for at, label in CALC_CLICKS]
    write_text(calc / CALC / "action_log.json", dump(log(
        CALC, "Calculator", "Add 7 and 5 with the calculator's buttons.",
        [*clicks, action("AFTER_LAST_ACTION", CALC_END)])))
    render(calc / CALC / "video" / "video.mp4", CALC_FRAMES, calculator_frame)
    # logged, but its video was never downloaded: the log alone
    write_text(notes / GONE / "action_log.json", dump(log(
        GONE, "Notes", "Click into the empty note.", [
            action("CLICK", 1.0, x=TEXT_AREA[0], y=TEXT_AREA[1], text="Left", numClicks=1),
            action("AFTER_LAST_ACTION", 2.0)])))
    # a recording nobody annotated: a task folder with video/ and no action_log.json
    (calc / STRAY / "video").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(calc / CALC / "video" / "video.mp4", calc / STRAY / "video" / "video.mp4")
