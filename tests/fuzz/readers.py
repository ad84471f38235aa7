"""Every source reader run on a dataset folder the way its build runs it, and what must hold of
the outcome whatever the folder holds.

Why not a Beam pipeline per case: a pipeline costs a second or two to start, and the fuzz runs
hundreds of cases. :func:`read_sources` does what ``pipelines.common.transforms.ReadSources``
does, in the same order and with the same catch clauses (``preflight`` before the build, then
``partitions`` / ``enumerate_partition`` with a ``BadInput`` of a partition as one rejection,
``unrecognized``, ``load`` and the check that every frame the reader encoded decodes), so what
escapes here escapes in a build. The build-level fuzz (``test_build_fuzz.py``) runs the real
``benchforge build`` on mutated corpora for what only a whole build shows.

StreamVibe and ProReady-QA go one step further than their readers: the step that consumes what
the reader passed on (StreamVibe's task record and request, ProReady-QA's annotations) runs too
— each video normalized as ``NormalizeVideo`` does, then the real DoFns ``GenerateCandidates``
/ ``BuildCandidates`` — since a crash there is a crash of the run all the same. The video
datasets in their released layouts likewise: their listing, then StreamVibe's planner and
ProReady's native mapping on every video they list (:func:`video_dataset`).
"""

from __future__ import annotations

import hashlib
import math
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

import yaml

from core.errors import BadInput, Rejection
from core.media.images import verify_image
from pipelines.common.sources import Filtered, ItemRef, ReaderConfig, SourceItem, SourceReader, preflight
from pipelines.common.video_sources.base import SPAN_KINDS, NativeVideo

REPO = Path(__file__).resolve().parents[2]


@dataclass
class Outcome:
    """What a build would make of one source: refused as a whole (``refused``), or every input
    kept, filtered or rejected."""

    refused: BadInput | None = None
    kept: dict[str, Any] = field(default_factory=dict)  # id -> SourceItem / candidate
    filtered: list[Filtered] = field(default_factory=list)
    rejected: list[Rejection] = field(default_factory=list)
    inputs: int = 0  # listed refs + listing rejections + listing filtered (by count)
    duplicate_ids: list[str] = field(default_factory=list)  # kept twice under one id
    strays: list[str] = field(default_factory=list)  # what a reader yielded that is no outcome

    def summary(self) -> str:
        if self.refused is not None:
            return f"refused: {self.refused}"
        return (f"inputs {self.inputs}, kept {len(self.kept)}, filtered "
                f"{sum(f.count for f in self.filtered)}, rejected {len(self.rejected)}")


def read_sources(readers: dict[str, SourceReader]) -> Outcome:
    """One source read as ``ReadSources`` reads it (module doc). Any exception other than
    BadInput propagates: in a build it is a traceback."""
    out = Outcome()
    _vocab, broken = preflight(readers)
    if broken:
        out.refused = next(iter(broken.values()))
        return out
    for _env, reader in sorted(readers.items()):
        refs: list[ItemRef] = []
        for part in reader.partitions():
            try:
                for element in reader.enumerate_partition(part):
                    if isinstance(element, Rejection):
                        out.rejected.append(element)
                        out.inputs += 1
                    elif isinstance(element, Filtered):
                        out.filtered.append(element)
                        out.inputs += element.count
                    else:
                        refs.append(element)
                        out.inputs += 1
            except BadInput as err:  # the whole part is unreadable: one rejection says why
                out.rejected.append(reader.rejection(err, item_id=part or "*", stage="enumerate"))
                out.inputs += 1
        for rejection in reader.unrecognized():
            out.rejected.append(rejection)
            out.inputs += 1
        for ref in refs:
            try:
                item = reader.load(ref)
                for frame in item.frames:
                    if not frame.decoded:
                        verify_image(frame.data, frame.source, field="encoded frame")  # type: ignore[arg-type]
            except BadInput as err:
                out.rejected.append(reader.rejection(err, item_id=ref.source_id))
                continue
            if ref.source_id in out.kept:
                out.duplicate_ids.append(ref.source_id)
            out.kept[ref.source_id] = item
    return out


