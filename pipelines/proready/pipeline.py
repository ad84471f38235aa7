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

from dataclasses import dataclass, field
from typing import Any

import apache_beam as beam
from apache_beam.pvalue import TaggedOutput

from clients import ModelClient
from core.blobs import blob_root
from pipelines.common.outcomes import Outcomes
from pipelines.common.progress import ReportProgress, ReportsProgress
from pipelines.common.sources import SourceItem, SourceReader
from pipelines.common.transforms import (
    REJECTED,
    ReadSources,
    WriteShardedParquet,
)
from pipelines.proready import build_facts
from pipelines.proready.generation import ITEMS, GenerationConfig, build_video
from pipelines.proready.models import ROLES
from pipelines.proready.released import release_record
from pipelines.proready.review import apply_corrections, decide
from pipelines.proready.sources import VIDEOS
from schemas.proready import FILTERED_ITEM, RELEASED_ITEM

FILTERED = "filtered"
COUNTS = "counts"  # ((group, stage), n) tags the steps count themselves (Outcomes.counted)
STATUS = "status"
CANDIDATES = "candidates"


@dataclass(frozen=True)
class PipelineConfig:
    staging: str
    generation: GenerationConfig
    review: bool = False  # decisions were given: gate the candidates (else: pending review)
    decisions: dict[str, list[dict[str, Any]]] = field(default_factory=dict, hash=False)  # by id
    corrections: dict[str, list[tuple[int, dict[str, Any]]]] = field(default_factory=dict, hash=False)
    corrections_file: str = ""
    panel_size: int = 4
    violations: dict[str, list[dict[str, Any]]] = field(default_factory=dict, hash=False)  # by id


