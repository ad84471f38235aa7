"""VideoCUA (CUA-Suite, Jian et al., 2026, "CUA-Suite: Massive Human-annotated Video Demonstrations
for Computer-Use Agents") in its released layout: 30 fps screen recordings of people doing tasks
in desktop applications, with every mouse and keyboard action logged with its time.

Layout (what the official ``VideoCUA/download_data.sh`` writes: it downloads the Hugging Face
dataset — ``raw_data/<Platform>.zip``, one ZIP per application — and unzips each into
``data/<Platform>/``; ServiceNow/GroundCUA ``VideoCUA/README.md`` "After this step", and
``VideoCUA/convert_videocua.py``, the official reader of the files; docs/video_sources.md cites
every field)::

    raw_data/<Platform>.zip                       (the release's archives, not read)
    README.md, assets/                            (the dataset card and its figures, not read)
    data/<Platform>/<task_id>/action_log.json     {task_id, task_instruction, platform,
                                                   action_log[{action_type, timestamp,
                                                   action_params}]}
    data/<Platform>/<task_id>/video/video.mp4     (the screen recording; the converter reads the
                                                   first ``video/*.mp4|*.avi|*.mov``)

``timestamp`` is seconds from the start of the recording: the official converter takes the
frame ``int(timestamp * fps)`` of the video as the screen at that action. Each logged action is
a moment, so it becomes a point span (``start == end``). The log is in the order the actions
were made (the converter pairs the k-th entry with the k-th extracted frame), so a timestamp
earlier than the one before it is an inverted interval: bad input, never re-sorted. The log
ends with an ``AFTER_LAST_ACTION`` entry (the converter also knows ``TERMINATE`` and
``TERMINATE_SUCCESS`` and reads all three as the end of the demonstration); its time is the
annotated end (``annotated_duration_s``), and an action after it is past the annotated end.

Action types and parameters are those the official converter reads (``action_to_code``):
``CLICK`` ``{x, y, text: Left|Right|Middle, numClicks}``, ``MOVE_TO`` / ``DRAG_TO`` ``{x, y
(, button)}``, ``SCROLL`` ``{scrollY | scroll}``, ``TYPE`` / ``TYPING`` / ``TEXT`` ``{text}``,
``PRESS`` / ``KEY_DOWN`` / ``KEY_UP`` ``{key | text}``, ``HOTKEY`` ``{keys | key | text
"ctrl+c"}``, ``MOUSE_DOWN`` / ``MOUSE_UP`` ``{button}``; ``x, y`` are pixels of the recording
(the converter divides them by the video's width and height). The log names no interface
element, so a click's target is its position ("click at (1748, 95)"), a typed text or a key is
its own target. Another action type is bad input (the converter would write "# Unsupported
action"): which action it was is unknown.

Task: the ``task_instruction`` ("Switch to Wireframe mode using the Wireframe button."), as a
clause; topic: the platform (the application, e.g. "Blender"). VideoCUA releases no split: every
task is ``train``.
"""

from __future__ import annotations

import json
import math
import posixpath
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from core.errors import BadInput
from pipelines.common.video_sources.base import (
    NativeFiltered,
    NativeSpan,
    NativeVideo,
    VideoDataset,
    repeated_key,
    repeated_keys,
    seconds,
    sentence_phrase,
    shown,
    text_field,
)

DATA = "data"
ARCHIVES = "raw_data"
LOG = "action_log.json"
VIDEO_DIR = "video"
VIDEO_EXT = (".mp4", ".avi", ".mov")  # what the converter globs, in its order
END_TYPES = ("AFTER_LAST_ACTION", "TERMINATE", "TERMINATE_SUCCESS")
BUTTONS = {"Left": "", "Right": "right-", "Middle": "middle-"}
MAX_PIXEL = 100_000.0  # a screen position beyond this is no position on any display
MAX_SCROLL = 1_000_000.0
LAYOUT = "raw_data/<Platform>.zip, data/<Platform>/<task_id>/{action_log.json, video/video.mp4}"


