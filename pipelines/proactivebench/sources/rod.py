"""ROD — Realistic Occlusion Dataset (ProactiveBench §3.2, App. 0.A.1), read from a sequence manifest.

Each sample has exactly 14 frames of an occluder sliding across an object; the centre frame
(index 7) is the most occluded and is the start state (the authors' package uses
``first_image`` 7). Moving the occluder left decrements the index, right increments it, modulo
14 ("the environment is circular"), so seven moves either way from 7 reach frame 0 — the
reference ("after seven consecutive right or left movements ... the reference frame").
A category answer at the start frame is void (App. 0.A.1: "the first frame is completely
occluded"), recorded as ``void_frames``.
"""

from __future__ import annotations

from typing import Any

from core.errors import BadInput
from pipelines.common.sources import Frame, ItemRef
from pipelines.proactivebench.sources._manifest import ManifestReader, index_list, require

NUM_FRAMES = 14
START = 7
REFERENCE = 0
# Both extreme occluder positions (far left at 0, far right at 13) show the object.
DEFAULT_INFORMATIVE = [0, 13]


class RODReader(ManifestReader):
    """ROD sequences: 14 frames, start 7, reference 0, void at 7."""

    environment = "rod"

    def validate(self, rec: dict[str, Any], n_frames: int | None, where: str) -> dict[str, Any]:
        if n_frames != NUM_FRAMES:
            raise BadInput(where, "frames", f"expected {NUM_FRAMES} frames, got {n_frames}")
        occluder = require(rec, "occluding_object", str, where)
        informative = index_list(rec, "informative_frames", NUM_FRAMES, where,
                                 default=DEFAULT_INFORMATIVE)
        if START in informative:
            raise BadInput(where, "informative_frames",
                           f"frame {START} is the most occluded frame and cannot be informative")
        if REFERENCE not in informative:
            raise BadInput(where, "informative_frames",
                           f"must contain the reference frame {REFERENCE}")
        return {"occluding_object": occluder.strip(), "informative_frames": informative}

    def build(self, ref: ItemRef, frames: list[Frame]) -> dict[str, Any]:
        p = ref.payload
        return {
            "category": p["category"],
            "start_frame": START,
            "reference_frame": REFERENCE,
            "goal_frames": p["informative_frames"],
            "metadata": {"occluding_object": p["occluding_object"],
                         "informative_frames": p["informative_frames"],
                         "void_frames": [START]},
        }