# -- the readers -------------------------------------------------------------------------------

def proactivebench(env: str) -> Callable[[Path, Path], Outcome]:
    """The ProactiveBench reader of ``env`` as ``make_readers`` builds it from the shipped config,
    reading ``root``."""
    from pipelines.proactivebench.sources import make_readers

    def run(root: Path, scratch: Path) -> Outcome:
        cfg = yaml.safe_load((REPO / "configs" / "proactivebench.yaml").read_text())
        spec = dict(cfg["environments"][env] or {})
        readers = make_readers(dict(cfg, environments={env: spec}), root.parent, {env: str(root)})
        return read_sources(readers)

    return run


def proready(root: Path, scratch: Path) -> Outcome:
    """ProReady-QA's reader as ``pipelines.proready.build`` builds it, then ``BuildCandidates``
    on every loaded video (it reads the annotations the reader checked)."""
    from pipelines.proready.generation import generation_config
    from pipelines.proready.pipeline import BuildCandidates
    from pipelines.proready.sources import VIDEOS, ProReadyReader

    cfg = yaml.safe_load((REPO / "configs" / "proready.yaml").read_text())
    src = cfg["source"]
    reader = ProReadyReader(str(root), ReaderConfig(global_seed=int(cfg["global_seed"]), extra={
        "manifest": src["manifest"], "end_tolerance_s": src["end_tolerance_s"]}))
    out = read_sources({VIDEOS: reader})
    if out.refused is not None:
        return out
    build = BuildCandidates(generation_config(cfg, REPO, "configs/proready.yaml"))
    build.setup()
    try:
        for vid, item in list(out.kept.items()):
            for element in build.process(item):
                tag = getattr(element, "tag", None)
                if tag == "rejected" and element.value.environment == VIDEOS:
                    del out.kept[vid]
                    out.rejected.append(element.value)
    finally:
        build.teardown()
    return out


# normalize_video is a function of the bytes and the name (decoding is deterministic, design.md
# §Conventions) and a case changes one file: the other videos are not decoded again every case
_NORMALIZED: dict[tuple[str, str, int, int], Any] = {}


def _normalized(root: Path, rel: str, frames: dict[str, Any]) -> Any:
    """A manifest's video as ``NormalizeVideo`` makes it: the bytes through Beam's file systems
    (any failure is a BadInput naming the video), then ``normalize_video``; a ``VideoFailure``
    when it cannot be used. (Not the DoFn itself: its element shape is changing as datasets in
    their released layouts join the manifest; what it does to a manifest's video is this.)"""
    from apache_beam.io.filesystems import FileSystems

    from pipelines.streamvibe.normalize import VideoFailure, normalize_video

    try:
        with FileSystems.open(FileSystems.join(str(root), rel)) as fh:
            data = fh.read()
    except Exception as exc:  # noqa: BLE001 - as NormalizeVideo: unreadable is bad input
        return VideoFailure(rel, "video", f"cannot read video ({type(exc).__name__})")
    side, quality = int(frames.get("max_side", 448)), int(frames.get("jpeg_quality", 90))
    key = (hashlib.sha256(data).hexdigest(), rel, side, quality)
    if key not in _NORMALIZED:
        try:
            _NORMALIZED[key] = normalize_video(data, rel, max_side=side, jpeg_quality=quality)
        except BadInput as err:
            _NORMALIZED[key] = VideoFailure.of(err)
    return _NORMALIZED[key]


