"""Ego4D (Grauman et al., 2022, "Ego4D: Around the World in 3,000 Hours of Egocentric Video") in its
released layout: first-person videos with timestamped narrations of what the camera wearer and
the people around them do.

Layout (what the official CLI writes for ``--datasets full_scale annotations --metadata
--version v2``: facebookresearch/Ego4d ``ego4d/cli/README.md`` and ``ego4d/cli/manifest.py``;
field meanings from the official schema page; docs/video_sources.md cites every field)::

    v2/ego4d.json                   {"videos": [{video_uid, duration_sec, scenarios,
                                     split_em, split_av, split_fho, video_metadata, ...}], ...}
    v2/manifest.csv                 (the CLI's top-level manifest, not read)
    v2/annotations/narration.json   {<video_uid>: {narration_pass_1: {narrations[{timestamp_sec,
                                     timestamp_frame, narration_text, annotation_uid}],
                                     summaries[{start_sec, end_sec, summary_text}]},
                                     narration_pass_2: {...}, status}}
    v2/annotations/*                (the other benchmarks' annotation files, not read)
    v2/full_scale/<video_uid>.mp4   (the canonical videos)
    v2/full_scale/manifest.csv      (the CLI's list of what it downloaded, not read: the
                                     reader lists the folder itself)

A narration is a moment, not an interval, so each becomes a point span (``start == end ==
timestamp_sec``); the file does not keep them in time order (the showlab/EgoVLP maintainer: "the
original narration.json may be out of order, we rerank it"), so spans are sorted by time.
Narration texts are cleaned for a reader (:func:`clean`).

Pass 1 is used: the two passes are independent narrations of the same footage, so taking both
would list every action twice, in other words a second apart, and a benchmark would read one
action as two; pass 1 is the one the official code reads first (facebookresearch/Ego4d
``ego4d/research/clep/preprocess``). A video with no pass 1 falls back to pass 2, so a narrated
video is never dropped for the pass it happens to have.

Split: Ego4D has no global split, only one per benchmark (``split_em``, ``split_av``,
``split_fho``). A video is "test" if any benchmark holds it out for testing, else "val" if any
uses it for validation, else "train" — the official code keeps narrations of every val / test
video of any benchmark out of training for the same reason (``filter_narrations``).

Task: the pass's first video summary ("#summary C fixed their breakfast, ate it, then got
dressed and left the house", the annotation guide's example), cleaned; without one, the video's
scenarios. Topic: the scenarios (``ego4d.json`` ``scenarios``, e.g. "Cooking"), the subject a
person would ask about.

A video on disk that ``ego4d.json`` lists but ``narration.json`` does not is a real Ego4D video
nobody narrated (the full_scale download holds every video): filtered by that rule, not bad
input. One that ``ego4d.json`` does not list either is an unannotated input.
"""

from __future__ import annotations

import re
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
    seconds,
    text_field,
)

VERSION = "v2"
METADATA = f"{VERSION}/ego4d.json"
NARRATIONS = f"{VERSION}/annotations/narration.json"
VIDEO_ROOT = f"{VERSION}/full_scale"
PASSES = ("narration_pass_1", "narration_pass_2")
BENCHMARK_SPLITS = ("split_em", "split_av", "split_fho")
NEUTRAL = "everyday life"

_TAG_C = re.compile(r"#\s?c\b\s*(?:c\b)?", re.IGNORECASE)  # "#C C picks" / "#c c picks": the subject
_TAG_O = re.compile(r"#\s?o\b\s*", re.IGNORECASE)
_TAG_O_LETTER = re.compile(r"(?i:#\s?o)\s+(?!A\s)[A-Z](?![\w-])")  # "#O X picks": person X
_UNSURE = re.compile(r"#unsure\b", re.IGNORECASE)
_SUMMARY = re.compile(r"#summary\b", re.IGNORECASE)
_PERSON_LETTER = re.compile(r"\b(?:(an?|the|An?|The)\s+)?"
                            r"(man|woman|person|lady|boy|girl|child|kid|guy|baby|friend)\s+[A-Z](?![\w-])")
_WEARER = re.compile(r"\bC\b('s)?")
_OTHER = re.compile(r"(?<![\w'-])(?![AIC](?![\w-]))[A-Z](?![\w-])('s)?")  # a letter naming a person
_PUNCT = re.compile(r"[^\w\s]")


