"""The StreamVibe-Bench Beam pipeline (StreamVibe §3.3, App. B.2-B.3).

    Enumerate (manifest → video-request pairs) → Normalize (once per video: real duration,
    causal 1 FPS frames) → Generate (rule | Gemini) → Validate → NegativeProbes → Version
    → [ReviewGate → Allocate → Serialize (stream/trajectory + pointwise)] → Write

Without reviews the bracketed part is skipped: the build stops at the candidates (the driver
writes them as the *pending review* state). With a training split (``--split train``) the training
manifest's pairs go through the same steps under ``train/`` ids — plus HoldOut (a training video
the evaluation manifest holds, by source id or decoded stream, is filtered before generation,
:mod:`~pipelines.streamvibe.heldout`) — and, once approved, AllocateTraining and SerializeTraining
(SFT streams, RL seed rows: :mod:`~pipelines.streamvibe.training`); the evaluation elements meet
exactly the transforms an evaluation-only build applies, so their files keep their bytes.

Every pair ends in exactly one of kept, filtered (review, allocation, held_out) or rejected
(listing, normalize, generate, validate) — or, before review, pending — and is counted per subtype
(``train/<subtype>`` in the training split) for ``inputs = kept + filtered + rejected``
(design.md §Conventions).
Mirrors :mod:`pipelines.proactivebench.pipeline`: small named transforms, no local state, all
files through Beam file systems, so any runner works.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import apache_beam as beam
from apache_beam.io.filesystems import FileSystems
from apache_beam.pvalue import AsDict, AsSingleton, TaggedOutput

from core import progress
from core.errors import BadInput, Rejection
from core.files import atomic_file, canonical_json, sha256_hex
from pipelines.common.decoded_frames import FrameStore, staged_root
from pipelines.common.outcomes import Outcomes
from pipelines.common.progress import ReportProgress, ReportsProgress
from pipelines.common.sources import Filtered
from pipelines.common.transforms import (
    FILTERED_INPUTS,
    REJECTED,
    WriteShardedParquet,
)
from pipelines.streamvibe.build_facts import CANDIDATES, TRAIN_VIDEOS, VIDEOS
from pipelines.streamvibe.candidates import RuleGenerator, assemble
from pipelines.streamvibe.heldout import HELD_OUT, matches, source_id, split_video_key, stream_sha256
from pipelines.streamvibe.negatives import negative_probes
from pipelines.streamvibe.normalize import NormalizedVideo, VideoFailure, decoder_key, normalize_video
from pipelines.streamvibe.planner import native_past_end, planned_pairs
from pipelines.streamvibe.prepared import TrainConfig
from pipelines.streamvibe.review import assign_version, evidence_json, gate
from pipelines.streamvibe.serialize import allocate, pointwise_records, sample_record
from pipelines.streamvibe.sources import enumerate_pairs, load_intent_specs, video_key
from pipelines.streamvibe.training import allocate_training, is_train, rl_seed_rows, sft_record
from pipelines.streamvibe.validate import validate_candidate
from schemas.streamvibe import (
    BENCHMARK,
    FILTERED,
    POINTWISE,
    RL_SEED,
    SAMPLE,
    SFT_STREAM,
    TRAIN_PREFIX,
    TRAIN_SPLIT,
    config_name,
)

if TYPE_CHECKING:
    from pipelines.streamvibe.gemini import GeminiSettings

FILTERED_TAG = "filtered"
TRAIN_FILTERED, TRAIN_REJECTED = "filtered/train", "rejected/train"  # the training split's outcomes


@dataclass(frozen=True)
class PipelineConfig:
    root: str
    manifest: str
    staging: str
    split: str
    seed: int
    intents_path: str
    generator: str = "rule"
    gemini: GeminiSettings | None = field(default=None, hash=False)  # generator: gemini
    frames: dict[str, Any] = field(default_factory=dict, hash=False)
    negatives: dict[str, Any] = field(default_factory=dict, hash=False)
    targets: dict[str, int] = field(default_factory=dict, hash=False)
    statuses_file: str = ""  # the review states (write_statuses); "": no review gate (pending)
    train: TrainConfig | None = field(default=None, hash=False)  # --split train
    # video datasets in their released layouts: (name, root, subtypes the planner may use)
    datasets: tuple[tuple[str, str, tuple[str, ...]], ...] = field(default=(), hash=False)
    # the frames the pending-review state kept, for a release not to decode again ("": none)
    reuse_frames: str = ""


def _reject(err: BadInput, subtype: str, stage: str, item_id: str) -> Rejection:
    return Rejection.from_bad_input(err, benchmark=BENCHMARK, environment=subtype, stage=stage,
                                    item_id=item_id)


class _Split(beam.DoFn):
    def process(self, element):
        if isinstance(element, Rejection):
            yield TaggedOutput(REJECTED, element)
        elif isinstance(element, Filtered):
            yield TaggedOutput(FILTERED_INPUTS, element)
        else:
            yield element


def _video_path(pair: dict[str, Any]) -> tuple[str, str]:
    """(source, path) of a pair's video: ``""`` and the path under the manifest's root, or a
    dataset's name and ``<dataset>/<path under the dataset's root>``."""
    return str(pair.get("source", "")), pair["video"]


def inside_root(source: str, rel: str) -> str:
    """The path of a video (:func:`_video_path`) under its source's root."""
    return rel[len(source) + 1:] if source else rel