def streamvibe(root: Path, scratch: Path) -> Outcome:
    """StreamVibe as ``pipelines.streamvibe.build`` runs it: the manifest read before the build,
    ``enumerate_pairs``, each distinct video normalized once, every pair through the real
    ``GenerateCandidates`` (the rule generator reads the task record's requests and native
    annotations, which the reader passes on)."""
    from pipelines.streamvibe.pipeline import GenerateCandidates, PipelineConfig
    from pipelines.streamvibe.sources import enumerate_pairs, read_manifest, video_key

    cfg = yaml.safe_load((REPO / "configs" / "streamvibe.yaml").read_text())
    manifest = str(cfg["source"]["manifest"])
    out = Outcome()
    try:
        read_manifest(str(root), manifest)
    except BadInput as err:
        out.refused = err
        return out
    pairs = []
    for element in enumerate_pairs(str(root), manifest):
        out.inputs += 1
        if isinstance(element, Rejection):
            out.rejected.append(element)
        else:
            pairs.append(element)
    pcfg = PipelineConfig(
        root=str(root), manifest=manifest, staging=str(scratch), split="test", seed=int(cfg["global_seed"]),
        intents_path=str(REPO / cfg["intents"]), frames=dict(cfg["frames"]),
        negatives=dict(cfg["negatives"], tau_s=max(cfg["tolerances_s"])), targets=cfg["targets"])
    videos: dict[str, Any] = {}
    for key, rel in sorted({(video_key(p), p["video"]) for p in pairs}):
        videos.setdefault(key, _normalized(root, rel, pcfg.frames))
    generate = GenerateCandidates(pcfg)
    generate.setup()
    try:
        for element in generate.process([(p, videos[video_key(p)]) for p in pairs]):
            if getattr(element, "tag", None) == "rejected":
                out.rejected.append(element.value)
            else:
                if element["id"] in out.kept:
                    out.duplicate_ids.append(element["id"])
                out.kept[element["id"]] = element
    finally:
        generate.teardown()
    return out


# -- the video datasets in their released layouts ---------------------------------------------

def undecoded_mapper(dataset: Any, tolerance: float) -> Any:
    """ProReady's native mapping without a decoder: a ``NativeReader`` whose ``probe`` (the one
    step of ``load_video`` that opens the video) answers with ``duration_s``, set per video to
    its annotated end. So the mapping, the span checks against that end and the template
    generator run on every listed video of every case without decoding one; a video's decoded
    end is the business of the cases that cut videos short (``TRUNCATED``)."""
    from core.media.probe import VideoInfo
    from pipelines.proready.native import NativeReader

    class Undecoded(NativeReader):
        duration_s = 0.0

        def probe(self, rel: str, vid: str, shown: str | None = None) -> tuple[str, str, Any]:
            n = max(1, round(self.duration_s * 25))
            return self.path(rel), "0" * 64, VideoInfo(rel, 25.0, n, n, self.duration_s, 64, 48)

    return Undecoded(dataset, ReaderConfig(extra={"end_tolerance_s": tolerance}))


