"""HoloAssist (Wang et al., ICCV 2023, "HoloAssist: an Egocentric Human Interaction Dataset for
Interactive AI Assistants in the Real World") in its released layout: a task performer wearing a
HoloLens 2 does a physical task (set up a camera, assemble a stool, fix a printer) while a remote
instructor watches the first-person video and guides them by voice; actions are annotated at two
grains, with the performer's mistakes and the instructor's interventions.

Layout (the official README, https://holoassist.github.io/data_links/README.md, "Dataset
Structure" and "Annotation Structure"; the download names as the project page links them —
``https://hl2data.z5.web.core.windows.net/holoassist-data-release/data-annotation-trainval-v1_1.json``,
``https://holoassist.github.io/label_files/data-splits-v1_2.zip``, ``video_pitch_shifted.tar``,
``video_compress.tar`` —, quoted alike by many stored loaders; docs/video_sources.md cites every
field)::

    data-annotation-trainval-v1_1.json  [{video_name, taskType, taskId, batch,
                                         videoMetadata{duration{raw, seconds}, video{fps, ...}},
                                         events[{id, label, start, end, type, attributes{...}}]}]
                                        (also read under the name several loaders give it,
                                        data-annnotation-trainval-v1_1.json)
    {train,val,test}-v1_2.txt           one video_name a line (data-splits-v1_2.zip unpacked;
                                        also read inside data-splits-v1_2/, and the older
                                        {train,val,test}-v1.txt when no v1_2 list is there)
    data-splits-v1_2.zip, video_pitch_shifted.tar, video_compress.tar   (the downloads, not read)
    <video_name>/Export_py/Video_pitchshift.mp4   the video (the audio pitch-shifted)
    <video_name>/Export_py/Video_compress.mp4     the width-256 copy, read when the pitch-shifted
                                                  video is not there
    <video_name>/Export_py/**                     the other streams (AhatDepth/, Eyes/, Hands/,
                                                  Head/, IMU/, Video/): not read

Events (README "Annotation Structure"): ``Coarse grained action`` (``Action sentence``, ``Verb``,
``Adjective``, ``Noun``) becomes a ``step`` span; ``Fine grained action`` (``Verb``, ``Noun``,
``Adjective``, ``adverbial``, ``Action Correctness``, ``Incorrect Action Explanation``, ``Incorrect
Action Corrected by``) an ``action`` span labelled "<verb> <noun>", its correctness and
explanation kept in the span's ``extra``; ``Conversation`` (``Conversation Purpose``,
``Transcription``) is no span: an instructor's intervention — the purposes the authors'
benchmark code counts as interventions (confirming the previous action, correcting the wrong
action, a follow-up instruction) — is kept in the ``extra`` of the coarse-grained step that holds
it, as that code windows interventions inside coarse-grained actions. ``Narration`` (one long-form
description of the whole video) is not read. Times are seconds from the video's start.

The split comes from the split lists; the annotation file covers train and val ("trainval"), so
a recording a split list names without an annotation entry (the test split's) is an input
filtered by the rule ``not annotated``, and an annotated video on no split list is filtered (``in
no split list``: the authors' benchmark code skips such videos). A video with no coarse- or
fine-grained action is filtered (``no actions annotated``). Not confirmed from a primary source
(docs/video_sources.md lists them): the inside of ``data-splits-v1_2.zip``, where the video
archives are meant to be unpacked (their members start at ``<video_name>/``, as the README's
tree does), the second spelling of the annotation file, and the test annotations (none found).
"""

from __future__ import annotations

import contextlib
import posixpath
import re
from collections.abc import Iterator
from typing import Any

from core.errors import BadInput
from core.text import utf8_text
from pipelines.common.video_sources.base import (
    NativeFiltered,
    NativeSpan,
    NativeVideo,
    VideoDataset,
    repeated_key,
    seconds,
    sentence_phrase,
    text_field,
)

ANNOTATIONS = ("data-annotation-trainval-v1_1.json", "data-annnotation-trainval-v1_1.json")
SPLITS = ("train", "val", "test")
VERSIONS = ("v1_2", "v1")  # the newest split lists present are read
ARCHIVES = ("data-splits-v1_2.zip", "data-splits-v1.zip", "video_pitch_shifted.tar", "video_compress.tar")
EXPORT = "Export_py"
UNPACKED = ("video_pitch_shifted", "video_compress")  # the archives' names, as a folder
VIDEO_FILES = ("Video_pitchshift.mp4", "Video_compress.mp4")  # in order of preference
COARSE, FINE, CONVERSATION, NARRATION = ("coarse grained action", "fine grained action",
                                         "conversation", "narration")
