"""ProReady-QA from the video datasets in their released layouts (StreamReady §4.2, App. C).

StreamReady App. C anchors every evidence window on "native annotations (actions, interactions,
scene changes, or subtitle segments)", and §4.2 builds ProReady-QA from long videos of real
datasets. The datasets' readers (:mod:`pipelines.common.video_sources`, and VStream-QA's,
:mod:`pipelines.proready.vstream_qa`) list each video with its native spans, every span naming
the file and field it came from; this module turns such a video into the record the question
generators read (:class:`~pipelines.proready.sources.VideoSource`), so nobody writes a span by
hand:

* ``step`` → ``steps`` (SSR: consecutive steps);
* ``action`` → ``actions`` (REC: a label that repeats);
* ``narration`` / ``event`` (points in time) → ``actions``, each as the span [t, the next later
  point of the video, at most ``point_span_s`` (2 s) after t, at most the decoded end]
  (:func:`point_spans`);
* ``scene`` / ``shot`` → ``scenes`` (CRR: the next shot); ``subtitle`` → ``subtitles`` (cues);
* ``gui_action`` → nothing (no ProReady task reads a GUI log).

Spans that share a native ``label`` (a Charades class id, an Ego4D narration compared without
case and punctuation) get one text — that of the label's first occurrence — so the template
generator's REC rule, which groups by text, counts exactly the native repeats.

:class:`NativeReader` is the ProReady source of one dataset: one ``ItemRef`` per listed video,
the dataset's bad and filtered inputs as rejections and filtered inputs of the ``videos``
environment (files named ``<dataset>/<file>``), and ``load`` probes the video and checks each
span against its *decoded* end with the same rule as the custom manifest
(:class:`~pipelines.proready.sources.VideoReader`): a download shorter than its annotation
rejects the video naming the native file and field
(``youcook2/annotations/youcookii_annotations_trainval.json: database.<id>.annotations[1].segment``).
:class:`ProReadySources` reads the custom manifest and every listed dataset as one source.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterator

from core.errors import BadInput, Rejection
from pipelines.common.sources import Filtered, ItemRef, ReaderConfig, SourceItem, SourceReader
from pipelines.common.video_sources import DATASETS
from pipelines.common.video_sources.base import NativeFiltered, NativeSpan, NativeVideo, VideoDataset
from pipelines.proready.sources import BENCHMARK, VIDEOS, Span, VideoReader, VideoSource

# how the native span kinds feed ProReady's (module doc); kinds not named here are not read
KINDS = {"step": "steps", "action": "actions", "narration": "actions", "event": "actions",
         "scene": "scenes", "shot": "scenes", "subtitle": "subtitles"}
POINT_KINDS = ("narration", "event")
POINT_SPAN_S = 2.0  # a point's span ends at the next point, at most this long (point_spans)


def point_spans(times: list[float], duration: float, cap_s: float = POINT_SPAN_S) -> list[float]:
    """The end of the span of each point in ``times`` (sorted): the next *later* point, at most
    ``cap_s`` after it, at most ``duration``.

    Why: an Ego4D narration is a timestamp ("C picks a knife" at t), while a ProReady window
    [t_s, t_e] is an interval, and REC's evidence is "the final occurrence" of the action
    (App. C). The action is seen from t; the narrator's next timestamp is when they saw the
    camera wearer do something else, so the span never runs into the next narrated action; the
    cap keeps a sparse stretch (narrations minutes apart in idle footage) from claiming
    evidence long after the action. The window starts at t, never before, so the question
    asked before it stays strictly before its evidence. 2 s is this project's choice, not a
    paper's; ``datasets.<name>.point_span_s`` changes it."""
    out = []
    for k, t in enumerate(times):
        later = next((u for u in times[k + 1:] if u > t), None)
        end = t + cap_s if later is None else min(later, t + cap_s)
        out.append(round(min(end, duration), 3))
    return out


def canonical_texts(spans: list[NativeSpan]) -> dict[str, str]:
    """Native label → the text of its first occurrence (module doc: one text per label)."""
    out: dict[str, str] = {}
    for s in sorted(spans, key=lambda s: (s.start, s.end, s.field)):
        out.setdefault(s.label, s.text or s.label)
    return out


def qualified(field: str, dataset: str) -> str:
    """``<file>: <path>`` with the file named as the release names it (``<dataset>/<file>``)."""
    return f"{dataset}/{field}"


