"""The StreamVibe-Bench Beam pipeline (StreamVibe §3.3, App. B.2-B.3).

    Enumerate (manifest → video-request pairs) → Normalize (once per video: real duration,
    causal 1 FPS frames) → Generate (rule | Gemini) → Validate → NegativeProbes → Version
    → [ReviewGate → Allocate → Serialize (stream/trajectory + pointwise)] → Write

Without reviews the bracketed part is skipped: the build stops at the candidates (the driver
writes them as the *pending review* state). Every pair ends in exactly one of kept, filtered
(review, allocation) or rejected (listing, normalize, generate, validate) — or, before review,
pending — and is counted per subtype for ``inputs = kept + filtered + rejected`` (design.md §Conventions).
Mirrors :mod:`pipelines.proactivebench.pipeline`: small named transforms, no local state, all
files through Beam file systems, so any runner works.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import apache_beam as beam
from apache_beam.io.filesystems import FileSystems
from apache_beam.pvalue import AsDict, AsSingleton, TaggedOutput

from core.blobs import BlobStore
from core.errors import BadInput, Rejection
from core.files import canonical_json
from pipelines.common.progress import ReportProgress
from pipelines.common.transforms import (
    REJECTED,
    CountAs,
    CountOutcomes,
    WriteFileList,
    WriteJson,
    WriteRejections,
    WriteShardedParquet,
)
from pipelines.streamvibe.candidates import RuleGenerator, assemble
from pipelines.streamvibe.negatives import negative_probes
from pipelines.streamvibe.normalize import VideoFailure, normalize_video
from pipelines.streamvibe.review import assign_version, evidence_json, gate
from pipelines.streamvibe.serialize import allocate, pointwise_records, sample_record
from pipelines.streamvibe.sources import enumerate_pairs, load_intent_specs, video_key
from pipelines.streamvibe.validate import validate_candidate
from schemas.streamvibe import BENCHMARK, FILTERED, POINTWISE, SAMPLE, config_name

if TYPE_CHECKING:
    from pipelines.streamvibe.gemini import GeminiSettings

FILTERED_TAG = "filtered"


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
    review: bool = False  # apply the review gate (a decision log was given)


def _reject(err: BadInput, subtype: str, stage: str, item_id: str) -> Rejection:
    return Rejection.from_bad_input(err, benchmark=BENCHMARK, environment=subtype, stage=stage,
                                    item_id=item_id)


class _Split(beam.DoFn):
    def process(self, element):
        if isinstance(element, Rejection):
            yield TaggedOutput(REJECTED, element)
        else:
            yield element


class NormalizeVideo(beam.DoFn):
    """(video key, path) → (video key, NormalizedVideo | BadInput); decoded once per video. The
    1 FPS frames go to the blob store at once; the video carries references (core.blobs)."""

    def __init__(self, root: str, frames: dict[str, Any], blobs: str) -> None:
        self.root = root
        self.frames = frames
        self.blobs = blobs
        self.store: BlobStore | None = None

    def setup(self) -> None:
        self.store = BlobStore(self.blobs)

    def process(self, element):
        key, rel = element
        try:
            try:
                with FileSystems.open(FileSystems.join(self.root, rel)) as fh:
                    data = fh.read()
            except Exception as exc:  # noqa: BLE001 - missing/unreadable file is bad input
                raise BadInput(rel, "video", f"cannot read video ({type(exc).__name__})") from exc
            video = normalize_video(
                data, rel, max_side=int(self.frames.get("max_side", 448)),
                jpeg_quality=int(self.frames.get("jpeg_quality", 90)))
            yield key, dataclasses.replace(video, frames=tuple(self.store.put(b) for b in video.frames))
        except BadInput as err:
            yield key, VideoFailure.of(err)


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


class GenerateCandidates(beam.DoFn):
    """A batch of (pair, video) → validated, probed candidates; failures become rejections."""

    def __init__(self, cfg: PipelineConfig) -> None:
        self.cfg = cfg
        self.generator = None

    def setup(self) -> None:
        self.generator = make_generator(self.cfg)

    def teardown(self) -> None:
        if self.generator is not None:
            self.generator.close()  # the last answers of this worker reach the cache

    def process(self, batch):
        ok = []
        for pair, video in batch:
            if isinstance(video, VideoFailure):
                yield TaggedOutput(REJECTED, _reject(video.to_bad_input(), pair["subtype"], "normalize",
                                                     pair["id"]))
            else:
                ok.append((pair, video))
        raws = self.generator.generate_many(ok) if ok else []
        neg = self.cfg.negatives
        for (pair, video), raw in zip(ok, raws, strict=True):
            if isinstance(raw, BadInput):
                yield TaggedOutput(REJECTED, _reject(raw, pair["subtype"], "generate", pair["id"]))
                continue
            try:
                cand = validate_candidate(assemble(pair, video, raw, self.generator))
            except BadInput as err:
                yield TaggedOutput(REJECTED, _reject(err, pair["subtype"], "validate", pair["id"]))
                continue
            cand["negative_probes"] = negative_probes(
                cand, seed=self.cfg.seed, per_sample=int(neg.get("per_sample", 4)),
                tau_s=float(neg.get("tau_s", 2)), max_distance=float(neg.get("max_distance", 8)))
            yield cand


class ReviewGate(beam.DoFn):
    """Approved (all reviewers, same version) → main; anything else → filtered (review)."""

    def process(self, cand, statuses):
        status = statuses.get(cand["id"])
        approved, reason, record = gate(cand, status)
        if approved:
            yield dict(cand, review=record)
        else:
            yield TaggedOutput(FILTERED_TAG, _filtered(cand, "review", reason, evidence_json(status)))


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
    return f"{c['source_collection']}/{c['source_video_id']}"


def _serialize(key, grouped):
    videos = [v for v in grouped["video"] if not isinstance(v, VideoFailure)]
    for cand in grouped["cand"]:
        sample = sample_record(cand, videos[0], cand.get("review", []))
        yield "sample", sample
        for row in pointwise_records(sample):
            yield "pointwise", row


def _subtype(x: Any) -> str:
    """Counts group of a pair, candidate or rejection: its intent subtype."""
    return x.environment if isinstance(x, Rejection) else x["subtype"]


def build_pipeline(p: beam.Pipeline, cfg: PipelineConfig, statuses: dict[str, Any] | None = None,
                   ledger: dict[str, list[dict[str, Any]]] | None = None) -> None:
    listed = (
        p
        | "Start" >> beam.Create([cfg.root])
        | "Enumerate" >> beam.FlatMap(lambda root: enumerate_pairs(root, cfg.manifest))
        | "SplitListing" >> beam.ParDo(_Split()).with_outputs(REJECTED, main="pairs")
    )
    pairs = listed.pairs
    counts = [pairs | "CountPairs" >> CountAs("enumerated", _subtype),
              listed[REJECTED] | "CountListingRejected" >> CountAs("listing_rejected", _subtype)]
    rejected = [listed[REJECTED]]

    total = AsSingleton(pairs | "CountVideosTotal" >> beam.combiners.Count.Globally())
    videos = (
        pairs
        | "VideoPaths" >> beam.Map(lambda x: (video_key(x), x["video"]))
        | "DistinctVideos" >> beam.Distinct()
        | "SpreadVideos" >> beam.Reshuffle()
        | "Normalize" >> beam.ParDo(NormalizeVideo(cfg.root, cfg.frames, f"{cfg.staging}/_build/blobs"))
    )
    joined = (
        {"pair": pairs | "KeyPairs" >> beam.Map(lambda x: (video_key(x), x)), "video": videos}
        | "JoinVideos" >> beam.CoGroupByKey()
        | "PairWithVideo" >> beam.FlatMap(
            lambda kv: [(pair, (kv[1]["video"] or [VideoFailure("?", "video", "not normalized")])[0])
                        for pair in kv[1]["pair"]])
        | "ProgressPairs" >> beam.ParDo(ReportProgress("video-request pairs"), total=total)
    )
    batch = cfg.gemini.batch_size if cfg.generator == "gemini" and cfg.gemini else 16
    generated = (
        joined
        | "Batch" >> beam.BatchElements(min_batch_size=1, max_batch_size=batch)
        | "Generate" >> beam.ParDo(GenerateCandidates(cfg)).with_outputs(REJECTED, main="cands")
    )
    rejected.append(generated[REJECTED])
    counts.append(generated[REJECTED] | "CountGenRejected" >> CountAs("candidate_rejected", _subtype))
    ledger_pc = p | "Ledger" >> beam.Create(sorted((ledger or {}).items()))
    cands = generated.cands | "Version" >> beam.Map(
        lambda c, led: assign_version(c, led), led=AsDict(ledger_pc))
    cands | "WriteCandidates" >> WriteJson(f"{cfg.staging}/_build/candidates.json")

    files = []
    if not cfg.review:
        counts.append(cands | "CountPending" >> CountAs("pending", _subtype))
    else:
        status_pc = p | "Statuses" >> beam.Create(sorted((statuses or {}).items()))
        gated = cands | "ReviewGate" >> beam.ParDo(ReviewGate(), statuses=AsDict(status_pc)).with_outputs(
            FILTERED_TAG, main="approved")
        allocated = (
            gated.approved
            | "BySubtype" >> beam.Map(lambda c: (c["subtype"], c))
            | "GroupSubtype" >> beam.GroupByKey()
            | "Allocate" >> beam.ParDo(Allocate(dict(cfg.targets), cfg.seed)).with_outputs(
                FILTERED_TAG, main="kept")
        )
        kept = allocated.kept
        filtered = (gated[FILTERED_TAG], allocated[FILTERED_TAG]) | "AllFiltered" >> beam.Flatten()
        counts += [kept | "CountKept" >> CountAs("kept", _subtype),
                   filtered | "CountFiltered" >> CountAs("filtered", _subtype)]
        records = (
            {"cand": kept | "KeyKept" >> beam.Map(lambda c: (_video_key_of(c), c)), "video": videos}
            | "JoinKeptVideos" >> beam.CoGroupByKey()
            | "Serialize" >> beam.FlatMapTuple(_serialize)
        )
        samples = records | "Samples" >> beam.Filter(lambda kv: kv[0] == "sample") | "S" >> beam.Values()
        points = records | "Pointwise" >> beam.Filter(lambda kv: kv[0] == "pointwise") | "P" >> beam.Values()
        files += [
            samples | "WriteSamples" >> WriteShardedParquet(
                cfg.staging, lambda r: f"data/{config_name(r['subtype'])}", SAMPLE, cfg.split),
            points | "WritePointwise" >> WriteShardedParquet(
                cfg.staging, lambda r: f"pointwise/{config_name(r['subtype'])}", POINTWISE, cfg.split),
            filtered | "WriteFiltered" >> WriteShardedParquet(
                cfg.staging, lambda r: "filtered", FILTERED, "filtered"),
        ]
    files.append(tuple(rejected) | "WriteRejected" >> WriteRejections(cfg.staging))
    tuple(files) | "FileList" >> WriteFileList(cfg.staging)
    tuple(counts) | "CountOutcomes" >> CountOutcomes(cfg.staging)
    (
        videos
        | "VideoFacts" >> beam.MapTuple(lambda k, v: {
            "environment": "videos", "file": k,
            "sha256": v.sha256 if not isinstance(v, VideoFailure) else f"unreadable: {v.reason}",
            "duration_s": getattr(v, "duration_s", 0.0), "header_frames": getattr(v, "header_frames", 0),
            "decodable_frames": getattr(v, "decodable_frames", 0)})
        | "WriteVideos" >> WriteJson(f"{cfg.staging}/_build/videos.json")
    )

