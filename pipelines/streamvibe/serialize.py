"""Serialize approved candidates: causal stream, trajectory and pointwise records, allocation.

* **Causal stream** (App. B.2: "at time t, the record exposes only frames and user turns
  available by t"): ``steps[t]`` names the frame on screen at t (sampled at or before t) and the
  user turns that arrived in (t-1, t]; a consumer that replays steps in order never sees the
  future. The trajectory sample is that stream plus its annotations (§3.5 "Trajectory
  Evaluation runs the model continuously over the full video stream").
* **Pointwise** (§3.5: "samples positive and negative timestamps around annotated help points
  […] Gold History"): one row per evidence point (at the first decision step at or after its
  preferred time that is still inside the window, else the last step inside it) and one per
  designated negative probe, each with the gold history: user turns up to t and the gold
  responses of points decided before t.
* **Allocation** (Table 15, "Target balanced evaluation allocation"): per subtype at most its
  target, chosen round-robin across source collections in a seeded order so one collection
  cannot fill a subtype; the shortfall against each target is reported, never padded.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

from core.seeding import seed_bytes
from pipelines.streamvibe.normalize import NormalizedVideo
from schemas.streamvibe import SAMPLE

ANNOTATION_KEYS = [f.name for f in SAMPLE.fields
                   if f.name not in ("frames", "frame_times", "frame_pts", "steps", "review")]


def decision_time(p: dict[str, Any]) -> float:
    """The 1 FPS step at which a pointwise positive is asked (see module doc)."""
    t = math.ceil(p["preferred"] - 1e-9)
    if t <= p["end"] + 1e-9:
        return float(t)
    return float(math.floor(p["end"] + 1e-9))


def active_at(candidate: dict[str, Any], t: float) -> list[str]:
    """𝒜_t (§3.1): intents the user has made valid by t (the latest transition's active set)
    that are not yet fulfilled — "an intent remains active until all its evidence points are
    covered", and under gold history a point is covered at its decision time."""
    active: list[str] = []
    for x in candidate["transitions"]:
        if x["t"] <= t + 1e-9:
            active = list(x["active_after"])
    last: dict[str, float] = {}
    for p in candidate["evidence"]:
        last[p["intent_id"]] = max(last.get(p["intent_id"], -1.0), decision_time(p))
    return [i for i in active if last.get(i, float("inf")) >= t - 1e-9]


def steps_for(candidate: dict[str, Any], video: NormalizedVideo) -> list[dict[str, Any]]:
    steps = []
    turns = candidate["user_turns"]
    for k, t in enumerate(video.frame_times):
        new = [n for n, u in enumerate(turns)
               if (u["t"] <= t + 1e-9) and (k == 0 or u["t"] > t - 1 + 1e-9)]
        steps.append({"t": float(t), "frame": k, "new_turns": new,
                      "active_intents": active_at(candidate, t)})
    return steps


def sample_record(candidate: dict[str, Any], video: NormalizedVideo,
                  review: list[dict[str, Any]]) -> dict[str, Any]:
    rec = {k: candidate[k] for k in ANNOTATION_KEYS}
    rec["frames"] = [{"bytes": b, "path": f"{candidate['source_file']}#t={t:g}"}
                     for b, t in zip(video.frames, video.frame_times, strict=True)]
    rec["frame_times"] = list(video.frame_times)
    rec["frame_pts"] = list(video.frame_pts)
    rec["steps"] = steps_for(candidate, video)
    rec["review"] = review
    SAMPLE.validate(rec)
    return rec


def pointwise_records(candidate: dict[str, Any], n_frames: int) -> list[dict[str, Any]]:
    points = candidate["evidence"]
    asked = {p["id"]: decision_time(p) for p in points}

    def history(t: float) -> list[dict[str, Any]]:
        items = [(u["t"], 0, {"t": u["t"], "role": "user", "intent_id": u["intent_id"], "text": u["text"]})
                 for u in candidate["user_turns"] if u["t"] <= t + 1e-9]
        items += [(asked[p["id"]], 1, {"t": asked[p["id"]], "role": "assistant",
                                       "intent_id": p["intent_id"], "text": p["response"]})
                  for p in points if asked[p["id"]] < t - 1e-9]
        return [x for _, _, x in sorted(items, key=lambda z: (z[0], z[1], z[2]["intent_id"]))]

    rows = []
    probes = [(asked[p["id"]], "positive", p) for p in points]
    probes += [(n["t"], n["probe_type"], None) for n in candidate["negative_probes"]]
    for t, kind, p in sorted(probes, key=lambda z: (z[0], z[1])):
        rows.append({
            "id": f"{candidate['id']}@{t:g}" + (f"#{p['id']}" if p else ""),
            "sample_id": candidate["id"],
            "subtype": candidate["subtype"],
            "t": t,
            "frames_visible": min(n_frames, int(math.floor(t + 1e-9)) + 1),
            "should_respond": p is not None,
            "probe_type": kind,
            "evidence_id": p["id"] if p else "",
            "gold_response": p["response"] if p else "",
            "active_intents": active_at(candidate, t),
            "gold_history": history(t),
        })
    return rows


def allocate(candidates: list[dict[str, Any]], target: int, seed: int) -> tuple[list[str], list[str]]:
    """(selected ids, over-target ids) for one subtype: round-robin over collections, each in
    seeded order (``sha256(seed, id, "allocation")``)."""
    by_coll: dict[str, list[str]] = defaultdict(list)
    for c in candidates:
        by_coll[c["source_collection"]].append(c["id"])
    queues = {k: sorted(v, key=lambda i: seed_bytes(seed, i, "allocation")) for k, v in by_coll.items()}
    order: list[str] = []
    while any(queues.values()):
        for k in sorted(queues):
            if queues[k]:
                order.append(queues[k].pop(0))
    return sorted(order[:target]), sorted(order[target:])