class NormalizeVideo(ReportsProgress):
    """(video key, (source, path)) → (video key, NormalizedVideo | BadInput); decoded once per
    video. ``roots`` maps a dataset's name to its root (``""``: the manifest's root).

    The frames go to a frame store at once (``store``: the build's own, under its staging
    folder) and the video carries references to them (core.blobs). A release passes ``reuse``,
    the frames its pending-review state kept: a video found there, checked, is not decoded
    again (pipelines.common.decoded_frames); the progress board counts both kinds."""

    def __init__(self, roots: dict[str, str], frames: dict[str, Any], store: str,
                 reuse: str = "") -> None:
        super().__init__()
        self.roots = roots
        self.max_side = int(frames.get("max_side", 448))
        self.jpeg_quality = int(frames.get("jpeg_quality", 90))
        self.store_root, self.reuse_root = store, reuse
        self.store: FrameStore | None = None
        self.reuse: FrameStore | None = None
        self.settings = ""

    def setup(self) -> None:
        super().setup()
        self.store = FrameStore(self.store_root)
        self.reuse = FrameStore(self.reuse_root) if self.reuse_root else None
        self.settings = decoder_key(self.max_side, self.jpeg_quality)

    def process(self, element):
        key, (source, rel) = element
        inside = inside_root(source, rel)
        try:
            try:
                with FileSystems.open(FileSystems.join(self.roots[source], inside)) as fh:
                    data = fh.read()
            except Exception as exc:  # noqa: BLE001 - missing/unreadable file is bad input
                raise BadInput(rel, "video", f"cannot read video ({type(exc).__name__})") from exc
            if self.reuse is not None:
                digest = sha256_hex(data)
                kept, why = self.reuse.get(digest, self.settings)
                if kept is not None:
                    try:
                        video = NormalizedVideo.from_timeline(kept.facts, rel, kept.frames)
                        if video.sha256 != digest:
                            raise ValueError(f"sha256 {video.sha256[:12]}…, not the file's")
                    except ValueError as exc:
                        why = f"its record's timeline: {exc}"
                    else:
                        progress.tally("videos normalized", reused=1)
                        yield key, video
                        return
                if why:  # a record that does not check is decoded again, and said
                    logging.warning("decoding %s again: %s", rel, why)
            video = normalize_video(data, rel, max_side=self.max_side, jpeg_quality=self.jpeg_quality)
            refs = self.store.put(video.sha256, self.settings, video.timeline(), video.frames)
            progress.tally("videos normalized", decoded=1)
            yield key, dataclasses.replace(video, frames=refs)
        except BadInput as err:
            progress.tally("videos normalized", unreadable=1)
            yield key, VideoFailure.of(err)

    def finish_bundle(self) -> None:
        progress.flush()