class BuildCandidates(ReportsProgress):
    """SourceItem (one video) → candidate items, filtered items, rejections and count events."""

    def __init__(self, cfg: GenerationConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.clients: dict[str, ModelClient] = {}

    def setup(self) -> None:
        super().setup()  # the model requests' progress reaches the driver's board
        models = self.cfg.models
        self.clients = {role: models.client(role, label=role) for role in ROLES if models.spec(role)}

    def teardown(self) -> None:
        for client in self.clients.values():
            client.close()  # the last answers of this worker reach the cache

    def process(self, item: SourceItem):
        res = build_video(item.metadata["video"], self.cfg, self.clients)
        if res.video_rejected is not None:
            yield TaggedOutput(REJECTED, res.video_rejected)
            yield TaggedOutput(COUNTS, ((VIDEOS, "generate_rejected"), 1))
            return
        yield TaggedOutput(COUNTS, ((VIDEOS, "kept"), 1))
        for cand in res.kept:
            yield TaggedOutput(COUNTS, ((ITEMS, "enumerated"), 1))
            yield cand
        for cand in res.filtered:
            yield TaggedOutput(COUNTS, ((ITEMS, "enumerated"), 1))
            yield TaggedOutput(COUNTS, ((ITEMS, "filtered"), 1))
            yield TaggedOutput(FILTERED, cand)
        for rej in res.rejected:
            yield TaggedOutput(COUNTS, ((ITEMS, "enumerated"), 1))
            yield TaggedOutput(COUNTS, ((ITEMS, f"{rej.stage}_rejected"), 1))
            yield TaggedOutput(REJECTED, rej)


class ReviewGate(beam.DoFn):
    """(item id, [candidate], [corrections]) → the latest version after the corrections, kept if
    all reviewers approved exactly it, else filtered with its review state; a bad correction (or
    one of an unknown item) is a rejection (StreamReady App. C "Human Refinement")."""

    def __init__(self, cfg: PipelineConfig) -> None:
        self.cfg = cfg

    def process(self, element):
        sid, grouped = element
        cands = list(grouped["candidate"])
        latest, rejected = apply_corrections(cands[0] if cands else None,
                                             [c for part in grouped["corrections"] for c in part],
                                             self.cfg.corrections_file)
        for rej in rejected:  # every bad correction is listed; the item is counted once
            yield TaggedOutput(REJECTED, rej)
        if latest is None:
            if cands:  # a candidate whose correction failed: rejected instead of reviewed
                yield TaggedOutput(COUNTS, ((ITEMS, "review_correction_rejected"), 1))
            return
        approved, item, status = decide(latest, self.cfg.decisions.get(sid, []), self.cfg.panel_size,
                                        self.cfg.violations.get(sid, []))
        yield TaggedOutput(STATUS, {"id": sid, "state": status.state, "version": status.version,
                                    "approvals": list(status.approvals),
                                    "objections": [list(o) for o in status.objections],
                                    "corrected": int(latest["version"]) > 1})
        if approved:
            yield TaggedOutput(COUNTS, ((ITEMS, "kept"), 1))
            yield item
        else:
            yield TaggedOutput(COUNTS, ((ITEMS, "filtered"), 1))
            yield TaggedOutput(FILTERED, item)


def build_pipeline(p: beam.Pipeline, reader: SourceReader, cfg: PipelineConfig) -> None:
    """Add the build to ``p``; outputs land under ``cfg.staging``: the candidates (pending review)
    or, with decisions, the released items per task type. ``reader``: the custom manifest
    (:class:`~pipelines.proready.sources.ProReadyReader`), or it and the listed video datasets
    as one ``videos`` source (:class:`~pipelines.proready.native.ProReadySources`)."""
    read = p | "ReadVideos" >> ReadSources({reader.environment: reader}, blob_root(cfg.staging))
    built = read["items"] | "BuildCandidates" >> beam.ParDo(BuildCandidates(cfg.generation)).with_outputs(
        FILTERED, REJECTED, COUNTS, main=CANDIDATES
    )
    candidates = built[CANDIDATES] | "ProgressCandidates" >> beam.ParDo(ReportProgress("proready candidates"))
    # a video counts as kept when it gave candidates, each candidate as an input of the items
    # group: the steps count their own outcomes (COUNTS), the bundle writes them
    outcomes = Outcomes(cfg.staging, FILTERED_ITEM)
    outcomes.counted(read["counts"])
    outcomes.counted(built[COUNTS])
    outcomes.rejected(read["listing_rejected"], None)
    outcomes.rejected(read["load_rejected"], None)
    outcomes.rejected(built[REJECTED], None)
    outcomes.filtered(built[FILTERED], None)
    outcomes.filtered_inputs(read["listing_filtered"])
    if not cfg.review:
        outcomes.pending(candidates, lambda _: ITEMS)
        candidates | "WriteCandidates" >> build_facts.CANDIDATES.write(cfg.staging)
    else:
        corrections = p | "Corrections" >> beam.Create(sorted(cfg.corrections.items()))
        gated = (
            {"candidate": candidates | "KeyById" >> beam.Map(lambda c: (c["id"], c)),
             "corrections": corrections}
            | "JoinCorrections" >> beam.CoGroupByKey()
            | "ReviewGate" >> beam.ParDo(ReviewGate(cfg)).with_outputs(
                FILTERED, REJECTED, COUNTS, STATUS, main="kept")
        )
        outcomes.counted(gated[COUNTS])
        outcomes.rejected(gated[REJECTED], None)
        outcomes.filtered(gated[FILTERED], None)
        gated[STATUS] | "WriteReviewStates" >> build_facts.REVIEW_STATES.write(cfg.staging)
        (gated.kept | "ReleaseRecords" >> beam.Map(release_record)
         | "WriteKept" >> WriteShardedParquet(
             cfg.staging, lambda r: f"data/{r['task_type']}", RELEASED_ITEM, "test"))
    outcomes.write()
    (
        read["items"]
        | "SourceFiles" >> beam.FlatMap(
            lambda it: [{"environment": VIDEOS, "file": f, "sha256": s} for f, s in it.source_files])
        | "WriteSources" >> build_facts.SOURCES.write(cfg.staging)
    )
