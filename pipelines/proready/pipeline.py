"""The ProReady-QA Beam pipeline: read videos → generate candidates + evidence → write (App. C).

Mirrors :mod:`pipelines.proactivebench.pipeline`: small named transforms, no local state, all
files through Beam file systems, staged output the driver (:mod:`pipelines.proready.build`) turns
into a review state or a release. The unit of work is one video (its frames are decoded once and
shared by captions and the frame-wise check); the unit of accounting is the candidate item.

Two accounting environments (design.md §Conventions "nothing lost", checked by the driver):

* ``videos`` — inputs = manifest entries; kept = videos processed; rejected = unreadable video,
  annotation past the end, malformed caption/summary output, bad manifest entry.
* ``items`` — inputs = candidates generated; kept = candidates awaiting review; filtered =
  ``evidence_not_found``; rejected = malformed QA output, evidence preceding the question, window
  outside the video.
"""

from __future__ import annotations

from dataclasses import dataclass

import apache_beam as beam
from apache_beam.pvalue import TaggedOutput

from clients import ModelClient
from pipelines.common.progress import ReportProgress
from pipelines.common.transforms import REJECTED, ReadSource, WriteJson, WriteShardedParquet
from pipelines.proready.generation import ITEMS, GenerationConfig, build_video
from pipelines.proready.models import ROLES
from pipelines.proready.sources import VIDEOS, ProReadyReader
from pipelines.sources.base import SourceItem
from schemas.outcomes import REJECTION
from schemas.proready import FILTERED_ITEM, ITEM

FILTERED = "filtered"
COUNTS = "counts"
CANDIDATES = "candidates"


@dataclass(frozen=True)
class PipelineConfig:
    staging: str
    generation: GenerationConfig


class BuildCandidates(beam.DoFn):
    """SourceItem (one video) → candidate items, filtered items, rejections and count events."""

    def __init__(self, cfg: GenerationConfig) -> None:
        self.cfg = cfg
        self.clients: dict[str, ModelClient] = {}

    def setup(self) -> None:
        models = self.cfg.models
        self.clients = {role: models.client(role, label=role) for role in ROLES if models.spec(role)}

    def teardown(self) -> None:
        for client in self.clients.values():
            client.close()  # the last answers of this worker reach the cache

    def process(self, item: SourceItem):
        res = build_video(item.metadata["video"], self.cfg, self.clients)
        if res.video_rejected is not None:
            yield TaggedOutput(REJECTED, res.video_rejected)
            yield TaggedOutput(COUNTS, (VIDEOS, "generate_rejected"))
            return
        yield TaggedOutput(COUNTS, (VIDEOS, "kept"))
        for cand in res.kept:
            yield TaggedOutput(COUNTS, (ITEMS, "enumerated"))
            yield TaggedOutput(COUNTS, (ITEMS, "kept"))
            yield cand
        for cand in res.filtered:
            yield TaggedOutput(COUNTS, (ITEMS, "enumerated"))
            yield TaggedOutput(COUNTS, (ITEMS, "filtered"))
            yield TaggedOutput(FILTERED, cand)
        for rej in res.rejected:
            yield TaggedOutput(COUNTS, (ITEMS, "enumerated"))
            yield TaggedOutput(COUNTS, (ITEMS, f"{rej.stage}_rejected"))
            yield TaggedOutput(REJECTED, rej)


def build_pipeline(p: beam.Pipeline, reader: ProReadyReader, cfg: PipelineConfig) -> None:
    """Add the candidate build to ``p``; outputs land under ``cfg.staging``."""
    read = p | "ReadVideos" >> ReadSource(reader, f"{cfg.staging}/_build/blobs")
    built = read["items"] | "BuildCandidates" >> beam.ParDo(BuildCandidates(cfg.generation)).with_outputs(
        FILTERED, REJECTED, COUNTS, main=CANDIDATES
    )
    candidates = built[CANDIDATES] | "ProgressCandidates" >> beam.ParDo(ReportProgress("proready candidates"))
    counts = [
        read["refs"] | "CountRefs" >> beam.Map(lambda _: (VIDEOS, "enumerated")),
        read["listing_rejected"] | "CountListRejected" >> beam.Map(lambda _: (VIDEOS, "listing_rejected")),
        read["load_rejected"] | "CountLoadRejected" >> beam.Map(lambda _: (VIDEOS, "read_rejected")),
        built[COUNTS],
    ]
    rejected = (
        (read["listing_rejected"], read["load_rejected"], built[REJECTED]) | "AllRejected" >> beam.Flatten()
    )
    files = [
        candidates | "WriteCandidates" >> WriteShardedParquet(
            cfg.staging, lambda r: CANDIDATES, ITEM, CANDIDATES),
        built[FILTERED] | "WriteFiltered" >> WriteShardedParquet(
            cfg.staging, lambda r: FILTERED, FILTERED_ITEM, FILTERED),
        rejected
        | "RejectionRecords" >> beam.Map(lambda r: r.to_record())
        | "WriteRejected" >> WriteShardedParquet(
            cfg.staging, lambda r: REJECTED, REJECTION, REJECTED, unique=False),
    ]
    (files | "AllFiles" >> beam.Flatten()) | "WriteFileList" >> WriteJson(f"{cfg.staging}/_build/files.json")
    (
        counts
        | "AllCounts" >> beam.Flatten()
        | "CountPerStage" >> beam.combiners.Count.PerElement()
        | "CountRecords" >> beam.MapTuple(lambda k, n: {"environment": k[0], "stage": k[1], "n": n})
        | "WriteCounts" >> WriteJson(f"{cfg.staging}/_build/counts.json")
    )
    (
        read["items"]
        | "SourceFiles" >> beam.FlatMap(
            lambda it: [{"environment": VIDEOS, "file": f, "sha256": s} for f, s in it.source_files])
        | "WriteSources" >> WriteJson(f"{cfg.staging}/_build/sources.json")
    )