def make_generator(cfg: PipelineConfig):
    _, specs = load_intent_specs(cfg.intents_path)
    if cfg.generator == "rule":
        return RuleGenerator(specs, cfg.seed)
    if cfg.generator == "gemini":
        from pipelines.streamvibe.gemini import GeminiGenerator

        if cfg.gemini is None:
            raise ValueError("generator gemini needs the config's prompt and models sections")
        return GeminiGenerator(specs, cfg.seed, cfg.gemini)
    raise ValueError(f"unknown generator {cfg.generator!r} (rule | gemini)")


class GenerateCandidates(ReportsProgress):
    """A batch of (pair, video) → validated, probed candidates; failures become rejections."""

    def __init__(self, cfg: PipelineConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.generator = None

    def setup(self) -> None:
        super().setup()  # the model requests' progress reaches the driver's board
        self.generator = make_generator(self.cfg)

    def teardown(self) -> None:
        if self.generator is not None:
            self.generator.close()  # the last answers of this worker reach the cache

    def process(self, batch):
        ok = []
        for pair, video in batch:
            if isinstance(video, VideoFailure):
                yield TaggedOutput(REJECTED, _reject(video.to_bad_input(), _subtype(pair), "normalize",
                                                     pair["id"]))
                continue
            late = native_past_end(pair, video.duration_s) if pair.get("source") else None
            if late is not None:
                yield TaggedOutput(REJECTED, _reject(late, _subtype(pair), "validate", pair["id"]))
            else:
                ok.append((pair, video))
        raws = self.generator.generate_many(ok) if ok else []
        neg = self.cfg.negatives
        for (pair, video), raw in zip(ok, raws, strict=True):
            if isinstance(raw, BadInput):
                yield TaggedOutput(REJECTED, _reject(raw, _subtype(pair), "generate", pair["id"]))
                continue
            try:
                cand = validate_candidate(assemble(pair, video, raw, self.generator))
            except BadInput as err:
                yield TaggedOutput(REJECTED, _reject(err, _subtype(pair), "validate", pair["id"]))
                continue
            cand["negative_probes"] = negative_probes(
                cand, seed=self.cfg.seed, per_sample=int(neg.get("per_sample", 4)),
                tau_s=float(neg.get("tau_s", 2)), max_distance=float(neg.get("max_distance", 8)))
            yield cand


class ReviewGate(beam.DoFn):
    """(candidate id, its candidates and its review status) → approved (all reviewers, same
    version) to main; anything else → filtered (review)."""

    def process(self, element):
        _, grouped = element
        statuses = list(grouped["status"])
        status = statuses[0] if statuses else None
        for cand in grouped["cand"]:
            approved, reason, record = gate(cand, status)
            if approved:
                yield dict(cand, review=record)
            else:
                yield TaggedOutput(FILTERED_TAG, _filtered(cand, "review", reason, evidence_json(status)))


class GateByReview(beam.PTransform):
    """Candidates → ``approved`` and ``filtered`` (review): each candidate joined by its id with
    its review state from ``statuses_file`` (:func:`write_statuses`), then :class:`ReviewGate`."""

    def __init__(self, statuses_file: str) -> None:
        super().__init__()
        self.statuses_file = statuses_file

    def expand(self, cands):
        states = (
            cands.pipeline
            | "StatusesFile" >> beam.Create([self.statuses_file])
            | "ReadStatuses" >> beam.FlatMap(_read_states)
        )
        return (
            {"cand": cands | "KeyCandidates" >> beam.Map(lambda c: (c["id"], c)), "status": states}
            | "JoinStatuses" >> beam.CoGroupByKey()
            | "Gate" >> beam.ParDo(ReviewGate()).with_outputs(FILTERED_TAG, main="approved")
        )


def _read_states(path: str):
    """(candidate id, review state) per line of the states file, a line at a time, through
    Beam's file systems (any runner's shared storage; a plain step, which every runner runs)."""
    with FileSystems.open(path) as fh:
        for line in fh:
            state = json.loads(line)
            yield state["id"], state["status"]


STATUSES_FILE = "_build/review_statuses.jsonl"  # the driver's review states, for ReviewGate


def write_statuses(staging: str | Path, statuses: dict[str, dict[str, Any]]) -> str:
    """Write the review states the driver derived from the decision log as JSON lines under the
    build's staging folder (which every worker reaches) and return the file's path.

    Why a file joined by id, not an in-memory side input: a side input is held whole by every
    worker as Python objects for the rest of the pipeline, through the shard writes that set a
    release's peak, and ``beam.Create`` would also keep the states pickled in the pipeline
    itself (docs/scaling.md, "The one-worker release's peak, stage by stage"). Joined by id,
    each candidate meets its one state in the shuffle, and nothing is held after."""
    path = Path(staging) / STATUSES_FILE
    with atomic_file(path) as fh:
        for sid, status in sorted(statuses.items()):
            fh.write((json.dumps({"id": sid, "status": status}, sort_keys=True) + "\n").encode())
    return str(path)


def _filtered(cand: dict[str, Any], name: str, reason: str, evidence: str) -> dict[str, Any]:
    body = {k: v for k, v in cand.items() if k != "review"}
    return {"id": cand["id"], "subtype": cand["subtype"], "filter_name": name,
            "filter_reason": reason, "filter_evidence": evidence, "candidate": canonical_json(body)}


class Allocate(beam.DoFn):
    """(subtype, approved candidates) → at most the subtype's target (Table 15); the rest are
    filtered as ``allocation`` with their rank evidence (serialize.allocate)."""

    def __init__(self, targets: dict[str, int], seed: int) -> None:
        self.targets = targets
        self.seed = seed

    def process(self, element):
        subtype, cands = element
        cands = list(cands)
        target = int(self.targets.get(subtype, 0))
        chosen = set(allocate(cands, target, self.seed)[0])
        for c in sorted(cands, key=lambda c: c["id"]):
            if c["id"] in chosen:
                yield c
            else:
                yield TaggedOutput(FILTERED_TAG, _filtered(
                    c, "allocation", f"over the subtype target ({target})",
                    canonical_json({"target": target, "approved": len(cands)})))


def _video_key_of(c: dict[str, Any]) -> str:
    return split_video_key(c, f"{c['source_collection']}/{c['source_video_id']}")


def _pair_key(x: dict[str, Any]) -> str:
    return split_video_key(x, video_key(x))


def video_stream_sha256(video: NormalizedVideo) -> str:
    """The held-out content key of a normalized video (its frames are blob references, which
    carry the sha256 of their bytes)."""
    return stream_sha256(video.frame_times, (f.sha256 for f in video.frames))


def _into_train(x: Any) -> Any:
    """A pair or listing rejection of the training manifest, under the training split's ids and
    counts groups."""
    if isinstance(x, Rejection):
        return dataclasses.replace(x, environment=TRAIN_PREFIX + x.environment)
    return dict(x, id=TRAIN_PREFIX + x["id"])


KEY_NAMES = {"source_id": "source id", "stream_sha256": "decoded 1 FPS stream"}


class HoldOut(beam.DoFn):
    """Training pairs whose source video the evaluation manifest holds (by source id or decoded
    stream) → filtered ``held_out`` with the match; everything else passes (heldout.py)."""

    def process(self, element, test_ids, test_streams):
        pair, video = element
        if not is_train(pair["id"]):
            yield element
            return
        sid = video_key(pair)
        content = None if isinstance(video, VideoFailure) else video_stream_sha256(video)
        found = matches(sid, content, test_ids, test_streams)
        if not found:
            yield element
            return
        by = " and ".join(sorted({KEY_NAMES[m["by"]] for m in found}))
        yield TaggedOutput(FILTERED_TAG, {
            "id": pair["id"], "subtype": pair["subtype"], "filter_name": HELD_OUT,
            "filter_reason": f"the evaluation split holds this source video (same {by})",
            "filter_evidence": canonical_json({"source_id": sid, "stream_sha256": content,
                                               "matches": found}),
            "candidate": canonical_json(pair)})


class AllocateTraining(beam.DoFn):
    """(category, approved training candidates) → SFT or RL seed samples up to the category's
    targets (Table 18); the rest filtered as ``allocation`` (training.allocate_training)."""

    def __init__(self, train: TrainConfig, seed: int) -> None:
        self.train = train
        self.seed = seed

    def process(self, element):
        category, cands = element
        cands = list(cands)
        sft_target = int(self.train.sft_targets.get(category, 0))
        rl_target = int(self.train.rl_targets.get(category, 0))
        sft, rl, _over = allocate_training(cands, sft_target, rl_target, self.seed)
        for c in sorted(cands, key=lambda c: c["id"]):
            if c["id"] in rl:
                yield dict(c, train_use="rl", rl_points=rl[c["id"]])
            elif c["id"] in sft:
                yield dict(c, train_use="sft", rl_points=[])
            else:
                yield TaggedOutput(FILTERED_TAG, _filtered(
                    c, "allocation",
                    f"over the training targets of {category} (SFT {sft_target} samples, RL "
                    f"{rl_target} help points; Table 18 unless configured)",
                    canonical_json({"sft_target": sft_target, "rl_target": rl_target,
                                    "approved": len(cands)})))


def _serialize_train(key, grouped, before_s: float, after_s: float):
    videos = [v for v in grouped["video"] if not isinstance(v, VideoFailure)]
    for cand in grouped["cand"]:
        rec = sft_record(cand, videos[0], cand.get("review", []), video_stream_sha256(videos[0]))
        if cand["train_use"] == "sft":
            yield "sft", rec
        else:
            for row in rl_seed_rows(rec, cand["rl_points"], before_s, after_s):
                yield "rl", row


def _serialize(key, grouped):
    videos = [v for v in grouped["video"] if not isinstance(v, VideoFailure)]
    for cand in grouped["cand"]:
        sample = sample_record(cand, videos[0], cand.get("review", []))
        yield "sample", sample
        for row in pointwise_records(sample):
            yield "pointwise", row


def _subtype(x: Any) -> str:
    """Counts group of a pair, candidate or rejection: its intent subtype (``train/<subtype>`` in
    the training split)."""
    if isinstance(x, Rejection | Filtered):
        return x.environment
    return (TRAIN_PREFIX if is_train(x["id"]) else "") + x["subtype"]


def _by_split(x: Any, _n: int) -> int:
    """Partition index: 0 evaluation, 1 training."""
    return int(_subtype(x).startswith(TRAIN_PREFIX))


def _enumerate(p: beam.Pipeline, root: str, manifest: str, train: bool, label: str):
    """(pairs, listing rejections) of one split's source manifest."""
    listed = (
        p
        | f"Start{label}" >> beam.Create([root])
        | f"Enumerate{label}" >> beam.FlatMap(
            lambda r: (_into_train(x) if train else x for x in enumerate_pairs(r, manifest)))
        | f"SplitListing{label}" >> beam.ParDo(_Split()).with_outputs(REJECTED, main="pairs")
    )
    return listed.pairs, listed[REJECTED]


def _plan_datasets(p: beam.Pipeline, cfg: PipelineConfig):
    """(planned pairs, listing rejections, filtered inputs) of the video datasets read in their
    released layouts (planner.py), one dataset per element so a runner lists them in parallel."""
    seed = cfg.seed
    listed = (
        p
        | "StartDatasets" >> beam.Create(list(cfg.datasets))
        | "PlanDatasets" >> beam.FlatMap(lambda d: planned_pairs(d[0], d[1], seed, d[2]))
        | "SplitPlanned" >> beam.ParDo(_Split()).with_outputs(REJECTED, FILTERED_INPUTS, main="pairs")
    )
    return listed.pairs, listed[REJECTED], listed[FILTERED_INPUTS]


def build_pipeline(p: beam.Pipeline, cfg: PipelineConfig,
                   ledger: dict[str, list[dict[str, Any]]] | None = None) -> None:
    """Add the build to ``p``: list the video-request pairs, normalize each video once, generate
    and version the candidates — then stop at them (pending review), or gate them by review,
    allocate and write the release. With a training split (``cfg.train``) its pairs are listed
    and generated beside the evaluation's, held out from them, and released apart; its outcomes
    go to ``<folder>/train``, counted in its own groups (``train/…``)."""
    outcomes = Outcomes(cfg.staging, FILTERED, group_fn=_subtype)
    pairs, test_pairs = _list_pairs(p, cfg, outcomes)
    videos = _normalized(pairs, cfg)
    joined = _with_videos(pairs, videos)
    if cfg.train is not None:
        joined = _held_out(joined, test_pairs, videos, outcomes)
    cands = _candidates(p, joined, cfg, ledger, outcomes)
    if not cfg.statuses_file:
        outcomes.pending(cands)
    else:
        _reviewed(p, cands, videos, cfg, outcomes)
    outcomes.write()
    _write_video_facts(videos, cfg)


def _list_pairs(p: beam.Pipeline, cfg: PipelineConfig, outcomes: Outcomes) -> tuple[Any, Any]:
    """(every video-request pair, the evaluation's alone): the custom manifest's, the video
    datasets' planned in their released layouts, and the training manifest's."""
    pairs, listing_rejected = _enumerate(p, cfg.root, cfg.manifest, False, "")
    if cfg.datasets:
        planned, planned_rejected, planned_filtered = _plan_datasets(p, cfg)
        pairs = (pairs, planned) | "AllListedPairs" >> beam.Flatten()
        listing_rejected = (listing_rejected, planned_rejected) | "AllListedRejected" >> beam.Flatten()
        outcomes.filtered_inputs(planned_filtered, "listing_filtered")
    outcomes.rejected(listing_rejected, "listing")
    test_pairs = pairs
    if cfg.train is not None:
        train_pairs, train_listing = _enumerate(p, cfg.root, cfg.train.manifest, True, "Train")
        outcomes.rejected(train_listing, "listing", TRAIN_REJECTED)
        pairs = (pairs, train_pairs) | "AllPairs" >> beam.Flatten()
    outcomes.inputs(pairs)
    return pairs, test_pairs


def _normalized(pairs: Any, cfg: PipelineConfig) -> Any:
    """(video key, NormalizedVideo | VideoFailure): each distinct video decoded once."""
    return (
        pairs
        | "VideoPaths" >> beam.Map(lambda x: (_pair_key(x), _video_path(x)))
        | "DistinctVideos" >> beam.Distinct()
        | "SpreadVideos" >> beam.Reshuffle()
        | "Normalize" >> beam.ParDo(NormalizeVideo(
            {"": cfg.root, **{name: root for name, root, _ in cfg.datasets}}, cfg.frames,
            staged_root(cfg.staging), cfg.reuse_frames))
    )


def _with_videos(pairs: Any, videos: Any) -> Any:
    """(pair, its normalized video) for every pair."""
    total = AsSingleton(pairs | "CountVideosTotal" >> beam.combiners.Count.Globally())
    return (
        {"pair": pairs | "KeyPairs" >> beam.Map(lambda x: (_pair_key(x), x)), "video": videos}
        | "JoinVideos" >> beam.CoGroupByKey()
        | "PairWithVideo" >> beam.FlatMap(
            lambda kv: [(pair, (kv[1]["video"] or [VideoFailure("?", "video", "not normalized")])[0])
                        for pair in kv[1]["pair"]])
        | "ProgressPairs" >> beam.ParDo(ReportProgress("video-request pairs"), total=total)
    )


def _held_out(joined: Any, test_pairs: Any, videos: Any, outcomes: Outcomes) -> Any:
    """The pairs without a training pair whose video is an evaluation video, by source id or by
    decoded stream (heldout.py); those are filtered."""
    # every video the evaluation manifest lists, released or not (heldout.py)
    test_ids = (test_pairs | "TestIds" >> beam.Map(lambda x: (video_key(x), True))
                | "OneTestId" >> beam.Distinct())
    test_streams = (
        videos
        | "TestVideos" >> beam.Filter(lambda kv: not kv[0].startswith(TRAIN_PREFIX)
                                      and not isinstance(kv[1], VideoFailure))
        | "TestStreams" >> beam.MapTuple(lambda k, v: (video_stream_sha256(v), source_id(k)))
        | "OneSourcePerStream" >> beam.CombinePerKey(min)
    )
    held = joined | "HoldOut" >> beam.ParDo(
        HoldOut(), test_ids=AsDict(test_ids), test_streams=AsDict(test_streams)).with_outputs(
        FILTERED_TAG, main="kept")
    outcomes.filtered(held[FILTERED_TAG], folder=TRAIN_FILTERED)
    return held.kept


def _candidates(p: beam.Pipeline, joined: Any, cfg: PipelineConfig,
                ledger: dict[str, list[dict[str, Any]]] | None, outcomes: Outcomes) -> Any:
    """The generated candidates, each with its version from the ledger; written for the driver."""
    batch = cfg.gemini.batch_size if cfg.generator == "gemini" and cfg.gemini else 16
    generated = (
        joined
        | "Batch" >> beam.BatchElements(min_batch_size=1, max_batch_size=batch)
        | "Generate" >> beam.ParDo(GenerateCandidates(cfg)).with_outputs(REJECTED, main="cands")
    )
    if cfg.train is None:
        outcomes.rejected(generated[REJECTED], "candidate")
    else:
        gen_test, gen_train = generated[REJECTED] | "GenRejectedBySplit" >> beam.Partition(_by_split, 2)
        outcomes.rejected(gen_test, "candidate")
        outcomes.rejected(gen_train, "candidate", TRAIN_REJECTED)
    ledger_pc = p | "Ledger" >> beam.Create(sorted((ledger or {}).items()))
    cands = generated.cands | "Version" >> beam.Map(
        lambda c, led: assign_version(c, led), led=AsDict(ledger_pc))
    cands | "WriteCandidates" >> CANDIDATES.write(cfg.staging)
    return cands


def _reviewed(p: beam.Pipeline, cands: Any, videos: Any, cfg: PipelineConfig,
              outcomes: Outcomes) -> None:
    """The approved candidates allocated to their subtypes' targets and written as samples and
    pointwise rows; the rest filtered. A training split's approved go to :func:`_training`."""
    gated = cands | "ReviewGate" >> GateByReview(cfg.statuses_file)
    approved, review_filtered = gated.approved, gated[FILTERED_TAG]
    if cfg.train is not None:
        approved, approved_train = approved | "ApprovedBySplit" >> beam.Partition(_by_split, 2)
        review_filtered, review_train = (review_filtered
                                         | "ReviewedBySplit" >> beam.Partition(_by_split, 2))
        outcomes.filtered(review_train, folder=TRAIN_FILTERED)
        _training(cfg, cfg.train, approved_train, videos, outcomes)
    allocated = (
        approved
        | "BySubtype" >> beam.Map(lambda c: (c["subtype"], c))
        | "GroupSubtype" >> beam.GroupByKey()
        | "Allocate" >> beam.ParDo(Allocate(dict(cfg.targets), cfg.seed)).with_outputs(
            FILTERED_TAG, main="kept")
    )
    kept = allocated.kept
    outcomes.kept(kept)
    outcomes.filtered(review_filtered)
    outcomes.filtered(allocated[FILTERED_TAG])
    records = (
        {"cand": kept | "KeyKept" >> beam.Map(lambda c: (_video_key_of(c), c)), "video": videos}
        | "JoinKeptVideos" >> beam.CoGroupByKey()
        | "Serialize" >> beam.FlatMapTuple(_serialize)
    )
    samples = records | "Samples" >> beam.Filter(lambda kv: kv[0] == "sample") | "S" >> beam.Values()
    points = records | "Pointwise" >> beam.Filter(lambda kv: kv[0] == "pointwise") | "P" >> beam.Values()
    samples | "WriteSamples" >> WriteShardedParquet(
        cfg.staging, lambda r: f"data/{config_name(r['subtype'])}", SAMPLE, cfg.split)
    points | "WritePointwise" >> WriteShardedParquet(
        cfg.staging, lambda r: f"pointwise/{config_name(r['subtype'])}", POINTWISE, cfg.split)


def _write_video_facts(videos: Any, cfg: PipelineConfig) -> None:
    """Each video's facts for the release: the evaluation's, and a training split's apart."""
    facts = videos | "VideoFacts" >> beam.MapTuple(lambda k, v: {
        "environment": "videos", "file": k,
        "sha256": v.sha256 if not isinstance(v, VideoFailure) else f"unreadable: {v.reason}",
        "duration_s": getattr(v, "duration_s", 0.0), "header_frames": getattr(v, "header_frames", 0),
        "decodable_frames": getattr(v, "decodable_frames", 0)})
    if cfg.train is None:
        facts | "WriteVideos" >> VIDEOS.write(cfg.staging)
        return
    (facts | "TestVideoFacts" >> beam.Filter(lambda f: not f["file"].startswith(TRAIN_PREFIX))
     | "WriteVideos" >> VIDEOS.write(cfg.staging))
    (
        videos
        | "TrainVideos" >> beam.Filter(lambda kv: kv[0].startswith(TRAIN_PREFIX))
        | "TrainVideoFacts" >> beam.MapTuple(lambda k, v: {
            "source_id": source_id(k),
            "sha256": v.sha256 if not isinstance(v, VideoFailure) else f"unreadable: {v.reason}",
            "stream_sha256": None if isinstance(v, VideoFailure) else video_stream_sha256(v),
            "duration_s": getattr(v, "duration_s", 0.0)})
        | "WriteTrainVideos" >> TRAIN_VIDEOS.write(cfg.staging)
    )


def _training(cfg: PipelineConfig, train: TrainConfig, approved, videos, outcomes: Outcomes) -> None:
    """Approved training candidates → SFT streams and RL seed rows (training.py), written; the
    over-target candidates are filtered, the rest kept (``outcomes``)."""
    allocated = (
        approved
        | "ByCategory" >> beam.Map(lambda c: (c["category"], c))
        | "GroupCategory" >> beam.GroupByKey()
        | "AllocateTraining" >> beam.ParDo(AllocateTraining(train, cfg.seed)).with_outputs(
            FILTERED_TAG, main="kept")
    )
    outcomes.filtered(allocated[FILTERED_TAG], folder=TRAIN_FILTERED)
    outcomes.kept(allocated.kept)
    records = (
        {"cand": allocated.kept | "KeyKeptTrain" >> beam.Map(lambda c: (_video_key_of(c), c)),
         "video": videos}
        | "JoinTrainVideos" >> beam.CoGroupByKey()
        | "SerializeTraining" >> beam.FlatMapTuple(
            lambda key, grouped: _serialize_train(key, grouped, train.before_s, train.after_s))
    )
    sft = records | "Sft" >> beam.Filter(lambda kv: kv[0] == "sft") | "SftValues" >> beam.Values()
    rl = records | "Rl" >> beam.Filter(lambda kv: kv[0] == "rl") | "RlValues" >> beam.Values()
    sft | "WriteSft" >> WriteShardedParquet(
        cfg.staging, lambda r: f"sft/{config_name(r['subtype'])}", SFT_STREAM, TRAIN_SPLIT)
    rl | "WriteRlSeed" >> WriteShardedParquet(
        cfg.staging, lambda r: f"rl_seed/{r['category']}", RL_SEED, TRAIN_SPLIT)
