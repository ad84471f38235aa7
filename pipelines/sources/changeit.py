"""ChangeIt — object state-change videos (seed 000 App. 0.A.6), read from a sequence manifest.

Frames are the video at 1 FPS (ChangeIt annotates one label per second), either extracted
(``frames``) or decoded here from ``video`` at ``fps``. ``labels`` has one int per frame:
0 background, 1 initial state, 2 action (the state-modifying action), 3 end state.
``question_type`` is ``object`` (category = ``object``) or ``action`` (category = ``action``),
the two question pools of App. 0.A.6. The episode starts at the first frame ("the beginning of
a video tutorial ... typically uninformative"), so a first frame that already shows the asked
thing is rejected. Goal frames: for an action question the frames labelled 2; for an object
question every non-background frame (1, 2, 3 — the object is in view in all of them).
The reference is the middle frame of the longest run of goal frames (earliest on ties).
"""

from __future__ import annotations

from typing import Any

from pipelines.common.errors import BadInput
from pipelines.sources._manifest import ManifestReader, require
from pipelines.sources.base import Frame, ItemRef

BACKGROUND, INITIAL, ACTION, END = 0, 1, 2, 3
GOAL_LABELS = {"object": (INITIAL, ACTION, END), "action": (ACTION,)}


def goal_frames(labels: list[int], question_type: str) -> list[int]:
    return [i for i, lab in enumerate(labels) if lab in GOAL_LABELS[question_type]]


def reference_of(goals: list[int]) -> int:
    """Middle of the longest contiguous run of goal frames (earliest run on ties)."""
    runs: list[list[int]] = []
    for g in goals:
        if runs and g == runs[-1][-1] + 1:
            runs[-1].append(g)
        else:
            runs.append([g])
    best = max(runs, key=len)  # max keeps the first of equal-length runs
    return best[(len(best) - 1) // 2]


class ChangeItReader(ManifestReader):
    """ChangeIt videos with per-second state labels."""

    environment = "changeit"
    allow_video = True

    def validate(self, rec: dict[str, Any], n_frames: int | None, where: str) -> dict[str, Any]:
        qtype = require(rec, "question_type", str, where)
        if qtype not in GOAL_LABELS:
            raise BadInput(where, "question_type", f"{qtype!r} not in {sorted(GOAL_LABELS)}")
        obj = require(rec, "object", str, where)
        action = require(rec, "action", str, where)
        expected = obj if qtype == "object" else action
        if rec["category"] != expected:
            raise BadInput(where, "category", f"must equal the {qtype!r} field ({expected!r})")
        labels = require(rec, "labels", list, where)
        for i, lab in enumerate(labels):
            if isinstance(lab, bool) or lab not in (BACKGROUND, INITIAL, ACTION, END):
                raise BadInput(where, f"labels[{i}]", f"{lab!r} not in 0..3")
        if n_frames is not None:
            self._check_labels(labels, n_frames, qtype, where)
        return {"question_type": qtype, "object": obj, "action": action, "labels": labels}

    @staticmethod
    def _check_labels(labels: list[int], n: int, qtype: str, where: str) -> None:
        if len(labels) != n:
            raise BadInput(where, "labels", f"{len(labels)} labels for {n} frames (one per frame)")
        goals = goal_frames(labels, qtype)
        if not goals:
            raise BadInput(where, "labels", f"no frame shows the {qtype} "
                                            f"(labels {list(GOAL_LABELS[qtype])})")
        if goals[0] == 0:
            raise BadInput(where, "labels[0]", f"the first frame already shows the {qtype}; "
                                               "the start must be uninformative")

    def group_labels(self, payload: dict[str, Any]) -> list[tuple[str, str]]:
        return [("object", payload["object"]), ("action", payload["action"])]

    def labels_of(self, rec: dict[str, Any]) -> list[str]:
        return [v for v in (rec.get("object"), rec.get("action"))
                if isinstance(v, str) and v.strip()]

    def build(self, ref: ItemRef, frames: list[Frame]) -> dict[str, Any]:
        p = ref.payload
        where = p.get("video", f"manifest.jsonl:{p['line']}")
        self._check_labels(p["labels"], len(frames), p["question_type"], where)
        goals = goal_frames(p["labels"], p["question_type"])
        return {
            "category": p["category"],
            "start_frame": 0,
            "reference_frame": reference_of(goals),
            "goal_frames": goals,
            "metadata": {"question_type": p["question_type"], "object": p["object"],
                         "action": p["action"], "labels": p["labels"],
                         "type_vocabulary": p.get("type_vocabulary", [])},
        }
