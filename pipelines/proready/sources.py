"""Source manifest of long videos with their native annotations (StreamReady §4.2, App. C).

Why native annotations matter: App. C anchors every evidence window on "multimodal cues from
native annotations (actions, interactions, scene changes, or subtitle segments)", and our offline
template generator (:mod:`pipelines.proready.templates`) writes questions from them. So the
manifest carries, per video, any of:

* ``steps`` — procedural step boundaries ``{start, end, label}`` (→ SSR),
* ``actions`` — action boundaries / narrations ``{start, end, label}`` (→ REC from repeated labels),
* ``scenes`` — scene boundaries ``{start, end, label}`` (→ CRR "what the next shot reveals"),
* ``subtitles`` — ``{start, end, text}`` (cues for the LLM path and coarse spans),
* ``causal`` — ``{cause: {start, end, label}, effect: {start, end, label}}`` (→ CTD),
* ``goal`` — the goal-completion segment ``{start, end, label}`` (→ GSD),
* ``clues`` — manually authored questions ``{task, question, answer, start, end[, ask_time]}``
  (App. C: "complex tasks (CRR and CTD) include manually authored questions").

The manifest is ``manifest.yaml`` (``videos:`` list) or JSONL (one video per line) under the
source root. Bad input becomes a :class:`~core.errors.BadInput` naming the file and
the field (``annotations.actions[3].end``): an unreadable video, an annotation that ends past the
video's real (decodable) end, an inverted span, a duplicate id. A video's annotations are checked
against :func:`core.media.probe.probe_video`'s real duration, never the header's.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import tempfile
from abc import ABC
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from apache_beam.io.filesystems import FileSystems

from core.errors import BadInput, Rejection
from core.media.probe import VideoInfo, probe_video, reject_truncated
from core.text import json_value, utf8_lines, utf8_text, yaml_value
from pipelines.common.sources import ItemRef, ReaderConfig, SourceItem, SourceReader, safe_relative
from schemas.proready import TASK_TYPES

BENCHMARK = "proready"
VIDEOS = "videos"  # the accounting environment of source videos
SPAN_KINDS = ("steps", "actions", "scenes", "subtitles")
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


@dataclass(frozen=True)
class Span:
    """One native annotation interval (seconds)."""

    start: float
    end: float
    label: str
    field: str  # where it came from, e.g. "annotations.steps[2]"


@dataclass(frozen=True)
class Clue:
    """A manually authored question with the span of its clue (App. C)."""

    task: str
    question: str
    answer: str
    span: Span
    ask_time: float | None


@dataclass(frozen=True)
class VideoSource:
    """A readable video with validated native annotations."""

    video_id: str
    video_file: str  # relative to the source root
    local_path: str
    sha256: str
    duration_s: float
    fps: float
    source: str
    manifest_file: str
    spans: dict[str, tuple[Span, ...]]
    causal: tuple[tuple[Span, Span], ...]
    goals: tuple[Span, ...]
    clues: tuple[Clue, ...]
    probe_note: str = ""

    def span_list(self, kind: str) -> tuple[Span, ...]:
        return self.spans.get(kind, ())


def _num(value: Any, src: str, field: str, item_id: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise BadInput(src, field, f"must be a finite number of seconds, got {value!r}", item_id)
    return float(value)


class VideoReader(SourceReader, ABC):
    """What every ProReady video source shares, whoever wrote its annotations: the video is
    probed for its real, decodable duration (never the header's), and every annotation span is
    checked against it. The custom manifest (:class:`ProReadyReader`) and the video datasets in
    their released layouts (:class:`pipelines.proready.native.NativeReader`) extend it, so a
    span past the end of a short download is rejected by the same rule, naming the file and
    field the span came from.

    ``config.extra``: ``end_tolerance_s`` (an annotation may end this far past the real end,
    e.g. rounding to whole seconds; it is then clipped; default 0.5 s).
    """

    environment = VIDEOS
    benchmark = BENCHMARK

    def __init__(self, root: str, config: ReaderConfig | None = None) -> None:
        super().__init__(root, config)
        self.end_tolerance_s = float(self.config.extra.get("end_tolerance_s", 0.5))

    def probe(self, rel: str, vid: str, shown: str | None = None) -> tuple[str, str, VideoInfo]:
        """(path the decoders can open, sha256 of the bytes, what the video really holds) of the
        video at ``rel``; BadInput naming ``shown`` (default ``rel``: how the release names the
        file) when it is missing, unreadable or truncated."""
        name = shown or rel
        full = self.path(rel)
        local, tmp, sha = self._local_copy(full, name, vid)
        try:
            info = probe_video(local, source_file=name)
            reject_truncated(info, name, "frames")
        except BadInput as err:
            raise BadInput(name, err.field, err.reason, vid) from err
        finally:
            if tmp:
                os.unlink(tmp)
        return (full if tmp else local), sha, info

    def _local_copy(self, full: str, rel: str, vid: str) -> tuple[str, str | None, str]:
        """(path OpenCV can open, temp file to delete or None, sha256 of the bytes)."""
        h = hashlib.sha256()
        if os.path.isfile(full):
            with open(full, "rb") as fh:
                for chunk in iter(lambda: fh.read(1 << 20), b""):
                    h.update(chunk)
            return full, None, h.hexdigest()
        if "://" not in full:
            raise BadInput(rel, "path", f"video file not found under the source root: {rel}", vid)
        try:
            with FileSystems.open(full) as src, tempfile.NamedTemporaryFile(
                suffix=os.path.splitext(rel)[1], delete=False
            ) as dst:
                for chunk in iter(lambda: src.read(1 << 20), b""):
                    h.update(chunk)
                    dst.write(chunk)
        except Exception as exc:  # noqa: BLE001 - any I/O failure is bad input for this video
            text = str(exc).replace(full, rel)  # no host paths in a release
            raise BadInput(rel, "path", f"cannot read: {type(exc).__name__}: {text}", vid) from exc
        return dst.name, dst.name, h.hexdigest()

    def checked_span(self, start: float, end: float, label: str, *, file: str, field: str,
                     start_field: str, end_field: str, duration: float, vid: str,
                     claimed: float | None = None, note: str = "", point: bool = False) -> Span:
        """A span on the video's real timeline: not negative, ending after it starts, starting
        before the decoded end and ending at most ``end_tolerance_s`` after it (then clipped);
        else BadInput naming ``file`` and the offending field. ``claimed``: the duration the
        annotation file states, named when it claims more than the file holds (a download cut
        short of its annotation); ``note`` is added to a reason (how the times were derived);
        ``point``: the annotation is a moment (``start``) whose span the caller derived, so a
        moment at or after the end is named by its own time."""
        said = (f"; the annotation claims {claimed} s" if claimed is not None
                and claimed > duration + self.end_tolerance_s else "") + (f"; {note}" if note else "")
        if start < 0:
            raise BadInput(file, start_field, f"negative time {start}s", vid)
        if point and start >= duration:
            raise BadInput(file, start_field, f"annotated at {start}s, at/after the end of the "
                                              f"video ({duration}s decodable{said})", vid)
        if end <= start:
            raise BadInput(file, end_field, f"end {end}s is not after start {start}s", vid)
        if end > duration + self.end_tolerance_s:
            raise BadInput(file, end_field, f"annotation ends at {end}s, past the end of the video "
                                            f"({duration}s decodable{said})", vid)
        if start >= duration:
            raise BadInput(file, start_field, f"annotation starts at {start}s, at/after the end of "
                                              f"the video ({duration}s{said})", vid)
        return Span(round(start, 3), round(min(end, duration), 3), label, field)


class ProReadyReader(VideoReader):
    """Lists the videos of a manifest; ``load`` probes each video and validates its annotations.

    ``config.extra``: ``manifest`` (file name, default ``manifest.yaml``), ``end_tolerance_s``
    (:class:`VideoReader`).
    """

    def __init__(self, root: str, config: ReaderConfig | None = None) -> None:
        super().__init__(root, config)
        self.manifest = str(self.config.extra.get("manifest", "manifest.yaml"))

    def vocabulary(self) -> list[str]:
        """No label set (questions and answers come from the annotations); the manifest is read
        all the same, so one that cannot be read stops the build before it starts
        (:func:`pipelines.common.sources.preflight`)."""
        self._entries()
        return []

    # -- listing ---------------------------------------------------------------------------------
    def _entries(self) -> list[Any]:
        """The manifest's video entries (a BadInput in place of a JSONL line that cannot be read);
        a manifest that cannot be read at all is a BadInput for the whole source."""
        data = self.read_bytes(self.manifest, field="manifest")
        if self.manifest.endswith((".jsonl", ".ndjson")):
            out: list[Any] = []
            for n, line in utf8_lines(data, self.manifest):
                if isinstance(line, BadInput):
                    out.append(BadInput(self.manifest, f"line {n}", line.reason))
                    continue
                try:
                    out.append(json_value(line, self.manifest, field=f"line {n}", one_line=True))
                except BadInput as err:
                    out.append(err)
            return out
        doc = yaml_value(utf8_text(data, self.manifest, field="manifest"), self.manifest)
        if not isinstance(doc, dict) or not isinstance(doc.get("videos"), list):
            raise BadInput(self.manifest, "videos", "manifest must be a mapping with a 'videos' list")
        return list(doc["videos"])

    def enumerate(self) -> Iterator[ItemRef | Rejection]:
        entries = self._entries()
        indices: dict[str, list[int]] = {}
        for i, entry in enumerate(entries):
            if isinstance(entry, dict) and isinstance(entry.get("video_id"), str):
                indices.setdefault(entry["video_id"], []).append(i)
        for i, entry in enumerate(entries):
            where = f"videos[{i}]"
            if isinstance(entry, BadInput):
                yield self.rejection(entry, item_id=f"{where}", stage="listing")
                continue
            vid = entry.get("video_id") if isinstance(entry, dict) else None
            if not isinstance(vid, str) or not _ID.match(vid):
                err = BadInput(self.manifest, f"{where}.video_id",
                               f"missing or not a plain id ([A-Za-z0-9_.-]): {vid!r}")
                yield self.rejection(err, item_id=where, stage="listing")
                continue
            if len(indices[vid]) > 1:  # which entry describes the video cannot be told
                shared = ", ".join(f"videos[{j}]" for j in indices[vid])
                err = BadInput(self.manifest, f"{where}.video_id", f"video id {vid!r} is given by "
                               f"{shared}: every entry sharing it is rejected", vid)
                yield self.rejection(err, item_id=vid, stage="listing")
                continue
            yield ItemRef(VIDEOS, vid, {"entry": entry, "index": i})

    # -- loading ---------------------------------------------------------------------------------
    def load(self, ref: ItemRef) -> SourceItem:
        video = self.load_video(ref.payload["entry"], ref.payload["index"])
        return SourceItem(
            environment=VIDEOS, source_id=video.video_id, frames=[], category="", start_frame=0,
            reference_frame=0, goal_frames=[], metadata={"video": video},
            source_files=[(video.video_file, video.sha256)],
        )

    def load_video(self, entry: dict[str, Any], index: int) -> VideoSource:
        vid = entry["video_id"]
        where = f"videos[{index}]"
        raw = entry.get("path")
        if not isinstance(raw, str) or not raw:
            raise BadInput(self.manifest, f"{where}.path", "missing video path", vid)
        try:  # an absolute or ../ path read a file that is no part of the dataset
            rel = safe_relative(raw, self.manifest, f"{where}.path")
        except BadInput as err:
            err.item_id = vid
            raise
        why = self.unreadable_link(rel)  # a dangling link or a loop is not "not found"
        if why is not None:
            raise BadInput(rel, "path", why, vid)
        local, sha, info = self.probe(rel, vid)
        duration = round(info.duration_s, 3)
        ann = entry.get("annotations") or {}
        if not isinstance(ann, dict):
            raise BadInput(self.manifest, f"{where}.annotations", "must be a mapping", vid)
        known = set(SPAN_KINDS) | {"causal", "goal", "clues"}
        unknown = sorted(set(ann) - known)
        if unknown:
            raise BadInput(self.manifest, f"{where}.annotations",
                           f"unknown annotation kinds {unknown}; known: {sorted(known)}", vid)
        spans = {k: tuple(self._spans(ann.get(k), f"{where}.annotations.{k}", duration, vid))
                 for k in SPAN_KINDS}
        causal = []
        for j, pair in enumerate(self._list(ann, "causal", f"{where}.annotations", vid)):
            f = f"{where}.annotations.causal[{j}]"
            if not isinstance(pair, dict) or not {"cause", "effect"} <= set(pair):
                raise BadInput(self.manifest, f, "needs 'cause' and 'effect' spans", vid)
            cause = self._span(pair["cause"], f"{f}.cause", duration, vid)
            effect = self._span(pair["effect"], f"{f}.effect", duration, vid)
            if effect.start < cause.start:
                raise BadInput(self.manifest, f"{f}.effect.start",
                               f"effect starts at {effect.start}s, before its cause ({cause.start}s)", vid)
            causal.append((cause, effect))
        goal = ann.get("goal")
        goals = self._spans([goal] if isinstance(goal, dict) else goal,
                            f"{where}.annotations.goal", duration, vid)
        clues = []
        for j, c in enumerate(self._list(ann, "clues", f"{where}.annotations", vid)):
            f = f"{where}.annotations.clues[{j}]"
            if not isinstance(c, dict):
                raise BadInput(self.manifest, f, "must be a mapping", vid)
            task = c.get("task", "crr")
            if task not in TASK_TYPES:
                raise BadInput(self.manifest, f"{f}.task", f"unknown task {task!r}; known {TASK_TYPES}", vid)
            for key in ("question", "answer"):
                if not isinstance(c.get(key), str) or not c[key].strip():
                    raise BadInput(self.manifest, f"{f}.{key}", "missing or empty", vid)
            span = self._span({"start": c.get("start"), "end": c.get("end"), "label": c["answer"]},
                              f, duration, vid)
            ask = c.get("ask_time")
            ask_t = None if ask is None else _num(ask, self.manifest, f"{f}.ask_time", vid)
            clues.append(Clue(task, c["question"].strip(), c["answer"].strip(), span, ask_t))
        return VideoSource(
            video_id=vid, video_file=rel, local_path=local, sha256=sha, duration_s=duration,
            fps=info.fps, source=str(entry.get("source", "")), manifest_file=self.manifest,
            spans=spans, causal=tuple(causal), goals=tuple(goals), clues=tuple(clues),
            probe_note=info.note,
        )

    def _list(self, ann: dict[str, Any], kind: str, where: str, vid: str) -> list[Any]:
        """``ann[kind]`` as a list (absent: none); any other value is BadInput — a number there
        was iterated and ended the run with a TypeError."""
        raw = ann.get(kind)
        if raw is None:
            return []
        if not isinstance(raw, list):
            raise BadInput(self.manifest, f"{where}.{kind}", f"must be a list, got {type(raw).__name__}",
                           vid)
        return raw

    def _spans(self, raw: Any, field: str, duration: float, vid: str) -> list[Span]:
        if raw is None:
            return []
        if not isinstance(raw, list):
            raise BadInput(self.manifest, field, "must be a list of {start, end, label}", vid)
        out = [self._span(s, f"{field}[{j}]", duration, vid) for j, s in enumerate(raw)]
        return sorted(out, key=lambda s: (s.start, s.end, s.label))

    def _span(self, raw: Any, field: str, duration: float, vid: str) -> Span:
        if not isinstance(raw, dict):
            raise BadInput(self.manifest, field, "must be a mapping {start, end, label}", vid)
        start = _num(raw.get("start"), self.manifest, f"{field}.start", vid)
        end = _num(raw.get("end"), self.manifest, f"{field}.end", vid)
        label = raw.get("label", raw.get("text"))
        if not isinstance(label, str) or not label.strip():
            raise BadInput(self.manifest, f"{field}.label", "missing or empty label/text", vid)
        return self.checked_span(start, end, label.strip(), file=self.manifest, field=field,
                                 start_field=f"{field}.start", end_field=f"{field}.end",
                                 duration=duration, vid=vid)
