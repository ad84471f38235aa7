"""VStream-QA (Flash-VStream: "Flash-VStream: Memory-Based Real-Time Understanding for Long Video
Streams") in its released layout, as a source of ProReady-QA's long Ego4D videos.

StreamReady §4.2: "We build upon long videos from VStream-QA … VStream-QA's questions are
entirely past-dependent … We remove all past-dependent questions from VStream-QA and create new
multi-turn proactive questions whose answers rely on future frames". So from VStream-QA this
reader takes the *videos* — each a time range of an Ego4D video — and the Ego4D narrations inside
that range (read through the Ego4D reader, :class:`pipelines.common.video_sources.ego4d.Ego4D`,
shifted to clip time), from which ProReady's generators write new questions; every VStream-QA
question is an input filtered by the rule ``past-dependent question (StreamReady §4.2:
removed)``. That rule is the paper's statement about the whole question set, not a test run on
each question: the release has no field that marks a question past-dependent.

Layout (the Hugging Face dataset IVGSZ/VStream-QA, ``README.md`` "Preparation"; the real-time
subset RVS-Ego, the one that streams)::

    vstream-realtime/rvs_ego.json             [{video_id, original_video, start_time, end_time}]
    vstream-realtime/test_qa_ego4d.json       [{id, video_id, question, answer, answer_type,
                                                start_time, end_time, duration, gt_duration,
                                                video_name}]
    vstream-realtime/ego4d_videos/<video_id>.mp4   the cut clips (below)
    vstream-realtime/rvs_movie.json, test_qa_movienet.json, ego4d_frames_online.part*,
    movienet_frames_online.zip, vstream/, README.md, LICENSE     (part of the release, not read)

The README: "you need to cut the Ego4d video ``original_video.mp4`` from ``start_time`` second
to ``end_time`` second, and save the video clip as ``video_id.mp4``" — it names no folder; this
layout calls it ``vstream-realtime/ego4d_videos/`` (the offline subset ships its clips as
``vstream/ego4d_videos.zip``). A clip is a ProReady video; its times are the clip's own.

What counts: every clip definition is one candidate video, every QA item one candidate input.
Rejected, naming file and field: a clip that is not an object, a missing or repeated
``video_id``, a time that is not a finite non-negative number of seconds, ``end_time`` not after
``start_time``, an ``original_video`` Ego4D does not narrate (or whose Ego4D entry is bad input:
its reason is repeated), a range ending past the Ego4D video's ``duration_sec``, a clip file not
on disk; a clip file no definition lists; a QA item that is not an object, has no id or a
repeated one, names a clip ``rvs_ego.json`` does not define, or holds a byte that is not UTF-8
in either. Filtered: every QA item (the rule above); a clip with no narration inside its
range, or over an Ego4D video that is not narrated. A file that is not JSON, not a list, or
missing stops the build (``check``).
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from core.errors import BadInput
from pipelines.common.video_sources.base import (
    NativeFiltered,
    NativeVideo,
    VideoDataset,
    seconds,
    text_field,
)
from pipelines.common.video_sources.ego4d import Ego4D

SUBSET = "vstream-realtime"
CLIPS = f"{SUBSET}/rvs_ego.json"
QA = f"{SUBSET}/test_qa_ego4d.json"
CLIP_DIR = f"{SUBSET}/ego4d_videos"
PAST_DEPENDENT = "past-dependent question (StreamReady §4.2: removed)"
# files of the release this reader does not read (HF tree of IVGSZ/VStream-QA)
NOT_READ = {f"{SUBSET}/rvs_movie.json", f"{SUBSET}/test_qa_movienet.json",
            f"{SUBSET}/movienet_frames_online.zip", "README.md", "LICENSE", ".gitattributes"}


class VStreamQA(VideoDataset):
    """RVS-Ego's clips over Ego4D (module doc). ``ego4d_root``: the Ego4D layout the clips were
    cut from; its narrations are the clips' spans."""

    name = "vstream_qa"
    title = "VStream-QA (RVS-Ego)"
    span_dataset = "ego4d"  # the spans' files are Ego4D's (NativeReader names them ego4d/<file>)

    def __init__(self, root: str, ego4d_root: str) -> None:
        super().__init__(root)
        self.ego4d = Ego4D(ego4d_root)

    def annotation_files(self) -> list[str]:
        return [f for f in (CLIPS, QA) if self.exists(f)]

    def layout_problem(self, relative: str) -> tuple[str, str] | None:
        if relative in (CLIPS, QA) or relative in NOT_READ or relative.startswith("vstream/"):
            return None
        if relative.startswith(f"{SUBSET}/ego4d_frames_online.part"):
            return None
        if relative.startswith(f"{CLIP_DIR}/"):
            rest = relative[len(CLIP_DIR) + 1:]
            if "/" not in rest and rest.endswith(".mp4"):
                return None
            return relative, f"not a clip at {CLIP_DIR}/<video_id>.mp4"
        parts = relative.split("/")
        depth = 2 if parts[0] == SUBSET and len(parts) > 2 else 1
        entry = "/".join(parts[:depth]) + ("/" if len(parts) > depth else "")
        return entry, (f"not part of the VStream-QA layout this reader reads ({CLIPS}, {QA}, "
                       f"{CLIP_DIR}/)")

    # -- whole-source files --------------------------------------------------------------------
    def check(self) -> None:
        self._list(CLIPS)
        self._list(QA)
        self.ego4d.check()

    def _list(self, rel: str) -> list[Any]:
        if not self.exists(rel):
            raise BadInput(rel, "file", "missing: part of the VStream-QA release (README "
                                        "\"Preparation\")")
        doc = self.load_json(rel)
        if not isinstance(doc, list):
            raise BadInput(rel, "json", f"must be a list of objects, got {type(doc).__name__}")
        return doc

    def _ego4d(self) -> dict[str, NativeVideo | NativeFiltered | BadInput]:
        """Ego4D video uid → its narrated video, or why it cannot be used."""
        out: dict[str, NativeVideo | NativeFiltered | BadInput] = {}
        for x in self.ego4d.videos():
            if isinstance(x, NativeVideo):
                out[x.video_id] = x
            else:
                uid = (x.item_id or "").partition("/")[2]
                if uid and not isinstance(out.get(uid), NativeVideo):
                    out.setdefault(uid, x)
        return out

    # -- videos and questions -------------------------------------------------------------------
    def videos(self) -> Iterator[NativeVideo | NativeFiltered | BadInput]:
        clips, questions = self._list(CLIPS), self._list(QA)
        ego = self._ego4d()
        files = self.video_files(CLIP_DIR)
        positions: dict[str, list[int]] = {}
        for k, clip in enumerate(clips):
            if isinstance(clip, dict) and isinstance(clip.get("video_id"), str):
                positions.setdefault(clip["video_id"], []).append(k)
        for k, clip in enumerate(clips):
            try:
                yield self._clip(k, clip, positions, ego, files)
            except BadInput as err:
                yield err
        yield from self.unannotated(files, set(positions))
        seen: dict[str, int] = {}
        for k, q in enumerate(questions):
            try:
                yield self._question(k, q, positions, seen)
            except BadInput as err:
                yield err

    def _clip(self, k: int, clip: Any, positions: dict[str, list[int]],
              ego: dict[str, NativeVideo | NativeFiltered | BadInput],
              files: dict[str, list[str]]) -> NativeVideo | NativeFiltered:
        where = f"[{k}]"
        if not isinstance(clip, dict):
            raise BadInput(CLIPS, where, "must be an object {video_id, original_video, start_time, "
                                         "end_time}", self.item(where))
        vid = text_field(clip.get("video_id"), CLIPS, f"{where}.video_id", self.item(where))
        item = self.item(vid)
        if len(positions.get(vid, [])) > 1:
            both = ", ".join(f"[{j}]" for j in positions[vid])
            raise BadInput(CLIPS, f"{where}.video_id", f"clip {vid} is defined by {both}: which "
                                                       "range is meant is unknown", item)
        uid = text_field(clip.get("original_video"), CLIPS, f"{where}.original_video", item)
        start = seconds(clip.get("start_time"), CLIPS, f"{where}.start_time", item)
        end = seconds(clip.get("end_time"), CLIPS, f"{where}.end_time", item)
        if end <= start:
            raise BadInput(CLIPS, f"{where}.end_time", f"end {end} s is not after start {start} s",
                           item)
        source = ego.get(uid)
        if source is None:
            raise BadInput(CLIPS, f"{where}.original_video", f"Ego4D video {uid} is in neither "
                                                             "Ego4D's narration.json nor its video "
                                                             "folder", item)
        if isinstance(source, BadInput):
            raise BadInput(CLIPS, f"{where}.original_video", f"Ego4D video {uid} cannot be used: "
                           f"ego4d/{source.source_file}: {source.field}: {source.reason}", item)
        if isinstance(source, NativeFiltered):
            self.locate(files, vid, CLIP_DIR, CLIPS, f"{where}.video_id")
            return NativeFiltered(item, CLIPS, "Ego4D video not narrated",
                                  f"{where}.original_video {uid}: {source.reason}")
        duration = source.annotated_duration_s
        if duration is not None and end > duration + 0.5:
            raise BadInput(CLIPS, f"{where}.end_time", f"the clip [{start}, {end}] s ends past its "
                           f"Ego4D video's duration ({duration} s: ego4d/v2/ego4d.json "
                           "duration_sec)", item)
        path = self.locate(files, vid, CLIP_DIR, CLIPS, f"{where}.video_id")
        offset = (("clip_offset_s", f"{start:g}"),) if start else ()
        spans = tuple(replace(s, start=round(s.start - start, 3),
                              end=round(min(s.end, end) - start, 3), extra=s.extra + offset)
                      for s in source.spans if start <= s.start < end)
        if not spans:
            return NativeFiltered(item, CLIPS, "not narrated", f"no narration of Ego4D video {uid} "
                                                               f"lies inside [{start}, {end}] s")
        return NativeVideo(
            dataset=self.name, video_id=vid, video=path, split="test", environment="physical",
            task=source.task, topic=source.topic, annotated_duration_s=round(end - start, 3),
            annotation_file=CLIPS, spans=spans)

    def _question(self, k: int, q: Any, positions: dict[str, list[int]], seen: dict[str, int]
                  ) -> NativeFiltered:
        where = f"[{k}]"
        if not isinstance(q, dict):
            raise BadInput(QA, where, "must be an object {id, video_id, question, answer, ...}",
                           self.item(f"question{where}"))
        qid = q.get("id")
        if isinstance(qid, bool) or not isinstance(qid, int | str) or not str(qid).strip():
            raise BadInput(QA, f"{where}.id", f"must be a question id, got {qid!r}",
                           self.item(f"question{where}"))
        qid = text_field(str(qid), QA, f"{where}.id", self.item(f"question{where}"))
        item = self.item(f"question/{qid}")
        if qid in seen:
            raise BadInput(QA, f"{where}.id", f"question {qid} is also [{seen[qid]}]", item)
        seen[qid] = k
        vid = q.get("video_id")
        if not isinstance(vid, str) or vid not in positions:
            raise BadInput(QA, f"{where}.video_id", f"question {qid} names clip {vid!r}, which "
                                                    f"{CLIPS} does not define", item)
        text_field(vid, QA, f"{where}.video_id", item)  # quoted below: never a lone surrogate
        kind = _answer_type(q.get("answer_type"))
        return NativeFiltered(item, QA, PAST_DEPENDENT, (
            f"question {qid} on clip {vid} ({kind}): StreamReady §4.2 states that VStream-QA's "
            "questions are entirely past-dependent and removes them all; this is the paper's "
            "statement about the whole set, not a test run on this question"))


def _answer_type(value: Any) -> str:
    """The answer type as a filter reason names it (``Action Caption``), else ``?``. Why not
    any value as it stands: the reason goes into the release, which can write neither a byte
    that is not UTF-8 (``load_json`` keeps it as a lone surrogate) nor a folder of whoever
    wrote the file (an absolute path typed in the field); a label is neither."""
    if not isinstance(value, str) or value.strip().startswith("/"):
        return "?"
    try:
        return text_field(value, QA, "answer_type", "") or "?"
    except BadInput:
        return "?"


def clip_file(video_id: str) -> str:
    """Where the README's cut clip of ``video_id`` lies in this layout."""
    return posixpath.join(CLIP_DIR, f"{video_id}.mp4")