@dataclass
class _Task:
    """What one ``data/<Platform>/<task_id>`` entry holds on disk."""

    log: str | None = None
    videos: list[str] = field(default_factory=list)
    stray: str | None = None  # a file standing where the task's folder belongs

    def files(self) -> list[str]:
        return [f for f in (self.stray, self.log, *self.videos) if f]


class VideoCUA(VideoDataset):
    name = "videocua"
    title = "VideoCUA"

    def annotation_files(self) -> list[str]:
        return [t.log for _, t in sorted(self._tasks().items()) if t.log]

    def layout_problem(self, relative: str) -> tuple[str, str] | None:
        parts = relative.split("/")
        top = parts[0]
        if (len(parts) == 1 and top.lower().startswith("readme")) or top == "assets":
            return None
        if top == ARCHIVES:
            if len(parts) == 2 and relative.endswith(".zip"):
                return None
            return relative, f"not a platform archive at {ARCHIVES}/<Platform>.zip"
        if top == DATA:
            if len(parts) == 2:
                return relative, "a file where a platform folder belongs"
            if len(parts) == 3:
                return None  # a file where a task folder belongs: videos() names it as that task
            if len(parts) == 4 and parts[3] == LOG:
                return None
            if len(parts) == 5 and parts[3] == VIDEO_DIR and parts[4].endswith(VIDEO_EXT):
                return None
            if len(parts) >= 5 and parts[3] == VIDEO_DIR:
                return relative, f"not a video the official converter reads (video/*{'|*'.join(VIDEO_EXT)})"
            entry = "/".join(parts[:4]) + ("/" if len(parts) > 4 else "")
            return entry, f"not part of a task folder ({LAYOUT})"
        return (relative if len(parts) == 1 else f"{top}/",
                f"not part of the VideoCUA layout ({ARCHIVES}/, {DATA}/, README.md, assets/)")

    # -- what is on disk -----------------------------------------------------------------------
    def _tasks(self) -> dict[tuple[str, str], _Task]:
        """(platform, task id) → the task's files, from the folder names (the converter's ids:
        ``task_dir.name``, ``task_dir.parent.name``)."""
        out: dict[tuple[str, str], _Task] = {}
        for rel in self.match(f"{DATA}/**"):
            parts = rel.split("/")
            if len(parts) < 3:
                continue  # a file where a platform folder belongs (check())
            task = out.setdefault((parts[1], parts[2]), _Task())
            if len(parts) == 3:
                task.stray = rel
            elif len(parts) == 4 and parts[3] == LOG:
                task.log = rel
            elif len(parts) == 5 and parts[3] == VIDEO_DIR and parts[4].endswith(VIDEO_EXT):
                task.videos.append(rel)
        return {k: t for k, t in out.items() if t.files()}

    # -- whole-source files --------------------------------------------------------------------
    def check(self) -> None:
        """The extraction as a whole: ``data/`` holds only platform folders (a file there stands
        where the download script puts a platform's tasks, which then cannot be listed), at least
        one task, and every ``action_log.json`` reads as JSON — one that does not, or cannot be
        read, stops the build naming it (the release is extracted by a script: a broken file
        says the extraction is broken). What is wrong inside a log rejects that task only."""
        for rel in self.match(f"{DATA}/*"):
            why = self.unreadable_link(rel) or "a file where a platform folder belongs"
            raise BadInput(shown(rel), "path", f"{why}: download_data.sh extracts "
                                               "raw_data/<Platform>.zip into data/<Platform>/, so "
                                               "no task of this platform can be listed")
        logs = self.annotation_files()
        if not logs:
            raise BadInput(f"{DATA}/", "file", f"missing: no task folder holds an {LOG} "
                                               f"({DATA}/<Platform>/<task_id>/{LOG}; download_data.sh "
                                               "extracts the release's raw_data/*.zip there)")
        for rel in logs:
            self.load_json(rel)

    # -- videos --------------------------------------------------------------------------------
    def videos(self) -> Iterator[NativeVideo | NativeFiltered | BadInput]:
        tasks = self._tasks()
        where: dict[str, list[str]] = {}
        for platform, task in sorted(tasks):
            where.setdefault(task, []).append(platform)
        for (platform, task), found in sorted(tasks.items()):
            item = self.item(shown(task))
            others = [p for p in where[task] if p != platform]
            if others:  # never kept: which folder holds task <id> is unknown
                for rel in found.files():
                    yield BadInput(shown(rel), "path", f"task {shown(task)} is also under "
                                   f"{DATA}/{shown(others[0])}/{shown(task)}/: a task id names one "
                                   "task, so which folder holds it is unknown", item)
                continue
            if found.stray:
                yield BadInput(shown(found.stray), "path", "a file where a task folder belongs "
                               f"({DATA}/<Platform>/<task_id>/{{{LOG}, video/}})", item)
                continue
            if found.log is None:
                for rel in found.videos:
                    yield BadInput(shown(rel), "path", "video file that no annotation file lists "
                                   f"(unannotated input: no {LOG} beside its video/ folder)", item)
                continue
            try:
                yield self._video(platform, task, found)
            except BadInput as err:
                yield err

    def _video(self, platform: str, task: str, found: _Task) -> NativeVideo | NativeFiltered:
        rel = found.log or ""
        item = self.item(shown(task))
        for name in found.files():
            if shown(name) != name:  # a release cannot carry the raw byte, nor a path holding it
                raise BadInput(shown(name), "path", "a folder or file name that is not valid UTF-8",
                               item)
        try:
            doc = self.load_json(rel)
        except BadInput as err:  # not JSON, or unreadable: check() stops the build on it
            err.item_id = err.item_id or item
            raise
        if not isinstance(doc, dict):
            raise BadInput(rel, "json", "must be an object {task_id, task_instruction, platform, "
                                        "action_log}", item)
        for key in repeated_keys(doc):
            raise BadInput(rel, key, "key appears twice in this object (JSON keeps only the last, "
                                     "so which value is meant is unknown)", item)
        for key, value in doc.items():
            twice = repeated_key(value, key)
            if twice:
                raise BadInput(rel, twice, "key appears twice in this object (JSON keeps only the "
                                           "last)", item)
        self._same("task_id", doc, task, rel, item)
        self._same("platform", doc, platform, rel, item)
        instruction = text_field(doc.get("task_instruction"), rel, "task_instruction", item)
        if not sentence_phrase(instruction):
            raise BadInput(rel, "task_instruction", f"{_short(instruction)} holds no words", item)
        log = doc.get("action_log")
        if not isinstance(log, list):
            raise BadInput(rel, "action_log", "must be a list of actions [{action_type, timestamp, "
                                              "action_params}]", item)
        end = self._end(log, rel, item)
        spans = []
        previous: tuple[int, float] | None = None
        for k, entry in enumerate(log):
            f = f"action_log[{k}]"
            if not isinstance(entry, dict):
                raise BadInput(rel, f, "must be an object {action_type, timestamp, action_params}", item)
            kind = text_field(entry.get("action_type"), rel, f"{f}.action_type", item).upper()
            t = seconds(entry.get("timestamp"), rel, f"{f}.timestamp", item)
            if previous is not None and t < previous[1]:
                raise BadInput(rel, f"{f}.timestamp", f"{t} s is before action_log[{previous[0]}]."
                               f"timestamp ({previous[1]} s): the log lists the actions in the "
                               "order they were made", item)
            previous = (k, t)
            if kind in END_TYPES:
                continue  # the end of the demonstration (_end), the log's last entry
            if end is not None and t > end[0]:
                raise BadInput(rel, f"{f}.timestamp", f"action at {t} s is past the annotated end "
                               f"(action_log[{len(log) - 1}], {end[1]} at {end[0]} s)", item)
            verb, third, target = _action(kind, entry.get("action_params"), rel, f, item)
            text = f"{verb} {target}".strip()
            spans.append(NativeSpan(
                "gui_action", t, t, verb, text, f"the user {third} {target}".strip(),
                f"{rel}: {f}.timestamp", (("target", target), ("action", kind))))
        video = self._locate(found, rel, item)
        if not spans:
            return NativeFiltered(item, rel, "no actions logged",
                                  "action_log holds no action before the end of the demonstration")
        spans.sort(key=lambda s: (s.start, s.field))
        return NativeVideo(
            dataset=self.name, video_id=task, video=video, split="train", environment="digital",
            task=sentence_phrase(instruction), topic=platform,
            annotated_duration_s=end[0] if end else None, annotation_file=rel, spans=tuple(spans))

    def _same(self, key: str, doc: dict[str, Any], folder: str, rel: str, item: str) -> None:
        """``task_id`` / ``platform`` in the log, when given, must name the folder it lies in
        (the converter takes both from the folder; a log copied into another task's folder
        would otherwise describe a video it was not recorded with)."""
        if key not in doc:
            return
        value = doc[key]
        if isinstance(value, bool) or not isinstance(value, int | str) or str(value) != folder:
            raise BadInput(rel, key, f"{_short(value)} is not the folder it lies in "
                                     f"({shown(folder)}): which task the log describes is unknown",
                           item)

    def _end(self, log: list[Any], rel: str, item: str) -> tuple[float, str] | None:
        """(time, type) of the end marker, the log's last entry; ``None`` when the log has none.
        An end marker anywhere else leaves where the demonstration ends unknown."""
        end = None
        for k, entry in enumerate(log):
            kind = entry.get("action_type") if isinstance(entry, dict) else None
            if isinstance(kind, str) and kind.upper() in END_TYPES:
                f = f"action_log[{k}]"
                if k != len(log) - 1:
                    raise BadInput(rel, f"{f}.action_type", f"{shown(kind)} marks the end of the "
                                   "demonstration but is not the log's last entry", item)
                end = (seconds(entry.get("timestamp"), rel, f"{f}.timestamp", item), kind.upper())
        return end

    def _locate(self, found: _Task, rel: str, item: str) -> str:
        """The task's one video (``video/*.mp4|avi|mov``), else BadInput."""
        folder = posixpath.join(posixpath.dirname(rel), VIDEO_DIR)
        if not found.videos:
            raise BadInput(rel, "task_id", f"the task's video is not on disk (looked for "
                                           f"{shown(folder)}/video.mp4, or *.avi, *.mov)", item)
        if len(found.videos) > 1:
            raise BadInput(shown(found.videos[1]), "path", "the task's video is on disk more than "
                           f"once: {', '.join(shown(v) for v in found.videos)}", item)
        return found.videos[0]