# Conversation purposes the authors' benchmark code leaves out of its intervention classes; the
# rest of the instructor's utterances (confirming, correcting, following up) are interventions
NOT_INTERVENTION = ("other", "adjusting", "describing high-level instruction", "remarks",
                    "ask questions", "instructor-reply-to-student", "student-start-conversation")
PERFORMER = "the task performer"
NEUTRAL_TASK = "a physical task guided by an instructor"
_RAW_DURATION = re.compile(r"(\d+):([0-5]?\d):(\d+(?:\.\d+)?)")


def _none(value: str) -> bool:
    """The annotation tool writes ``"none"`` for an attribute left empty."""
    return not value or value.lower() == "none"


def _words(value: str) -> str:
    """A Verb / Noun / Adjective as words: ``"battery_door"`` → "battery door"."""
    return " ".join(value.replace("_", " ").split()).lower()


def split_files(version: str) -> list[str]:
    return [f"{s}-{version}.txt" for s in SPLITS]


class HoloAssist(VideoDataset):
    name = "holoassist"
    title = "HoloAssist"

    # -- the files ------------------------------------------------------------------------------
    def _annotation(self) -> str:
        present = [n for n in ANNOTATIONS if self.exists(n)]
        if not present:
            raise BadInput(ANNOTATIONS[0], "file", "missing: the HoloAssist annotation file (the "
                                                   "project page's Labels download)")
        if len(present) > 1:
            raise BadInput(present[1], "file", f"also {present[0]} here: two annotation files, "
                                               "which one to read is unknown (keep one)")
        return present[0]

    def _split_files(self) -> list[tuple[str, str]]:
        """(split, file) of every split list of the newest version present; BadInput when none is
        there or one is there twice (at the root and in ``data-splits-<version>/``)."""
        for version in VERSIONS:
            found = []
            for split, name in zip(SPLITS, split_files(version), strict=True):
                at = [rel for rel in (name, f"data-splits-{version}/{name}") if self.exists(rel)]
                if len(at) > 1:
                    raise BadInput(at[1], "file", f"also at {at[0]}: which copy of the split list "
                                                  "to read is unknown (keep one)")
                found += [(split, at[0])] if at else []
            if found:
                return found
        raise BadInput(split_files(VERSIONS[0])[0], "file",
                       "missing: the split lists (data-splits-v1_2.zip unpacked: train-v1_2.txt, "
                       "val-v1_2.txt, test-v1_2.txt); without them no video has a split")

    def annotation_files(self) -> list[str]:
        out = [n for n in ANNOTATIONS if self.exists(n)]
        with contextlib.suppress(BadInput):  # check() names what is wrong with them
            out += [rel for _split, rel in self._split_files()]
        return out

    def layout_problem(self, relative: str) -> tuple[str, str] | None:
        parts = relative.split("/")
        lists = {f"data-splits-{v}": split_files(v) for v in VERSIONS}
        if len(parts) == 1:
            if relative in ANNOTATIONS or relative in ARCHIVES or \
                    any(relative in names for names in lists.values()):
                return None
            return relative, ("not part of the HoloAssist layout (the annotation JSON, the split "
                              "lists, <video_name>/Export_py/)")
        if parts[0] in lists:
            if len(parts) == 2 and parts[1] in lists[parts[0]]:
                return None
            return relative, f"not a split list of {parts[0]}/ ({', '.join(lists[parts[0]])})"
        if parts[0] in UNPACKED:
            return f"{parts[0]}/", ("the video archive unpacked into a folder: its recording folders "
                                    "(<video_name>/Export_py/) belong at the dataset root")
        if parts[1] == EXPORT:
            if len(parts) > 2:
                return None
            return relative, f"a file where the folder {EXPORT}/ of a recording belongs"
        entry = "/".join(parts[:2]) + ("/" if len(parts) > 2 else "")
        return entry, f"not part of a recording folder (<video_name>/{EXPORT}/...)"

    # -- whole-source files ---------------------------------------------------------------------
    def check(self) -> None:
        """The annotation file and the split lists: one that cannot be read (missing, not JSON,
        not a list, a split list that is not UTF-8) stops the build here, naming the file."""
        self._entries()
        self._split_lists()

    def _entries(self) -> tuple[str, list[Any]]:
        rel = self._annotation()
        doc = self.load_json(rel)
        if not isinstance(doc, list):
            raise BadInput(rel, "json", "must be a list of videos [{video_name, videoMetadata, "
                                        "events, taskType}]")
        return rel, doc

    def _split_lists(self) -> dict[str, list[tuple[str, str, int]]]:
        """Video name → every (split, file, line) that lists it. Read as strict UTF-8: a name is
        compared with the annotation's and quoted in reasons. ``%20`` reads as a space, as in the
        annotation's names (:meth:`_name`); a byte order mark (a list saved by a Windows editor)
        is no part of the first name."""
        out: dict[str, list[tuple[str, str, int]]] = {}
        for split, rel in self._split_files():
            text = utf8_text(self.read_bytes(rel, field="file"), rel).removeprefix("\ufeff")
            for n, line in enumerate(text.splitlines(), start=1):
                name = line.strip().replace("%20", " ")
                if name:
                    out.setdefault(name, []).append((split, rel, n))
        return out

    def _video_files(self) -> dict[str, list[str]]:
        """Recording folder → its video files (``Video_pitchshift.mp4`` first)."""
        out: dict[str, list[str]] = {}
        for name in VIDEO_FILES:
            for rel in self.match(f"*/{EXPORT}/{name}"):
                out.setdefault(rel.split("/", 1)[0], []).append(rel)
        return out

    # -- videos ---------------------------------------------------------------------------------
    def videos(self) -> Iterator[NativeVideo | NativeFiltered | BadInput]:
        rel, entries = self._entries()
        lists = self._split_lists()
        files = self._video_files()
        named: list[tuple[int, str, Any]] = []
        for k, entry in enumerate(entries):
            try:
                named.append((k, self._name(rel, k, entry), entry))
            except BadInput as err:
                yield err
        where: dict[str, list[int]] = {}
        for k, vid, _entry in named:
            where.setdefault(vid, []).append(k)
        for k, vid, entry in named:
            at = where[vid]
            if len(at) > 1:
                if k == at[0]:
                    yield BadInput(rel, f"[{at[1]}].video_name", f"video {vid} is also [{at[0]}]: "
                                   "which entry holds its annotations is unknown", self.item(vid))
                continue
            try:
                yield self._video(rel, k, vid, entry, lists, files)
            except BadInput as err:
                yield err
        annotated = set(where)
        for vid in sorted(set(files) - annotated):
            if vid not in lists:
                continue
            try:
                split, listed = self._split(vid, lists)
            except BadInput as err:
                yield err
                continue
            for path in files[vid]:
                yield NativeFiltered(self.item(vid), path, "not annotated",
                                     f"{listed} lists it in the {split} split, {rel} has no entry "
                                     "for it")
        yield from self.unannotated(files, annotated | set(lists))

    def _name(self, rel: str, k: int, entry: Any) -> str:
        """The video name of entry ``k``: its recording folder. ``%20`` reads as a space (the
        authors' benchmark code does so: names such as ``R158-3Oct-RAM & Graphicscard``)."""
        if not isinstance(entry, dict):
            raise BadInput(rel, f"[{k}]", "must be an object {video_name, videoMetadata, events, "
                                          "taskType}", self.item(f"[{k}]"))
        raw = entry.get("video_name")
        if isinstance(raw, str):
            self.checked_id(raw, rel, f"[{k}].video_name")
        name = text_field(raw, rel, f"[{k}].video_name", self.item(f"[{k}]")).replace("%20", " ")
        if "/" in name or "\\" in name or name.startswith("."):
            raise BadInput(rel, f"[{k}].video_name", f"{name!r} cannot be a recording folder's name",
                           self.item(f"[{k}]"))
        return name

    def _split(self, vid: str, lists: dict[str, list[tuple[str, str, int]]]) -> tuple[str, str]:
        """(split, ``<file>:<line>``) of a listed video; BadInput when two lines list it."""
        listed = lists[vid]
        if len(listed) > 1:
            (_s0, f0, n0), (_s1, f1, n1) = listed[:2]
            raise BadInput(f"{f1}:{n1}", "video_name", f"{vid} is also on {f0}:{n0}: a video "
                                                       "belongs to one split", self.item(vid))
        split, f, n = listed[0]
        return split, f"{f}:{n}"

    def _video(self, rel: str, k: int, vid: str, entry: dict[str, Any],
               lists: dict[str, list[tuple[str, str, int]]], files: dict[str, list[str]]
               ) -> NativeVideo | NativeFiltered:
        item, where = self.item(vid), f"[{k}]"
        twice = repeated_key(entry, where)
        if twice:
            raise BadInput(rel, twice, "key appears twice in this object (JSON keeps only the last, "
                                       "so which annotation is meant is unknown)", item)
        if vid not in lists:
            return NativeFiltered(item, rel, "in no split list",
                                  f"{where}: {vid} is on none of the split lists; the authors' "
                                  "benchmark code leaves such videos out")
        split, _listed = self._split(vid, lists)
        duration = self._duration(rel, where, entry.get("videoMetadata"), item)
        task = text_field(entry.get("taskType"), rel, f"{where}.taskType", item, required=False)
        events = entry.get("events")
        if not isinstance(events, list):
            raise BadInput(rel, f"{where}.events", "must be a list of events", item)
        steps: list[NativeSpan] = []
        spans: list[NativeSpan] = []
        interventions: list[tuple[float, float, str]] = []
        for j, event in enumerate(events):
            f = f"{where}.events[{j}]"
            if not isinstance(event, dict):
                raise BadInput(rel, f, "must be an object {label, start, end, attributes}", item)
            label = text_field(event.get("label"), rel, f"{f}.label", item).lower()
            if label not in (COARSE, FINE, CONVERSATION, NARRATION):
                continue  # an event type this reader does not read (module doc)
            s, e = self._times(rel, f, event, item, duration)
            if label == NARRATION:
                continue
            attrs = event.get("attributes")
            if not isinstance(attrs, dict):
                raise BadInput(rel, f"{f}.attributes", "must be an object of attributes", item)
            if label == COARSE:
                steps.append(self._step(rel, f, s, e, attrs, item))
            elif label == FINE:
                spans.append(self._action(rel, f, s, e, attrs, item))
            else:
                said = self._intervention(rel, f, s, attrs, item)
                if said:
                    interventions.append((s, e, said))
        for span in steps:
            held = [said for s, e, said in interventions if span.start <= s and e <= span.end]
            extra = span.extra + ((("interventions", "; ".join(held)),) if held else ())
            spans.append(NativeSpan(span.kind, span.start, span.end, span.label, span.text,
                                    span.phrase, span.field, extra))
        path = self._locate(files, vid, rel, where, item)
        if not spans:
            return NativeFiltered(item, rel, "no actions annotated",
                                  f"{where}.events holds no coarse- or fine-grained action")
        spans.sort(key=lambda x: (x.start, x.field))
        return NativeVideo(
            dataset=self.name, video_id=vid, video=path, split=split, environment="physical",
            task=task.lower() if task else NEUTRAL_TASK,
            topic=f"how to {task.lower()}" if task else "the task in the video",
            annotated_duration_s=duration, annotation_file=rel, spans=tuple(spans))

    def _duration(self, rel: str, where: str, meta: Any, item: str) -> float | None:
        """``videoMetadata.duration``: ``raw`` (``"00:01:51.30"``) when it is there — ``seconds``
        is a whole number (111 for that video, whose coarse-grained actions end at 111.2 s) —
        else ``seconds``; both there and more than a second apart is bad input. ``None`` when the
        entry states no duration."""
        if meta is None:
            return None
        if not isinstance(meta, dict):
            raise BadInput(rel, f"{where}.videoMetadata", "must be an object", item)
        dur = meta.get("duration")
        if dur is None:
            return None
        f = f"{where}.videoMetadata.duration"
        if not isinstance(dur, dict):
            raise BadInput(rel, f, "must be an object {raw, seconds}", item)
        whole = None if dur.get("seconds") is None else seconds(dur["seconds"], rel, f"{f}.seconds", item)
        raw = dur.get("raw")
        if raw is None:
            return whole
        found = _RAW_DURATION.fullmatch(raw.strip()) if isinstance(raw, str) else None
        if found is None:
            raise BadInput(rel, f"{f}.raw", f"must be a duration HH:MM:SS.ss, got {raw!r:.40}", item)
        h, m, s = found.groups()
        exact = round(int(h) * 3600 + int(m) * 60 + float(s), 3)
        if whole is not None and abs(exact - whole) >= 1.0:
            raise BadInput(rel, f"{f}.seconds", f"{whole:g} s, but raw says {raw.strip()} ({exact:g} "
                                                "s): which duration is right is unknown", item)
        return exact

    def _times(self, rel: str, f: str, event: dict[str, Any], item: str, duration: float | None
               ) -> tuple[float, float]:
        """``(start, end)`` of an event: finite, non-negative, ``end >= start`` (never swapped),
        within the annotated duration (+0.5 s, as every reader)."""
        s = seconds(event.get("start"), rel, f"{f}.start", item)
        e = seconds(event.get("end"), rel, f"{f}.end", item)
        if e < s:
            raise BadInput(rel, f"{f}.end", f"end {e} s is before start {s} s", item)
        if duration is not None and e > duration + 0.5:
            raise BadInput(rel, f"{f}.end", f"event [{s}, {e}] s ends past the annotated duration "
                                            f"({duration} s)", item)
        return s, e

    def _word(self, attrs: dict[str, Any], key: str, rel: str, f: str, item: str) -> str:
        """An attribute as words, ``""`` when absent or ``"none"``; a list (some entries hold one)
        reads as its first value, as the authors' benchmark code reads it."""
        value = attrs.get(key)
        where = f"{f}.attributes.{key}"
        if isinstance(value, list):
            if not value:
                raise BadInput(rel, where, "an empty list", item)
            value, where = value[0], f"{where}[0]"
        text = text_field(value, rel, where, item, required=False)
        return "" if _none(text) else _words(text)

    def _step(self, rel: str, f: str, s: float, e: float, attrs: dict[str, Any], item: str) -> NativeSpan:
        sentence = text_field(attrs.get("Action sentence"), rel, f"{f}.attributes.Action sentence", item)
        extra = tuple((k, v) for k, v in (("verb", self._word(attrs, "Verb", rel, f, item)),
                                          ("noun", self._word(attrs, "Noun", rel, f, item))) if v)
        clause = sentence_phrase(sentence)
        return NativeSpan("step", s, e, clause.lower(), sentence, clause, f"{rel}: {f}.start", extra)

    def _action(self, rel: str, f: str, s: float, e: float, attrs: dict[str, Any], item: str) -> NativeSpan:
        verb = self._word(attrs, "Verb", rel, f, item)
        if not verb:
            raise BadInput(rel, f"{f}.attributes.Verb", "no verb: a fine-grained action names one",
                           item)
        noun = self._word(attrs, "Noun", rel, f, item)
        adjective = self._word(attrs, "Adjective", rel, f, item)
        obj = " ".join(w for w in (adjective, noun) if w)
        text = f"{verb} the {obj}" if obj else verb
        extra = [("verb", verb), ("noun", noun), ("state", f"{PERFORMER} has started to {text}")]
        correctness = text_field(attrs.get("Action Correctness"), rel,
                                 f"{f}.attributes.Action Correctness", item, required=False)
        if correctness:
            extra += [("correctness", correctness),
                      ("mistake", "no" if correctness.lower() == "correct action" else "yes")]
        for key, name in (("Incorrect Action Explanation", "mistake_explanation"),
                          ("Incorrect Action Corrected by", "corrected_by"), ("adverbial", "adverbial")):
            value = text_field(attrs.get(key), rel, f"{f}.attributes.{key}", item, required=False)
            if not _none(value):
                extra.append((name, value))
        label = " ".join(w for w in (verb, noun) if w)
        return NativeSpan("action", s, e, label, text, f"{PERFORMER} starts to {text}",
                          f"{rel}: {f}.start", tuple((k, v) for k, v in extra if v))

    def _intervention(self, rel: str, f: str, s: float, attrs: dict[str, Any], item: str) -> str:
        """An instructor's intervention as the step's ``extra`` lists it (``correct the wrong
        action at 4 s: "…"``), ``""`` for any other utterance (module doc)."""
        purpose = text_field(attrs.get("Conversation Purpose"), rel,
                             f"{f}.attributes.Conversation Purpose", item)
        low = purpose.lower()
        if any(word in low for word in NOT_INTERVENTION):
            return ""
        said = text_field(attrs.get("Transcription"), rel, f"{f}.attributes.Transcription", item,
                          required=False)
        what = low.split("_", 1)[1] if "_" in low else low
        return f"{what} at {s:g} s" + ("" if _none(said) else f": \"{said}\"")

    def _locate(self, files: dict[str, list[str]], vid: str, rel: str, where: str, item: str) -> str:
        found = files.get(vid)
        if not found:
            looked = posixpath.join(vid, EXPORT)
            raise BadInput(rel, f"{where}.video_name", f"video {vid} is not on disk (looked for "
                                                       f"{looked}/{VIDEO_FILES[0]} or {VIDEO_FILES[1]})",
                           item)
        return found[0]

