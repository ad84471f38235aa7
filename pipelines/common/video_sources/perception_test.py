"""The Perception Test (Pătrăucean et al., NeurIPS 2023 Datasets and Benchmarks, "Perception Test:
A Diagnostic Benchmark for Multimodal Video Models") in its released layout: short real-world
videos filmed from scripts by crowd-sourced participants, densely annotated; this reader maps the
temporal action segments.

Layout (the zips of google-deepmind/perception_test ``README.md`` "Download the data and
annotations" unpacked into one folder; field names from the official notebook
``data_visualisation.ipynb`` and the challenge's ActionFormer loader; docs/video_sources.md
cites every field)::

    all_train.json, all_valid.json   {<video_id>: {metadata{split, video_id, frame_rate,
                                      num_frames, resolution, ...}, action_localisation[{id,
                                      label, label_id, parent_objects, timestamps[start, end],
                                      frame_ids[start, end]}], sound_localisation[...],
                                      object_tracking[...], point_tracking[...],
                                      mc_question[...], grounded_question[...]}}
                                     (train_annotations.zip, valid_annotations.zip)
    all_test.json                    (test_annotations.zip; optional; its action segments are
                                      withheld for the challenge server)
    sample.json                      (sample_annotations.zip, not read)
    <task>_<split>.json, *_id_list.csv   (the challenge tracks' own files, e.g.
                                      mc_question_valid.json; not read)
    videos/<video_id>.mp4            (train_videos.zip, valid_videos.zip, test_videos.zip)
    audios/<video_id>.wav            (the *_audios.zip files, not read)

The annotation JSONs may also sit in ``annotations/`` (the official notebook unzips there); a
second copy of one beside the first is a file outside the layout.

``timestamps`` are microseconds: the README's field table says "in ms", but the official
notebook divides them by ``1e6`` to plot seconds, and so does the challenge's loader
(``[x/1e6 for x in act['timestamps']]``). The video's duration is ``num_frames / frame_rate``
(``metadata``); without both it is unknown (``None``). The split is the file's.

Every action segment is an ``action`` span: ``label`` the class lower-cased (repeats compare
equal), ``text`` the class as released ("Putting something into something", a templated
class), ``phrase`` "someone starts putting something into something". Segments of the class
``Other`` (an action that is none of the named classes) are left out of the spans: a request to
watch for "other" would name nothing; a video that has only those is filtered. Sound segments
are not read (StreamVibe plans from actions).

No class list is released: ``label_id`` and ``label`` stand side by side on every segment. The
reader checks them against each other over all annotation files: a segment whose ``label_id``
the other segments give another class name (or whose class they give another id) is bad input.
"""

from __future__ import annotations

import math
import posixpath
import re
from collections import Counter
from collections.abc import Iterator
from typing import Any

from core.errors import BadInput
from pipelines.common.video_sources.base import (
    NativeFiltered,
    NativeSpan,
    NativeVideo,
    VideoDataset,
    listed_once,
    repeated_key,
    text_field,
)

SPLITS = {"all_train.json": "train", "all_valid.json": "val", "all_test.json": "test"}
# what ``metadata.split`` says for each file (README "Video metadata": one of train, valid, test)
NATIVE_SPLIT = {"all_train.json": "train", "all_valid.json": "valid", "all_test.json": "test"}
TEST = "all_test.json"
ANNOTATIONS = "annotations"
ACTIONS = "action_localisation"
VIDEO_ROOT = "videos"
AUDIO_ROOT = "audios"
OTHER = "other"  # the class of an action no named class describes (module doc)
TOLERANCE_S = 0.5  # as base.interval: an end this far past the annotated duration is rounding
NOT_READ = ("sample.json",)
_CHALLENGE_FILE = re.compile(r"(mc_question|grounded_question|action_localisation|sound_localisation"
                             r"|object_tracking|point_tracking)_(train|valid|test)\.json|[\w.-]+_id_list\.csv")
TASK = "a short scripted real-world scene"
TOPIC = "what happens in the scene"
CUP_TASK = "a cups game: an object hidden under one of several cups, then the cups moved around"
CUP_TOPIC = "where the hidden object is"


def _short(value: Any) -> str:
    """``value`` as a rejection may quote it: its repr (bytes that are not UTF-8 escaped), cut."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def microseconds(value: Any, file: str, where: str, item: str) -> float:
    """A timestamp of the release (microseconds: module doc) in seconds, rounded to the
    millisecond; BadInput naming file and field when it is not a finite, non-negative number."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise BadInput(file, where, f"must be a number of microseconds, got {_short(value)}", item)
    try:
        x = float(value)
    except OverflowError:  # an integer of hundreds of digits: JSON reads it, no float holds it
        raise BadInput(file, where, f"not finite: an integer of {len(str(abs(value)))} digits",
                       item) from None
    if not math.isfinite(x):
        raise BadInput(file, where, f"not finite: {value!r}", item)
    if x < 0:
        raise BadInput(file, where, f"negative time {x:g} µs", item)
    return round(x / 1e6, 3)