def video_dataset(name: str) -> Callable[[Path, Path], Outcome]:
    """A video dataset's reader as both video builds run it (``pipelines/common/video_sources``,
    ProReady's VStream-QA at ``<parent>/vstream_qa`` over the Ego4D layout beside it): ``check``
    before the build (a BadInput refuses the source), every item ``videos`` yields — a
    ``NativeVideo`` kept, a ``NativeFiltered`` filtered, a ``BadInput`` rejected; anything else
    is recorded in ``Outcome.strays`` —, ``unrecognized``; then what consumes each kept video:
    StreamVibe's planner (``native_record``, ``plan_requests`` with every subtype,
    ``native_past_end`` at the annotated end) and ProReady's native mapping with its template
    generator (:func:`undecoded_mapper`). A BadInput from the mapping or the generator rejects the
    video, as ``load`` / ``BuildCandidates`` do in a build."""

    def run(root: Path, scratch: Path) -> Outcome:
        from pipelines.common.sources import Filtered
        from pipelines.common.video_sources.base import NativeFiltered, NativeVideo
        from pipelines.proready.generation import build_video, generation_config
        from pipelines.proready.native import open_dataset
        from pipelines.proready.sources import VIDEOS
        from pipelines.streamvibe.planner import native_past_end, native_record, plan_requests

        dataset = open_dataset(name, str(root), {"ego4d": str(root.parent / "ego4d")})
        out = Outcome()
        try:
            dataset.check()
        except BadInput as err:
            out.refused = err
            return out
        for x in dataset.videos():
            out.inputs += 1
            if isinstance(x, BadInput):
                out.rejected.append(dataset.rejection(x, item_id=x.item_id or name, stage="listing"))
            elif isinstance(x, NativeFiltered):
                out.filtered.append(Filtered(x.item_id, "video_sources", name, x.source_file, x.rule,
                                             x.reason))
            elif isinstance(x, NativeVideo):
                if x.key in out.kept:
                    out.duplicate_ids.append(x.key)
                out.kept[x.key] = x
            else:
                out.strays.append(f"videos() yielded a {type(x).__name__}: {x!r:.200}")
        for rejection in dataset.unrecognized():
            out.rejected.append(rejection)
            out.inputs += 1
        cfg = yaml.safe_load((REPO / "configs" / "proready.yaml").read_text())
        seed = int(cfg["global_seed"])
        gen = generation_config(cfg, REPO, "configs/proready.yaml")
        mapper = undecoded_mapper(dataset, float(cfg["source"]["end_tolerance_s"]))
        for key, video in list(out.kept.items()):
            native = native_record(video)
            end = video.annotated_duration_s or max((s.end for s in video.spans), default=1.0)
            for k, request in enumerate(plan_requests(video, native, seed)):
                native_past_end({"id": f"{key}/{k}", "collection": name, "native": native,
                                 "annotated_duration_s": video.annotated_duration_s, "request": request},
                                end)
            mapper.duration_s = end
            try:
                res = build_video(mapper.load_video(video), gen, {})
            except BadInput as err:
                del out.kept[key]
                out.rejected.append(mapper.rejection(err, item_id=key, stage="load"))
                continue
            if res.video_rejected is not None and res.video_rejected.environment == VIDEOS:
                del out.kept[key]
                out.rejected.append(res.video_rejected)
        return out

    return run


@dataclass(frozen=True)
class Subject:
    """One reader under fuzz: the folder of the corpora it reads (``folder``), how a build runs
    it (``run(root, scratch)``), the files that define its candidates (``listing``, glob patterns
    relative to the root) and other files worth changing more often than the many frames
    (``prefer``: videos, say). Line-oriented listings, where every line that is not blank is
    one input (a line lost would be a silent drop): ``manifest``, whose lines are all the
    inputs, or ``line_files``, whose inputs name ``<file>:<line>``. ``beside``: folders (relative
    to the corpora) a case copies unchanged next to its own, for a reader that reads another
    dataset's layout too (VStream-QA's clips over Ego4D's narrations)."""

    name: str
    folder: str
    run: Callable[[Path, Path], Outcome]
    listing: tuple[str, ...]
    prefer: tuple[str, ...] = ()
    manifest: str = ""
    line_files: tuple[str, ...] = ()
    beside: tuple[str, ...] = ()


