"""MVP-N — multi-view objects (ProactiveBench App. 0.A.3), read from a sequence manifest.

Views are ordered from uninformative to informative; the episode starts at view 0 and every
rotation moves to the next view until the last, informative one (the authors' package serves
the informative image only at the last turn). ``informative_views`` lists the views where the
object is distinguishable (default: the last view). Wrong options must be *similar* categories
("to avoid leakages in the informativeness of each view"), so each line carries
``similar_categories`` (at least three, the number of wrong options).
"""

from __future__ import annotations

from typing import Any

from core.errors import BadInput
from pipelines.common.sources import Frame, ItemRef
from pipelines.proactivebench.sources._manifest import ManifestReader, index_list, require

MIN_SIMILAR = 3


class MVPNReader(ManifestReader):
    """MVP-N view sequences: start 0, reference = last view."""

    environment = "mvpn"

    def validate(self, rec: dict[str, Any], n_frames: int | None, where: str) -> dict[str, Any]:
        assert n_frames is not None
        if n_frames < 2:
            raise BadInput(where, "frames", "need at least 2 views (uninformative + informative)")
        views = index_list(rec, "informative_views", n_frames, where, default=[n_frames - 1])
        if 0 in views:
            raise BadInput(where, "informative_views", "view 0 (the start) must be uninformative")
        if n_frames - 1 not in views:
            raise BadInput(where, "informative_views", f"must contain the last view {n_frames - 1}")
        similar = require(rec, "similar_categories", list, where)
        clean: list[str] = []
        for i, s in enumerate(similar):
            if not isinstance(s, str) or not s.strip():
                raise BadInput(where, f"similar_categories[{i}]", "must be a non-empty string")
            if s != rec["category"] and s not in clean:
                clean.append(s)
        if len(clean) < MIN_SIMILAR:
            raise BadInput(where, "similar_categories",
                           f"need at least {MIN_SIMILAR} categories other than the answer")
        return {"informative_views": views, "similar_categories": sorted(clean)}

    def labels_of(self, rec: dict[str, Any]) -> list[str]:
        sims = rec.get("similar_categories")
        extra = [s for s in sims if isinstance(s, str) and s.strip()] if isinstance(sims, list) \
            else []
        return super().labels_of(rec) + extra

    def build(self, ref: ItemRef, frames: list[Frame]) -> dict[str, Any]:
        p = ref.payload
        return {
            "category": p["category"],
            "start_frame": 0,
            "reference_frame": len(frames) - 1,
            "goal_frames": p["informative_views"],
            "metadata": {"informative_views": p["informative_views"],
                         "similar_categories": p["similar_categories"]},
        }