def _number(value: Any, file: str, where: str, item: str, *, positive: bool) -> float:
    """A finite number (``> 0`` if ``positive``, else ``>= 0``) of the metadata."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise BadInput(file, where, f"must be a number, got {_short(value)}", item)
    try:
        x = float(value)
    except OverflowError:
        raise BadInput(file, where, f"not finite: an integer of {len(str(abs(value)))} digits",
                       item) from None
    if not math.isfinite(x):
        raise BadInput(file, where, f"not finite: {value!r}", item)
    if x < 0 or (positive and x == 0):
        raise BadInput(file, where, f"must be {'positive' if positive else 'non-negative'}, got "
                                    f"{value!r}", item)
    return x


def _writable(text: str) -> bool:
    """``text`` can be written as UTF-8 (no lone surrogate: a byte that was not UTF-8, or a
    ``\\udXXX`` escape of the JSON)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _majority(counts: Counter[Any]) -> Any:
    """The value held by more segments than any other, else ``None`` (a tie: nobody can tell)."""
    top = counts.most_common(2)
    if not top or (len(top) == 2 and top[0][1] == top[1][1]):
        return None
    return top[0][0]


class PerceptionTest(VideoDataset):
    name = "perception_test"
    title = "Perception Test"

    def _annotation(self, name: str) -> str | None:
        """Where annotation file ``name`` lies: the root, else ``annotations/`` (module doc)."""
        for rel in (name, f"{ANNOTATIONS}/{name}"):
            if self.exists(rel):
                return rel
        return None

    def annotation_files(self) -> list[str]:
        return [rel for rel in (self._annotation(n) for n in SPLITS) if rel]

    def layout_problem(self, relative: str) -> tuple[str, str] | None:
        parts = relative.split("/")
        if len(parts) == 1 or (len(parts) == 2 and parts[0] == ANNOTATIONS):
            name = parts[-1]
            if name in SPLITS:
                if self._annotation(name) == relative:
                    return None
                return relative, f"a second copy of {name} (the one at the root is read)"
            if name in NOT_READ or _CHALLENGE_FILE.fullmatch(name):
                return None
        if parts[0] == VIDEO_ROOT:
            if len(parts) == 2 and parts[1].endswith(".mp4"):
                return None
            return relative, f"not a video at {VIDEO_ROOT}/<video_id>.mp4"
        if parts[0] == AUDIO_ROOT:
            if len(parts) == 2 and parts[1].endswith(".wav"):
                return None
            return relative, f"not an audio file at {AUDIO_ROOT}/<video_id>.wav"
        return (relative if len(parts) == 1 or parts[0] == ANNOTATIONS else f"{parts[0]}/",
                "not part of the Perception Test layout (all_train.json, all_valid.json, "
                f"all_test.json, {ANNOTATIONS}/, {VIDEO_ROOT}/, {AUDIO_ROOT}/)")

    # -- whole-source files --------------------------------------------------------------------
    def check(self) -> None:
        """Every annotation file the listing reads, read as a whole: one that is not JSON, not an
        object, or none at all stops the build here, naming the file."""
        if not self._docs():
            raise BadInput("all_train.json", "file", "missing: none of all_train.json, "
                                                     "all_valid.json, all_test.json is at the "
                                                     f"dataset root or in {ANNOTATIONS}/")

    def _docs(self) -> dict[str, dict[str, Any]]:
        """Annotation file (relative) → its videos, for the files that are there, in split order."""
        out = {}
        for name in SPLITS:
            rel = self._annotation(name)
            if rel is None:
                continue
            doc = self.load_json(rel)
            if not isinstance(doc, dict):
                raise BadInput(rel, "json", "must be an object {\"<video_id>\": {metadata, "
                                            f"{ACTIONS}, ...}}}}")
            out[rel] = doc
        return out

    def _videos_on_disk(self) -> dict[str, list[str]]:
        """Video id → its files ``videos/<video_id>.mp4`` (the release's only place and kind)."""
        out: dict[str, list[str]] = {}
        for rel in self.match(f"{VIDEO_ROOT}/*.mp4"):
            out.setdefault(posixpath.splitext(posixpath.basename(rel))[0], []).append(rel)
        return out

    # -- videos --------------------------------------------------------------------------------
    def videos(self) -> Iterator[NativeVideo | NativeFiltered | BadInput]:
        docs = self._docs()
        files = self._videos_on_disk()
        listed: dict[str, list[str]] = {}
        for rel, doc in docs.items():
            for key in doc:
                listed.setdefault(key, []).append(rel)
        vocabulary = self._vocabulary(docs)
        for key in sorted(listed):
            try:
                self.checked_id(key, listed[key][0], key)
                if not _writable(key):  # a "\\udXXX" escape of the JSON: no release can write it
                    escaped = key.encode("utf-8", "backslashreplace").decode("utf-8")
                    raise BadInput(listed[key][0], escaped, "the video id holds a lone surrogate "
                                                            "(a \\udXXX escape), not text",
                                   self.item(escaped))
                yield self._video(key, listed[key], docs, vocabulary, files)
            except BadInput as err:
                yield err
        yield from self.unannotated(files, set(listed))

    def _vocabulary(self, docs: dict[str, dict[str, Any]]) -> tuple[dict[int, Counter[str]],
                                                                     dict[str, Counter[int]]]:
        """How many segments of all files give each ``label_id`` each class name, and each class
        name each ``label_id`` (segments whose fields are malformed are left out: their own
        video is rejected for them)."""
        names: dict[int, Counter[str]] = {}
        ids: dict[str, Counter[int]] = {}
        for doc in docs.values():
            for entry in doc.values():
                segments = entry.get(ACTIONS) if isinstance(entry, dict) else None
                for seg in segments if isinstance(segments, list) else []:
                    if not isinstance(seg, dict):
                        continue
                    label, label_id = seg.get("label"), seg.get("label_id")
                    if not isinstance(label, str) or not label.strip() or not _writable(label) \
                            or isinstance(label_id, bool) or not isinstance(label_id, int):
                        continue
                    names.setdefault(label_id, Counter())[label.strip()] += 1
                    ids.setdefault(label.strip(), Counter())[label_id] += 1
        return names, ids

    def _video(self, key: str, in_files: list[str], docs: dict[str, dict[str, Any]],
               vocabulary: tuple[dict[int, Counter[str]], dict[str, Counter[int]]],
               files: dict[str, list[str]]) -> NativeVideo | NativeFiltered:
        item = self.item(key)
        rel = in_files[0]
        for f in in_files:
            listed_once(docs[f], key, f, item)
        if len(in_files) > 1:
            raise BadInput(in_files[1], key, f"video {key} is also in {in_files[0]}; a video belongs "
                                             "to one split", item)
        entry = docs[rel][key]
        if not isinstance(entry, dict):
            raise BadInput(rel, key, f"must be an object {{metadata, {ACTIONS}, ...}}", item)
        twice = repeated_key(entry, key)
        if twice:
            raise BadInput(rel, twice, "key appears twice in this object (JSON keeps only the last)",
                           item)
        name = posixpath.basename(rel)
        duration, cups = self._metadata(entry, key, rel, name, item)
        segments = entry.get(ACTIONS)
        if name == TEST and not segments:
            self._locate(files, key, rel, item)
            return NativeFiltered(item, rel, "test split: action segments withheld",
                                  f"{key}.{ACTIONS} is empty or absent: the test split's answers "
                                  "are kept for the challenge server")
        if not isinstance(segments, list):
            what = "missing" if segments is None else f"must be a list, got {type(segments).__name__}"
            raise BadInput(rel, f"{key}.{ACTIONS}", f"{what} (the video's action segments; an empty "
                                                    "list when it has none)", item)
        spans, others = [], 0
        for k, seg in enumerate(segments):
            span = self._span(seg, f"{key}.{ACTIONS}[{k}]", rel, item, duration, vocabulary)
            if span is None:
                others += 1
            else:
                spans.append(span)
        path = self._locate(files, key, rel, item)
        if not segments:
            return NativeFiltered(item, rel, "no action segments", f"{key}.{ACTIONS} is empty")
        if not spans:
            return NativeFiltered(item, rel, "no named action",
                                  f"all {others} of {key}.{ACTIONS} are of the class Other")
        return NativeVideo(
            dataset=self.name, video_id=key, video=path, split=SPLITS[name], environment="physical",
            task=CUP_TASK if cups else TASK, topic=CUP_TOPIC if cups else TOPIC,
            annotated_duration_s=duration, annotation_file=rel, spans=tuple(spans))

    def _metadata(self, entry: dict[str, Any], key: str, rel: str, name: str, item: str
                  ) -> tuple[float | None, bool]:
        """(annotated duration ``num_frames / frame_rate`` or None, whether a cups game), with
        ``video_id`` and ``split`` checked against the key and the file."""
        meta = entry.get("metadata")
        where = f"{key}.metadata"
        if not isinstance(meta, dict):
            what = "missing" if meta is None else f"must be an object, got {type(meta).__name__}"
            raise BadInput(rel, where, f"{what} (the video's metadata: video_id, split, num_frames, "
                                       "frame_rate, ...)", item)
        vid = meta.get("video_id")
        if vid is not None and vid != key:
            raise BadInput(rel, f"{where}.video_id", f"{_short(vid)} is not the video's key: which "
                                                     "video is meant is unknown", item)
        split = meta.get("split")
        if split is not None and split != NATIVE_SPLIT[name]:
            raise BadInput(rel, f"{where}.split", f"{_short(split)}, but the video is in {name} "
                                                  f"(split {NATIVE_SPLIT[name]!r})", item)
        cups = meta.get("is_cup_game")
        if cups is not None and not isinstance(cups, bool | int):
            raise BadInput(rel, f"{where}.is_cup_game", f"must be true or false, got {_short(cups)}",
                           item)
        frames, rate = meta.get("num_frames"), meta.get("frame_rate")
        if frames is None or rate is None:
            return None, bool(cups)
        n = _number(frames, rel, f"{where}.num_frames", item, positive=False)
        fps = _number(rate, rel, f"{where}.frame_rate", item, positive=True)
        duration = n / fps
        if not math.isfinite(duration):
            raise BadInput(rel, f"{where}.num_frames", f"{n:g} frames at {fps:g} fps is no duration",
                           item)
        return round(duration, 3), bool(cups)

    def _span(self, seg: Any, where: str, rel: str, item: str, duration: float | None,
              vocabulary: tuple[dict[int, Counter[str]], dict[str, Counter[int]]]) -> NativeSpan | None:
        """One action segment as a span, ``None`` for the class Other (module doc)."""
        if not isinstance(seg, dict):
            raise BadInput(rel, where, "must be an object {id, label, label_id, timestamps, ...}", item)
        label = text_field(seg.get("label"), rel, f"{where}.label", item)
        if not _writable(label):
            raise BadInput(rel, f"{where}.label", f"not valid UTF-8: {_short(label)}", item)
        label_id = seg.get("label_id")
        if isinstance(label_id, bool) or not isinstance(label_id, int) or label_id < 0:
            raise BadInput(rel, f"{where}.label_id", f"must be a class id (an integer >= 0), got "
                                                     f"{_short(label_id)}", item)
        names, ids = vocabulary
        named, numbered = _majority(names.get(label_id, Counter())), _majority(ids.get(label, Counter()))
        if named != label:
            others = ", ".join(f"{n!r} ({c})" for n, c in sorted(names[label_id].items()) if n != label)
            raise BadInput(rel, f"{where}.label_id", f"label_id {label_id} names {label!r} here, but "
                                                     f"other segments give it {others}: no class list "
                                                     "is released to tell which is right", item)
        if numbered != label_id:
            others = ", ".join(f"{i} ({c})" for i, c in sorted(ids[label].items()) if i != label_id)
            raise BadInput(rel, f"{where}.label_id", f"{label!r} has label_id {label_id} here, but "
                                                     f"other segments give it {others}", item)
        stamps = seg.get("timestamps")
        at = f"{where}.timestamps"
        if not isinstance(stamps, list) or len(stamps) != 2:
            raise BadInput(rel, at, f"must be [start, end] in microseconds, got {_short(stamps)}", item)
        s = microseconds(stamps[0], rel, f"{at}[0]", item)
        e = microseconds(stamps[1], rel, f"{at}[1]", item)
        if e < s:
            raise BadInput(rel, at, f"end {e} s is before start {s} s", item)
        if duration is not None and e > duration + TOLERANCE_S:
            raise BadInput(rel, at, f"span [{s}, {e}] s ends past the annotated duration ({duration} s "
                                    "= metadata.num_frames / metadata.frame_rate)", item)
        if label.lower() == OTHER:
            return None
        clause = label.lower()
        return NativeSpan("action", s, e, clause, label, f"someone starts {clause}", f"{rel}: {at}",
                          (("label_id", str(label_id)), ("state", f"someone is {clause}")))

    def _locate(self, files: dict[str, list[str]], key: str, rel: str, item: str) -> str:
        """The video's file ``videos/<video_id>.mp4``, else BadInput naming the annotation."""
        if key not in files:
            raise BadInput(rel, key, f"video {key} is not on disk (looked for "
                                     f"{VIDEO_ROOT}/{key}.mp4)", item)
        return self.locate(files, key, VIDEO_ROOT, rel, key)