MANIFEST = ("manifest.jsonl", "labels.json")
SUBJECTS = {s.name: s for s in (
    Subject("coco", "coco", proactivebench("coco"), ("annotations/instances_val2014.json",)),
    Subject("quickdraw", "quickdraw", proactivebench("quickdraw"), ("*.ndjson",),
            line_files=("*.ndjson",)),
    Subject("imagenet_c", "imagenet_c", proactivebench("imagenet_c"), ()),
    Subject("rod", "rod", proactivebench("rod"), MANIFEST, manifest="manifest.jsonl"),
    Subject("vsod", "vsod", proactivebench("vsod"), MANIFEST, ("*.avi", "*.mp4"),
            manifest="manifest.jsonl"),
    Subject("mvpn", "mvpn", proactivebench("mvpn"), MANIFEST, manifest="manifest.jsonl"),
    Subject("changeit", "changeit", proactivebench("changeit"), MANIFEST, manifest="manifest.jsonl"),
    Subject("changeit_release", "changeit_release", proactivebench("changeit"),
            ("categories.csv", "annotations/*/*.csv"), ("downloads/*/*",)),
    Subject("streamvibe", "streamvibe", streamvibe, ("manifest.jsonl", "tasks/*.json"), ("videos/*",)),
    Subject("proready", "proready", proready, ("manifest.yaml",), ("video/*",)),
    # the video datasets in their released layouts (pipelines/common/video_sources/demo/native.py,
    # beside StreamVibe's manifest in the StreamVibe demo corpus)
    Subject("youcook2", "streamvibe/youcook2", video_dataset("youcook2"),
            ("annotations/*.json", "label_foodtype.csv", "splits/*.txt"), ("raw_videos/*/*/*",)),
    Subject("activitynet_captions", "streamvibe/activitynet_captions",
            video_dataset("activitynet_captions"), ("*.json",), ("videos/*",)),
    Subject("charades", "streamvibe/charades", video_dataset("charades"), ("Charades/*",),
            ("Charades_v1_480/*",)),
    Subject("ego4d", "streamvibe/ego4d", video_dataset("ego4d"),
            ("v2/ego4d.json", "v2/annotations/*.json"), ("v2/full_scale/*",)),
    Subject("vstream_qa", "streamvibe/vstream_qa", video_dataset("vstream_qa"),
            ("vstream-realtime/*.json",), ("vstream-realtime/ego4d_videos/*",),
            beside=("streamvibe/ego4d",)),
    Subject("assembly101", "streamvibe/assembly101", video_dataset("assembly101"),
            ("fine-grained-annotations/*.csv", "coarse-annotations/*/*"), ("recordings/*/*",)),
    Subject("holoassist", "streamvibe/holoassist", video_dataset("holoassist"), ("*.json", "*.txt"),
            ("*/Export_py/*",)),
    Subject("perception_test", "streamvibe/perception_test", video_dataset("perception_test"),
            ("*.json",), ("videos/*",)),
    Subject("videocua", "streamvibe/videocua", video_dataset("videocua"),
            ("data/*/*/action_log.json",), ("data/*/*/video/*",)),
)}


def glob_match(rel: str, pattern: str) -> bool:
    """``rel`` matches ``pattern`` part by part (``*`` stays within one folder level)."""
    parts, want = rel.split("/"), pattern.split("/")
    return len(parts) == len(want) and all(fnmatchcase(a, b) for a, b in zip(parts, want, strict=True))


def matching(files: list[str], patterns: tuple[str, ...]) -> list[str]:
    return [f for f in files if any(glob_match(f, p) for p in patterns)]


# -- what must hold ----------------------------------------------------------------------------

def host_path_in(text: str, roots: list[str]) -> bool:
    """``text`` names a folder of this machine: the dataset root (as given or resolved) or a
    pytest temporary folder — a release names files relative to the source root only."""
    return any(r and r in text for r in roots) or "pytest-of-" in text


def problems(subject: Subject, outcome: Outcome, root: Path, mutation: Any = None,
             baseline: Outcome | None = None) -> list[str]:
    """Every way ``outcome`` breaks the rule for bad input (design.md §Conventions): each
    rejection and a whole-source refusal name a file relative to the root and a field, no
    reason names a host folder, no item is kept twice, a kept item is one a build can use, every
    non-blank line of a line-oriented listing is one input, and an item whose file changed is
    kept or rejected naming that file (never gone without a word)."""
    roots = [str(root), os.path.realpath(root), str(REPO)]
    found: list[str] = []

    def named(where: str, source_file: str, fld: str, texts: list[str]) -> None:
        if not source_file:
            found.append(f"{where}: names no file")
        elif source_file.startswith("/") or host_path_in(source_file, roots):
            found.append(f"{where}: names a host path {source_file!r}")
        if not fld:
            found.append(f"{where}: names no field")
        for text in [source_file, fld, *texts]:
            if host_path_in(text, roots):
                found.append(f"{where}: a host path in {text!r}")
            if not _encodes(text):
                found.append(f"{where}: {text!r} cannot be written as UTF-8 (a lone surrogate)")

    if outcome.refused is not None:
        err = outcome.refused
        named(f"refusal {err}", err.source_file, err.field, [err.reason, err.item_id])
        return found
    for r in outcome.rejected:
        named(f"rejection {r.item_id!r} ({r.source_file}: {r.field}: {r.reason})", r.source_file,
              r.field, [r.reason, r.item_id])
    for f in outcome.filtered:
        named(f"filtered {f.item_id!r}", f.source_file, f.rule, [f.reason, f.item_id])
    for sid in outcome.duplicate_ids:
        found.append(f"{sid!r} kept twice")
    both = set(outcome.kept) & {r.item_id for r in outcome.rejected}
    found += [f"{sid!r} both kept and rejected" for sid in sorted(both)]
    found += outcome.strays
    for sid, item in outcome.kept.items():
        if isinstance(item, SourceItem):
            found += [f"kept {sid!r}: {p}" for p in unusable(item)]
        elif isinstance(item, NativeVideo):
            found += [f"kept {sid!r}: {p}" for p in unusable_video(item, root, roots)]
    found += lost_lines(subject, outcome, root)
    if baseline is not None and any(isinstance(v, NativeVideo) for v in baseline.kept.values()):
        found += lost_videos(outcome, baseline)
    elif mutation is not None and baseline is not None and not matching([mutation.path], subject.listing):
        found += lost_items(outcome, mutation, baseline)
    return found


