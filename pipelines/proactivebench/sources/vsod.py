"""VSOD — OcclusionDataSet-MM20 (ProactiveBench App. 0.A.2), read from a sequence manifest.

A video in which someone passes in front of the camera. The start frame is one where the subject
is fully occluded — the paper identifies it manually, so the manifest must give it
(``start_frame``). ``answerable_frames`` are the frames where the question can be answered;
``question_type`` is one of speaker / count / event (the three question pools of App. 0.A.2).
Rewind/wait move one frame back/forward, circularly. The reference frame defaults to the first
answerable frame after the start (the frame "wait for the occlusion to disappear" reaches
first), else the first answerable one. Frames may also come from ``video`` sampled at ``fps``.
"""

from __future__ import annotations

from typing import Any

from core.errors import BadInput
from pipelines.common.sources import Frame, ItemRef
from pipelines.proactivebench.sources._manifest import ManifestReader, index_list, require

QUESTION_TYPES = ("speaker", "count", "event")


class VSODReader(ManifestReader):
    """VSOD sequences with a manually identified, fully occluded start frame."""

    environment = "vsod"
    allow_video = True

    def validate(self, rec: dict[str, Any], n_frames: int | None, where: str) -> dict[str, Any]:
        qtype = require(rec, "question_type", str, where)
        if qtype not in QUESTION_TYPES:
            raise BadInput(where, "question_type", f"{qtype!r} not in {list(QUESTION_TYPES)}")
        start = require(rec, "start_frame", int, where)
        if start < 0 or (n_frames is not None and start >= n_frames):
            raise BadInput(where, "start_frame", f"{start} is not a frame index in [0, {n_frames})")
        answerable = index_list(rec, "answerable_frames", n_frames, where)
        if start in answerable:
            raise BadInput(where, "start_frame", "the start frame must be fully occluded, but it "
                                                 "is listed in answerable_frames")
        strong = index_list(rec, "strong_occlusions", n_frames, where, default=[])
        return {"question_type": qtype, "start_frame": start, "answerable_frames": answerable,
                "strong_occlusions": strong}

    def group_labels(self, payload: dict[str, Any]) -> list[tuple[str, str]]:
        return [(payload["question_type"], payload["category"])]

    def build(self, ref: ItemRef, frames: list[Frame]) -> dict[str, Any]:
        p = ref.payload
        n = len(frames)
        # only possible for video manifests, whose length is known after decoding (a
        # truncated file decodes fewer frames than the annotation expects)
        where = p.get("video", f"manifest.jsonl:{p['line']}")
        if p["start_frame"] >= n:
            raise BadInput(where, "start_frame", f"{p['start_frame']} beyond the {n} frames")
        bad = [i for i in p["answerable_frames"] if i >= n]
        if bad:
            raise BadInput(where, "answerable_frames", f"indices {bad} beyond the {n} frames")
        after = [i for i in p["answerable_frames"] if i > p["start_frame"]]
        reference = after[0] if after else p["answerable_frames"][0]
        return {
            "category": p["category"],
            "start_frame": p["start_frame"],
            "reference_frame": reference,
            "goal_frames": p["answerable_frames"],
            "metadata": {"question_type": p["question_type"],
                         "answerable_frames": p["answerable_frames"],
                         "strong_occlusions": p["strong_occlusions"],
                         "type_vocabulary": p.get("type_vocabulary", [])},
        }