def clean(text: str) -> str:
    """A narration or summary as a person reads it. Ego4D's tags: ``#C`` marks a sentence about
    the camera wearer, written as the letter ``C``; ``#O`` one about another person; letters name
    people (``man X``); ``#unsure`` stands where the narrator could not name the object (``#C C
    picks #unsure``); ``#summary`` opens a summary. So: ``#C C picks a knife`` → "the camera
    wearer picks a knife", ``#O X gives C a cup`` → "another person gives the camera wearer a
    cup", ``#O man X walks`` → "a man walks", ``#unsure`` → "something" (what the official code
    substitutes, facebookresearch/Ego4d ``sub_tagged_tokens``), ``#summary`` dropped."""
    t = _SUMMARY.sub(" ", text)
    t = _UNSURE.sub("something", t)
    t = _TAG_O_LETTER.sub("another person", t)
    t = _TAG_C.sub("C ", t)
    t = _TAG_O.sub("", t)
    t = _PERSON_LETTER.sub(lambda m: f"{m.group(1) or 'a'} {m.group(2)}", t)
    t = _WEARER.sub(lambda m: "the camera wearer" + (m.group(1) or ""), t)
    t = _OTHER.sub(lambda m: "another person" + (m.group(1) or ""), t)
    t = " ".join(t.replace("#", " ").split())
    return t[:1].lower() + t[1:] if t[:2] != "I " else t


def label_of(text: str) -> str:
    """A cleaned narration compared across repeats: lower-cased, punctuation dropped."""
    return " ".join(_PUNCT.sub(" ", text.lower()).split())