def _encodes(text: str) -> bool:
    """``text`` can be written into a release (JSON, Parquet: UTF-8): a reader that keeps a
    byte that is not UTF-8 as a lone surrogate (``surrogateescape``) must not pass it on."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def unusable_video(video: NativeVideo, root: Path, roots: list[str]) -> list[str]:
    """What the video builds could not use of a listed native video: a video path that is not
    a file of the layout (absolute, ``..``, not there), an annotated duration or a span time that
    is not a finite non-negative number, an inverted span, a span kind no benchmark maps, a span
    naming no ``<file>: <field>``, a host path or a string that cannot be written as UTF-8."""
    out = []
    rel = video.video
    if rel.startswith("/") or ".." in rel.split("/") or not os.path.lexists(root / rel):
        out.append(f"video {rel!r} is not a file under the root")
    if video.annotation_file.startswith("/"):
        out.append(f"annotation file {video.annotation_file!r} is not relative")
    duration = video.annotated_duration_s
    if duration is not None and not (isinstance(duration, float | int) and math.isfinite(duration)
                                     and duration >= 0):
        out.append(f"annotated duration {duration!r}")
    texts = [video.video_id, video.video, video.split, video.environment, video.task, video.topic,
             video.annotation_file]
    if not video.spans:
        out.append("no spans")
    for k, s in enumerate(video.spans):
        if s.kind not in SPAN_KINDS:
            out.append(f"spans[{k}]: kind {s.kind!r}")
        if not all(isinstance(t, float | int) and math.isfinite(t) and t >= 0 for t in (s.start, s.end)) \
                or s.end < s.start:
            out.append(f"spans[{k}]: [{s.start!r}, {s.end!r}]")
        file, sep, where = s.field.partition(": ")
        if not (sep and file and where) or file.startswith("/"):
            out.append(f"spans[{k}]: field {s.field!r} names no <file>: <field>")
        texts += [s.label, s.text, s.phrase, s.field, *(v for kv in s.extra for v in kv)]
    for text in texts:
        if not isinstance(text, str):
            out.append(f"{text!r} is not a string")
        elif host_path_in(text, roots):
            out.append(f"a host path in {text!r}")
        elif not _encodes(text):
            out.append(f"{text!r} cannot be written as UTF-8 (a lone surrogate)")
    return out


def lost_videos(outcome: Outcome, baseline: Outcome) -> list[str]:
    """Every video the unchanged layout listed is still accounted for, whichever file changed:
    kept, filtered or rejected under its id, or rejected naming its video file (a video whose
    annotation went is a file no annotation lists, ``VideoDataset.unannotated``)."""
    ids = {r.item_id for r in outcome.rejected} | {f.item_id for f in outcome.filtered}
    files = {r.source_file for r in outcome.rejected} | {f.source_file for f in outcome.filtered}
    return [f"{sid!r} ({video.video}) is neither kept, filtered nor rejected"
            for sid, video in baseline.kept.items()
            if sid not in outcome.kept and sid not in ids and video.video not in files]


def unusable(item: SourceItem) -> list[str]:
    """What the episode builder could not use: no frames, a start / reference / goal frame that
    is not a frame, no category, a file named by a host path."""
    out = [f"source file {f!r} is not relative" for f, _ in item.source_files if f.startswith("/")]
    if item.environment == "videos":  # ProReady-QA: a video, no frames yet (BuildCandidates)
        return out
    n = len(item.frames)
    if not n:
        out.append("no frames")
    for name, idx in (("start_frame", item.start_frame), ("reference_frame", item.reference_frame)):
        if not (isinstance(idx, int) and 0 <= idx < n):
            out.append(f"{name} {idx!r} not in [0, {n})")
    if not item.goal_frames or any(not (isinstance(g, int) and 0 <= g < n) for g in item.goal_frames):
        out.append(f"goal_frames {item.goal_frames!r} not in [0, {n})")
    if not isinstance(item.category, str) or not item.category.strip():
        out.append(f"category {item.category!r}")
    return out


def _counted_lines(data: bytes) -> int:
    """Lines a line-oriented reader must account for: every line that is not UTF-8, and every
    non-blank one (``core.text.utf8_lines``)."""
    n = 0
    for raw in data.splitlines():
        try:
            n += bool(raw.decode("utf-8").strip())
        except UnicodeDecodeError:
            n += 1
    return n


def lost_lines(subject: Subject, outcome: Outcome, root: Path) -> list[str]:
    """A line-oriented listing accounts for each of its lines: a manifest's lines are all the
    inputs; a class file's inputs (``<file>:<line>``, or the file itself for a per-class summary
    row) are its lines."""
    out = []
    if subject.manifest:
        full = root / subject.manifest
        if full.is_file() and not full.is_symlink():
            expected = _counted_lines(full.read_bytes())
            if outcome.inputs != expected:
                out.append(f"{subject.manifest}: {expected} lines to account for, {outcome.inputs} "
                           "inputs")
    for dirpath, _dirs, names in os.walk(root):
        for name in names:
            full = Path(dirpath) / name
            rel = full.relative_to(root).as_posix()
            if not matching([rel], subject.line_files):
                continue
            if full.is_symlink() or not full.is_file():
                continue
            expected = _counted_lines(full.read_bytes())
            line = f"{rel}:"
            got = sum(1 for r in outcome.rejected if r.source_file.startswith(line))
            got += sum(f.count for f in outcome.filtered
                       if f.source_file == rel or f.source_file.startswith(line))
            got += sum(1 for item in outcome.kept.values()
                       if isinstance(item, SourceItem) and item.frames
                       and item.frames[0].source.startswith(line))
            if got != expected:
                out.append(f"{rel}: {expected} lines to account for, {got} inputs name it")
    return out


def _names(named: str, changed: str) -> bool:
    """A rejection's file names the changed path: the path itself, a file inside a folder put in
    its place, or a pattern it matches (ChangeIt's ``downloads/<cat>/<id>.*``: no video found)."""
    return named.startswith(changed) or fnmatchcase(changed, named)


def lost_items(outcome: Outcome, mutation: Any, baseline: Outcome) -> list[str]:
    """An item the baseline kept that read the changed file is kept, or rejected naming the
    changed file (or a file inside a folder put in its place)."""
    out = []
    changed = mutation.path
    for sid, item in baseline.kept.items():
        files = {f for f, _ in getattr(item, "source_files", [])}
        if not any(f == changed or f.startswith(f"{changed}/") for f in files) or sid in outcome.kept:
            continue
        # a listing rejection names the input (ChangeIt's annotated video ``cat/vid``), the kept
        # item may add to it (``cat/vid/<question type>``)
        mine = [r for r in outcome.rejected if r.item_id == sid or sid.startswith(f"{r.item_id}/")]
        if not mine:
            out.append(f"{sid!r} read {changed} and is neither kept nor rejected")
        elif not any(_names(r.source_file.split(":")[0], changed) for r in mine):
            out.append(f"{sid!r} read {changed}, but its rejection names "
                       f"{[(r.source_file, r.field) for r in mine]}")
    return out