def _short(value: Any) -> str:
    text = shown(json.dumps(value, ensure_ascii=False)) if not isinstance(value, str) else \
        repr(shown(value))
    return text if len(text) <= 40 else text[:37] + "..."


def _number(value: Any, rel: str, where: str, item: str, *, low: float, high: float) -> str:
    """A finite number in ``[low, high]`` as a person reads it ("1748", "12.5"), else BadInput."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise BadInput(rel, where, f"must be a number, got {_short(value)}", item)
    try:
        x = float(value)
    except OverflowError:
        x = math.inf
    if not math.isfinite(x) or not low <= x <= high:
        raise BadInput(rel, where, f"{_short(value)} is not a number in [{low:g}, {high:g}]", item)
    return str(int(x)) if x.is_integer() else f"{x:g}"


def _text(value: Any, rel: str, where: str, item: str) -> str:
    """A string the user typed or a key name, kept as written (a space is a keystroke), else
    BadInput: missing, empty, not a string or not UTF-8."""
    text_field(value, rel, where, item, required=False)
    if not isinstance(value, str) or not value:
        raise BadInput(rel, where, "missing or empty", item)
    return value


def _action(kind: str, params: Any, rel: str, f: str, item: str) -> tuple[str, str, str]:
    """(verb, its third person, target) of one logged action, read as the official converter
    reads it (``action_to_code``); BadInput for a parameter it could not use."""
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise BadInput(rel, f"{f}.action_params", f"must be an object, got {_short(params)}", item)
    p = f"{f}.action_params"

    def key(name: str, *alternatives: str) -> tuple[str, Any]:
        for k in (name, *alternatives):
            if k in params:
                return f"{p}.{k}", params[k]
        return f"{p}.{name}", None

    def point() -> str:
        x = _number(params.get("x"), rel, f"{p}.x", item, low=0, high=MAX_PIXEL)
        y = _number(params.get("y"), rel, f"{p}.y", item, low=0, high=MAX_PIXEL)
        return f"({x}, {y})"

    def button(default: str = "left") -> str:
        value = params.get("button", default)
        return text_field(value, rel, f"{p}.button", item).lower()

    if kind == "CLICK":
        at = point()
        prefix = BUTTONS.get(params.get("text")) if isinstance(params.get("text"), str) else None
        n = params.get("numClicks", 1)
        if isinstance(n, bool) or not isinstance(n, int):
            raise BadInput(rel, f"{p}.numClicks", f"must be a whole number of clicks, got {_short(n)}",
                           item)
        _number(n, rel, f"{p}.numClicks", item, low=1, high=100)
        if prefix:  # the converter: a right click is a right click, whatever numClicks says
            verb = f"{prefix}click"
        elif n == 2:
            verb = "double-click"
        elif n > 2:
            return f"click {int(n)} times", f"clicks {int(n)} times", f"at {at}"
        else:
            verb = "click"  # "Left", or a text that names no button: the converter's left click
        return verb, f"{verb}s", f"at {at}"
    if kind == "MOVE_TO":
        return "move the pointer to", "moves the pointer to", point()
    if kind == "DRAG_TO":
        at = point()
        return f"drag with the {button()} button to", f"drags with the {button()} button to", at
    if kind == "SCROLL":
        where, value = key("scrollY", "scroll")
        if value is None:
            raise BadInput(rel, where, "missing: the scroll amount (scrollY or scroll)", item)
        return "scroll", "scrolls", f"by {_number(value, rel, where, item, low=-MAX_SCROLL, high=MAX_SCROLL)}"
    if kind in ("TYPE", "TYPING", "TEXT"):
        where, value = key("text")
        return "type", "types", json.dumps(_text(value, rel, where, item), ensure_ascii=False)
    if kind in ("PRESS", "KEY_DOWN", "KEY_UP"):
        where, value = key("key", "text")
        name = _text(value, rel, where, item)
        verb = {"PRESS": ("press", "presses"), "KEY_DOWN": ("hold down", "holds down"),
                "KEY_UP": ("release", "releases")}[kind]
        return verb[0], verb[1], name
    if kind == "HOTKEY":
        where, value = key("keys", "key", "text")
        if isinstance(value, list):
            keys = [_text(k, rel, f"{where}[{n}]", item) for n, k in enumerate(value)]
        else:
            keys = [k.strip() for k in _text(value, rel, where, item).split("+") if k.strip()]
        if not keys:
            raise BadInput(rel, where, "no keys", item)
        return "press", "presses", "+".join(keys)
    if kind in ("MOUSE_DOWN", "MOUSE_UP"):
        verb = ("press", "presses") if kind == "MOUSE_DOWN" else ("release", "releases")
        return verb[0], verb[1], f"the {button()} mouse button"
    raise BadInput(rel, f"{f}.action_type", f"{shown(kind)!r} is not an action type the official "
                                            "converter reads (CLICK, MOVE_TO, DRAG_TO, SCROLL, TYPE, "
                                            "PRESS, HOTKEY, KEY_DOWN, KEY_UP, MOUSE_DOWN, MOUSE_UP, "
                                            "AFTER_LAST_ACTION)", item)