class Ego4D(VideoDataset):
    name = "ego4d"
    title = "Ego4D"

    def annotation_files(self) -> list[str]:
        return [f for f in (NARRATIONS, METADATA) if self.exists(f)]

    def layout_problem(self, relative: str) -> tuple[str, str] | None:
        if relative in (METADATA, f"{VERSION}/manifest.csv") \
                or relative.startswith(f"{VERSION}/annotations/"):
            return None
        if relative.startswith(f"{VIDEO_ROOT}/"):
            rest = relative[len(VIDEO_ROOT) + 1:]
            if rest == "manifest.csv" or ("/" not in rest and rest.endswith(".mp4")):
                return None
            return relative, f"not a video at {VIDEO_ROOT}/<video_uid>.mp4"
        parts = relative.split("/")
        entry = "/".join(parts[:2]) + "/" if parts[0] == VERSION and len(parts) > 2 else \
            (relative if len(parts) == 1 else f"{parts[0]}/")
        return entry, (f"not part of the Ego4D layout this reader reads ({METADATA}, "
                       f"{VERSION}/annotations/, {VIDEO_ROOT}/)")

    # -- whole-source files --------------------------------------------------------------------
    def check(self) -> None:
        self._narrations()
        self._metadata()

    def _narrations(self) -> dict[str, Any]:
        if not self.exists(NARRATIONS):
            raise BadInput(NARRATIONS, "file", "missing: the narrations (the CLI's annotations "
                                               "dataset)")
        doc = self.load_json(NARRATIONS)
        if not isinstance(doc, dict):
            raise BadInput(NARRATIONS, "json", "must be an object {<video_uid>: {narration_pass_1, "
                                               "...}}")
        return doc

    def _metadata(self) -> dict[str, tuple[int, Any] | BadInput]:
        """video_uid → (index in ``videos``, entry), or the bad input that rejects the uid."""
        if not self.exists(METADATA):
            raise BadInput(METADATA, "file", "missing: the metadata file (the CLI's --metadata)")
        doc = self.load_json(METADATA)
        if not isinstance(doc, dict) or not isinstance(doc.get("videos"), list):
            raise BadInput(METADATA, "videos", "must be an object {\"videos\": [{video_uid, ...}]}")
        out: dict[str, tuple[int, Any] | BadInput] = {}
        for k, entry in enumerate(doc["videos"]):
            uid = entry.get("video_uid") if isinstance(entry, dict) else None
            if not isinstance(uid, str) or not uid:
                raise BadInput(METADATA, f"videos[{k}].video_uid", "must be a non-empty string")
            if uid in out:
                first = out[uid]
                at = first[0] if isinstance(first, tuple) else "?"
                out[uid] = BadInput(METADATA, f"videos[{k}].video_uid", f"video {uid} is also "
                                    f"videos[{at}]: which entry holds its metadata is unknown",
                                    self.item(uid))
            else:
                out[uid] = (k, entry)
        return out

    # -- videos --------------------------------------------------------------------------------
    def videos(self) -> Iterator[NativeVideo | NativeFiltered | BadInput]:
        narrations = self._narrations()
        meta = self._metadata()
        files = self.video_files(VIDEO_ROOT)
        for uid in sorted(narrations):
            try:
                self.checked_id(uid, NARRATIONS, uid)
                yield self._video(uid, narrations, meta, files)
            except BadInput as err:
                yield err
        for uid in sorted(set(files) - set(narrations)):
            if uid in meta:
                for rel in files[uid]:
                    yield NativeFiltered(self.item(uid), rel, "not narrated",
                                         f"{METADATA} lists the video, {NARRATIONS} has no entry "
                                         "for it")
        yield from self.unannotated(files, set(narrations) | set(meta))

    def _video(self, uid: str, narrations: dict[str, Any], meta: dict[str, tuple[int, Any] | BadInput],
               files: dict[str, list[str]]) -> NativeVideo | NativeFiltered:
        item, rel = self.item(uid), NARRATIONS
        listed_once(narrations, uid, rel, item, "narrations are")
        entry = narrations[uid]
        if not isinstance(entry, dict):
            raise BadInput(rel, uid, "must be an object {narration_pass_1, narration_pass_2, status}",
                           item)
        twice = repeated_key(entry, uid)
        if twice:
            raise BadInput(rel, twice, "key appears twice in this object (JSON keeps only the last)",
                           item)
        found = meta.get(uid)
        if found is None:
            raise BadInput(rel, uid, f"video {uid} is not in {METADATA} videos[]: its duration and "
                                     "split are unknown", item)
        if isinstance(found, BadInput):
            raise found
        k, info = found
        twice = repeated_key(info, f"videos[{k}]")
        if twice:
            raise BadInput(METADATA, twice, "key appears twice in this object (JSON keeps only the "
                                            "last)", item)
        duration = seconds(info.get("duration_sec"), METADATA, f"videos[{k}].duration_sec", item)
        split = self._split(info, k, item)
        scenarios = self._scenarios(info, k, item)
        which = next((p for p in PASSES if p in entry), None)
        if which is None:
            self.locate(files, uid, VIDEO_ROOT, rel, uid)
            return NativeFiltered(item, rel, "not narrated", f"{uid} has neither narration pass")
        passed = entry[which]
        where = f"{uid}.{which}"
        if not isinstance(passed, dict) or not isinstance(passed.get("narrations"), list):
            raise BadInput(rel, f"{where}.narrations", "must be a list of narrations", item)
        spans = []
        for n, nar in enumerate(passed["narrations"]):
            f = f"{where}.narrations[{n}]"
            if not isinstance(nar, dict):
                raise BadInput(rel, f, "must be an object {timestamp_sec, narration_text, ...}", item)
            t = seconds(nar.get("timestamp_sec"), rel, f"{f}.timestamp_sec", item)
            if t > duration + 0.5:
                raise BadInput(rel, f"{f}.timestamp_sec", f"narration at {t} s is past the annotated "
                                                          f"duration ({duration} s)", item)
            raw = text_field(nar.get("narration_text"), rel, f"{f}.narration_text", item)
            text = clean(raw)
            if not text:
                raise BadInput(rel, f"{f}.narration_text", f"nothing left of {raw!r} once its tags "
                                                           "are read", item)
            spans.append(NativeSpan("narration", t, t, label_of(text), text, text,
                                    f"{rel}: {f}.timestamp_sec"))
        task = self._summary(passed, where, item) or (
            f"a first-person video of {scenarios}" if scenarios else f"a first-person video of {NEUTRAL}")
        path = self.locate(files, uid, VIDEO_ROOT, rel, uid)
        if not spans:
            return NativeFiltered(item, rel, "not narrated", f"{where}.narrations is empty")
        spans.sort(key=lambda s: (s.start, s.field))
        return NativeVideo(
            dataset=self.name, video_id=uid, video=path, split=split, environment="physical",
            task=task, topic=scenarios or NEUTRAL, annotated_duration_s=duration,
            annotation_file=rel, spans=tuple(spans))

    def _split(self, info: dict[str, Any], k: int, item: str) -> str:
        """The most held-out split any Ego4D benchmark gives the video (module doc)."""
        found = set()
        for key in BENCHMARK_SPLITS:
            value = info.get(key)
            if value is not None and not isinstance(value, str):
                raise BadInput(METADATA, f"videos[{k}].{key}", f"must be a split name or null, got "
                                                               f"{value!r}", item)
            found.add(value)
        return "test" if "test" in found else "val" if "val" in found else "train"

    def _scenarios(self, info: dict[str, Any], k: int, item: str) -> str:
        value = info.get("scenarios") or []
        if not isinstance(value, list):
            raise BadInput(METADATA, f"videos[{k}].scenarios", "must be a list of scenario names", item)
        names = [text_field(s, METADATA, f"videos[{k}].scenarios[{n}]", item) for n, s in enumerate(value)]
        return " and ".join(s.lower() for s in names if s)

    def _summary(self, passed: dict[str, Any], where: str, item: str) -> str:
        """The first summary of the pass (by start time), cleaned; ``""`` when it has none."""
        summaries = passed.get("summaries") or []
        if not isinstance(summaries, list):
            raise BadInput(NARRATIONS, f"{where}.summaries", "must be a list of summaries", item)
        best: tuple[float, str] | None = None
        for n, summ in enumerate(summaries):
            f = f"{where}.summaries[{n}]"
            if not isinstance(summ, dict):
                raise BadInput(NARRATIONS, f, "must be an object {start_sec, end_sec, summary_text}", item)
            start = seconds(summ.get("start_sec", 0), NARRATIONS, f"{f}.start_sec", item)
            text = clean(text_field(summ.get("summary_text"), NARRATIONS, f"{f}.summary_text", item))
            if text and (best is None or start < best[0]):
                best = (start, text.rstrip("."))
        return best[1] if best else ""
