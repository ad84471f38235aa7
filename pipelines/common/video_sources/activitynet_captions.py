"""ActivityNet Captions (Krishna et al., 2017, "Dense-Captioning Events in Videos") in its released
layout: YouTube videos of human activities with timed, overlapping event sentences.

Layout (``captions.zip`` as ranjaykrishna/densevid_eval ``download.sh`` unpacks it; the videos as
activitynet/ActivityNet ``Crawler/run_crosscheck.py`` names them; docs/video_sources.md cites
every field)::

    train.json, val_1.json, val_2.json   {"v_<YouTube id>": {duration, timestamps[[s, e]],
                                          sentences[]}}  (seconds)
    train_ids.json, val_ids.json, test_ids.json, readme.txt   (part of captions.zip, not read)
    activity_net.v1-3.min.json           (optional: ActivityNet's own file, {"database": {<YouTube
                                          id>: {subset, annotations[{segment, label}], ...}}})
    videos/v_<YouTube id>.mp4            (the crawler's name; <YouTube id>.<ext> and other
                                          extensions are read too)

The crawler writes every video into one folder it is given; this layout calls it ``videos/``.

``val_1.json`` and ``val_2.json`` are two independent annotation passes over (almost) the same
validation videos — densevid_eval ``evaluate.py`` scores against each as a separate reference —
so an id in both is one video, not bad input. Its spans come from ``val_1.json``: that pass
covers every validation video (4,917 against 4,885), so each validation video's spans come
from the same pass; taking both would list every event twice in different words. An id in
``train.json`` and a validation file is bad input: a video belongs to one split.

The task and topic say which activity the video shows when ActivityNet's own
``activity_net.v1-3.min.json`` is there (its ``annotations[].label``, e.g. "Walking the dog");
without it they are neutral: the captions files name no activity.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator
from typing import Any

from core.errors import BadInput
from pipelines.common.video_sources.base import (
    VIDEO_EXTENSIONS,
    NativeFiltered,
    NativeSpan,
    NativeVideo,
    VideoDataset,
    interval,
    listed_once,
    repeated_key,
    repeated_keys,
    seconds,
    sentence_phrase,
    text_field,
)

CAPTIONS = {"train.json": "train", "val_1.json": "val", "val_2.json": "val"}
ACTIVITIES = "activity_net.v1-3.min.json"
NOT_READ = ("train_ids.json", "val_ids.json", "test_ids.json", "readme.txt")
VIDEO_ROOT = "videos"
NEUTRAL_TASK, NEUTRAL_TOPIC = "a human activity", "the activity in the video"


class ActivityNetCaptions(VideoDataset):
    name = "activitynet_captions"
    title = "ActivityNet Captions"

    def annotation_files(self) -> list[str]:
        return [f for f in (*CAPTIONS, ACTIVITIES) if self.exists(f)]

    def layout_problem(self, relative: str) -> tuple[str, str] | None:
        if relative in CAPTIONS or relative in NOT_READ or relative == ACTIVITIES:
            return None
        top = relative.split("/", 1)[0]
        if top == VIDEO_ROOT:
            if relative.count("/") == 1 and relative.lower().endswith(VIDEO_EXTENSIONS):
                return None
            return relative, f"not a video at {VIDEO_ROOT}/v_<YouTube id>.<ext>"
        return (relative if "/" not in relative else f"{top}/",
                "not part of the ActivityNet Captions layout (train.json, val_1.json, val_2.json, "
                f"{ACTIVITIES}, {VIDEO_ROOT}/)")

    # -- whole-source files --------------------------------------------------------------------
    def check(self) -> None:
        if not self._captions():
            raise BadInput("train.json", "file", "missing: none of train.json, val_1.json, "
                                                 "val_2.json is at the dataset root")
        self._activities()

    def _captions(self) -> dict[str, dict[str, Any]]:
        """File → its videos, for the captions files that are there."""
        out = {}
        for rel in CAPTIONS:
            if self.exists(rel):
                doc = self.load_json(rel)
                if not isinstance(doc, dict):
                    raise BadInput(rel, "json", "must be an object {\"v_<YouTube id>\": {...}}")
                out[rel] = doc
        return out

    def _activities(self) -> dict[str, Any] | None:
        """ActivityNet's ``database`` (YouTube id → entry), when the companion file is there."""
        if not self.exists(ACTIVITIES):
            return None
        doc = self.load_json(ACTIVITIES)
        if not isinstance(doc, dict) or not isinstance(doc.get("database"), dict):
            raise BadInput(ACTIVITIES, "database", "must be an object {\"database\": {<YouTube id>: "
                                                   "{...}}}")
        return doc["database"]

    # -- videos --------------------------------------------------------------------------------
    def videos(self) -> Iterator[NativeVideo | NativeFiltered | BadInput]:
        docs = self._captions()
        database = self._activities()
        files = self.video_files(VIDEO_ROOT)
        listed: dict[str, list[str]] = {}
        for rel, doc in docs.items():
            for key in doc:
                listed.setdefault(key, []).append(rel)
        annotated: set[str] = set()
        for key in sorted(listed):
            vid = key[2:] if key.startswith("v_") else key
            annotated |= {key, vid}
            try:
                self.checked_id(key, listed[key][0], key)
                yield self._video(key, vid, listed[key], docs, database, files)
            except BadInput as err:
                yield err
        yield from self.unannotated(files, annotated)

    def _video(self, key: str, vid: str, in_files: list[str], docs: dict[str, dict[str, Any]],
               database: dict[str, Any] | None, files: dict[str, list[str]]
               ) -> NativeVideo | NativeFiltered:
        item = self.item(vid)
        rel = in_files[0]
        for f in in_files:
            listed_once(docs[f], key, f, item)
        if "train.json" in in_files and len(in_files) > 1:
            raise BadInput(in_files[1], key, f"video also in train.json: {key}; a video belongs to "
                                             "one split", item)
        if not key.startswith("v_") or len(key) == 2:
            raise BadInput(rel, key, "must be v_<YouTube id>", item)
        entry = docs[rel][key]
        if not isinstance(entry, dict):
            raise BadInput(rel, key, "must be an object {duration, timestamps, sentences}", item)
        twice = repeated_key(entry, key)
        if twice:
            raise BadInput(rel, twice, "key appears twice in this object (JSON keeps only the "
                                       "last)", item)
        duration = seconds(entry.get("duration"), rel, f"{key}.duration", item)
        stamps, sentences = entry.get("timestamps"), entry.get("sentences")
        if not isinstance(stamps, list):
            raise BadInput(rel, f"{key}.timestamps", "must be a list of [start, end] in seconds",
                           item)
        if not isinstance(sentences, list):
            raise BadInput(rel, f"{key}.sentences", "must be a list of sentences", item)
        if len(stamps) != len(sentences):
            raise BadInput(rel, f"{key}.sentences", f"{len(sentences)} sentences for "
                                                    f"{len(stamps)} timestamps: each timestamp "
                                                    "needs its sentence", item)
        spans = []
        for k, (seg, sentence) in enumerate(zip(stamps, sentences, strict=True)):
            where = f"{key}.timestamps[{k}]"
            if not isinstance(seg, list) or len(seg) != 2:
                raise BadInput(rel, where, f"must be [start, end] in seconds, got {seg!r}", item)
            s, e = interval(seg[0], seg[1], rel, where, item, duration)
            text = text_field(sentence, rel, f"{key}.sentences[{k}]", item)
            spans.append(NativeSpan("step", s, e, text.lower(), text, sentence_phrase(text),
                                    f"{rel}: {where}"))
        task, topic = self._task(vid, database, item)
        path = self._locate(files, key, vid, rel, item)
        if not spans:
            return NativeFiltered(item, rel, "no captioned events", f"{key}.timestamps is empty")
        return NativeVideo(
            dataset=self.name, video_id=vid, video=path, split=CAPTIONS[rel], environment="physical",
            task=task, topic=topic, annotated_duration_s=duration, annotation_file=rel,
            spans=tuple(spans))

    def _locate(self, files: dict[str, list[str]], key: str, vid: str, rel: str, item: str) -> str:
        """The one file of the video: ``videos/v_<id>.<ext>`` (the crawler) or
        ``videos/<id>.<ext>``; both, or two extensions, is the video on disk twice."""
        found = sorted(files.get(key, []) + files.get(vid, []))
        if not found:
            raise BadInput(rel, key, f"video {vid} is not on disk (looked for "
                                     f"{posixpath.join(VIDEO_ROOT, key)}.* and "
                                     f"{posixpath.join(VIDEO_ROOT, vid)}.*)", item)
        return self.locate({vid: found}, vid, VIDEO_ROOT, rel, key)

    def _task(self, vid: str, database: dict[str, Any] | None, item: str) -> tuple[str, str]:
        """(task, topic) from ActivityNet's activity label of the video, else neutral."""
        if database is None or vid not in database:
            return NEUTRAL_TASK, NEUTRAL_TOPIC
        where = f"database.{vid}"
        if vid in repeated_keys(database):
            raise BadInput(ACTIVITIES, where, "the video is listed twice in this file", item)
        entry = database[vid]
        anns = entry.get("annotations") if isinstance(entry, dict) else None
        if not isinstance(anns, list):
            raise BadInput(ACTIVITIES, f"{where}.annotations", "must be a list of {segment, label}",
                           item)
        labels: list[str] = []
        for k, ann in enumerate(anns):
            label = text_field(ann.get("label") if isinstance(ann, dict) else None, ACTIVITIES,
                               f"{where}.annotations[{k}].label", item)
            if label not in labels:
                labels.append(label)
        if not labels:  # a test-split video: ActivityNet withholds its labels
            return NEUTRAL_TASK, NEUTRAL_TOPIC
        activity = " and ".join(lab[0].lower() + lab[1:] for lab in labels)
        return activity, f"tips for {activity}"