class NativeReader(VideoReader):
    """One video dataset in its released layout as a ProReady source (module doc).

    ``config.extra``: ``end_tolerance_s`` (:class:`~pipelines.proready.sources.VideoReader`),
    ``point_span_s`` (:func:`point_spans`, default 2 s)."""

    def __init__(self, dataset: VideoDataset, config: ReaderConfig | None = None) -> None:
        super().__init__(dataset.root, config)
        self.dataset = dataset
        self.name = dataset.name
        # the dataset whose files the spans name (VStream-QA's spans are Ego4D's narrations)
        self.span_dataset = str(getattr(dataset, "span_dataset", "") or dataset.name)
        self.point_span_s = float(self.config.extra.get("point_span_s", POINT_SPAN_S))

    def vocabulary(self) -> list[str]:
        """No label set; the dataset's annotation files are read so that one that cannot be read
        stops the build before it starts (:func:`pipelines.common.sources.preflight`)."""
        self.dataset.check()
        return []

    def annotation_files(self) -> list[str]:
        return self.dataset.annotation_files()

    def enumerate(self) -> Iterator[ItemRef | Rejection | Filtered]:
        name = self.name
        for x in self.dataset.videos():
            if isinstance(x, BadInput):
                x.source_file = f"{name}/{x.source_file}"
                yield self.rejection(x, item_id=x.item_id or name, stage="listing")
            elif isinstance(x, NativeFiltered):
                yield self.filtered(x.item_id, f"{name}/{x.source_file}", x.rule, x.reason)
            else:
                yield ItemRef(VIDEOS, x.key, {"video": x})

    def unrecognized(self) -> Iterator[Rejection]:
        """The dataset's files that are no part of its layout, named ``<dataset>/<entry>``."""
        for r in self.dataset.unrecognized():
            yield dataclasses.replace(r, benchmark=BENCHMARK, environment=VIDEOS,
                                      item_id=f"{self.name}/{r.item_id}",
                                      source_file=f"{self.name}/{r.source_file}")

    def load(self, ref: ItemRef) -> SourceItem:
        video = self.load_video(ref.payload["video"])
        return SourceItem(
            environment=VIDEOS, source_id=video.video_id, frames=[], category="", start_frame=0,
            reference_frame=0, goal_frames=[], metadata={"video": video},
            source_files=[(video.video_file, video.sha256)],
        )

    def load_video(self, video: NativeVideo) -> VideoSource:
        """The probed video with its native spans mapped to ProReady's kinds, each checked
        against the decoded end (module doc)."""
        vid, shown = video.key, f"{self.name}/{video.video}"
        local, sha, info = self.probe(video.video, vid, shown)
        duration = round(info.duration_s, 3)
        used = [s for s in video.spans if s.kind in KINDS]
        texts = canonical_texts(used)
        spans: dict[str, list[Span]] = {k: [] for k in dict.fromkeys(KINDS.values())}
        points = sorted((s for s in used if s.kind in POINT_KINDS), key=lambda s: (s.start, s.field))
        ends = dict(zip((s.field for s in points),
                        point_spans([s.start for s in points], duration, self.point_span_s),
                        strict=True))
        for s in sorted(used, key=lambda s: (s.start, s.end, s.field)):
            field = qualified(s.field, self.span_dataset)
            file, _, where = field.partition(": ")
            point = s.kind in POINT_KINDS
            end = ends[s.field] if point else s.end
            offset = s.get("clip_offset_s")
            spans[KINDS[s.kind]].append(self.checked_span(
                s.start, end, texts[s.label], file=file, field=field, start_field=where,
                end_field=where, duration=duration, vid=vid, claimed=video.annotated_duration_s,
                note=f"clip time: the file's time minus {offset} s" if offset else "", point=point))
        return VideoSource(
            video_id=vid, video_file=shown, local_path=local, sha256=sha, duration_s=duration,
            fps=info.fps, source=self.name,
            manifest_file=f"{self.name}/{video.annotation_file}",
            spans={k: tuple(v) for k, v in spans.items()}, causal=(), goals=(), clues=(),
            probe_note=info.note)


class ProReadySources(SourceReader):
    """The custom manifest and every listed dataset read as one ``videos`` source: the shared
    read step (:class:`pipelines.common.transforms.ReadSources`) picks a reader per environment,
    and every ProReady video is counted in the one ``videos`` environment, whichever source
    listed it. Each source is a partition of its own, so a runner lists them in parallel."""

    environment = VIDEOS
    benchmark = BENCHMARK

    def __init__(self, readers: dict[str, SourceReader]) -> None:
        super().__init__("")
        self.readers = dict(sorted(readers.items()))

    def vocabulary(self) -> list[str]:
        for reader in self.readers.values():
            reader.vocabulary()
        return []

    def partitions(self) -> list[str]:
        return list(self.readers)

    def enumerate_partition(self, partition: str) -> Iterator[ItemRef | Rejection | Filtered]:
        for x in self.readers[partition].enumerate():
            yield ItemRef(x.environment, x.source_id, {**x.payload, "reader": partition}) \
                if isinstance(x, ItemRef) else x

    def enumerate(self) -> Iterator[ItemRef | Rejection | Filtered]:
        for name in self.readers:
            yield from self.enumerate_partition(name)

    def unrecognized(self) -> Iterator[Rejection]:
        for reader in self.readers.values():
            yield from reader.unrecognized()

    def load(self, ref: ItemRef) -> SourceItem:
        return self.readers[ref.payload["reader"]].load(ref)


def open_dataset(name: str, root: str, roots: dict[str, str]) -> VideoDataset:
    """The reader of dataset ``name`` at ``root``; ``roots`` gives the other datasets' roots (a
    dataset built on another one's videos reads it there: VStream-QA on Ego4D)."""
    from pipelines.proready.vstream_qa import VStreamQA

    if name == VStreamQA.name:
        return VStreamQA(root, roots["ego4d"])
    return DATASETS[name](root)


def dataset_names() -> list[str]:
    """Every dataset a ProReady config may list under ``datasets:``."""
    from pipelines.proready.vstream_qa import VStreamQA

    return sorted([*DATASETS, VStreamQA.name])


def video_path(roots: dict[str, str], video_file: str) -> str:
    """Where a candidate's ``video_file`` lies: ``<dataset>/<path>`` under that dataset's root,
    anything else under the custom manifest's root (``roots[""]``)."""
    head, _, rest = video_file.partition("/")
    if rest and head in roots and head:
        return os.path.join(roots[head], rest)
    return os.path.join(roots[""], video_file)

